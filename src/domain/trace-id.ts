// What a trace_id is made of (issue 30 item 7). The spec's trace_id is an int(11) that merchants
// and their customers see (the cashier's "Reference", every answer and notification). Handed out
// in sequence, two of a merchant's own payments told it how many payments every merchant made in
// between. A new transaction's trace_id is therefore drawn at random, by a CSPRNG, from a range
// no sequential id of an older release reaches; the store inserts it under the primary key's
// uniqueness and draws again when it was taken (store/sql/fresh-trace-id.ts).
//
//   1 … 999 999 999               sequential ids of releases before migration 0024 (which
//                                 refuses to run on a database holding one at or above 10^9)
//   1 000 000 000 … 1 999 999 999 new transactions: 10^9 ids, each equally likely
//   2 000 000 000 … 2 147 483 647 never a transaction's: the endpoint checker's made-up trace_ids
//                                 (operations/endpoint-check.ts), which must not name a real one
//
// Every trace_id stays a positive integer that fits a signed 32-bit int (int(11)).
import { randomInt } from 'node:crypto';

/** The lowest trace_id a new transaction gets: above every sequential id (migration 0024 checks it). */
export const RANDOM_TRACE_ID_MIN = 1_000_000_000;
/** One above the highest trace_id a new transaction gets. */
export const RANDOM_TRACE_ID_END = 2_000_000_000;
/** The top of int(11): the highest trace_id anything may carry. */
export const TRACE_ID_MAX = 2_147_483_647;
/**
 * Draws of one insert at most before it is given up as a fault. A draw is taken with the chance
 * rows / 10^9 (1 % at ten million transactions), so eight in a row taken means a broken source,
 * not bad luck.
 */
export const TRACE_ID_TRIES = 8;

/** Where new trace_ids come from; the store is given one (tests give one that repeats itself). */
export interface TraceIdSource {
  /** A candidate trace_id in [RANDOM_TRACE_ID_MIN, RANDOM_TRACE_ID_END). */
  next(): number;
}

/** The gateway's source: uniform over the range, from Node's CSPRNG (crypto.randomInt rejects the modulo bias). */
export const randomTraceIds: TraceIdSource = Object.freeze({
  next: () => randomInt(RANDOM_TRACE_ID_MIN, RANDOM_TRACE_ID_END),
});

/** Whether `trace_id` is one a source may hand out; the store refuses any other before inserting. */
export function isDrawableTraceId(trace_id: number): boolean {
  return Number.isSafeInteger(trace_id) && trace_id >= RANDOM_TRACE_ID_MIN && trace_id < RANDOM_TRACE_ID_END;
}
