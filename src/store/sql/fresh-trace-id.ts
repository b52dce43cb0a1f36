// A new transaction's trace_id (domain/trace-id.ts): drawn from the store's source, inserted
// under the primary key's uniqueness, drawn again when it was taken, TRACE_ID_TRIES draws at most
// and then a fault. Nothing is read before the insert: each draw is one statement
// (sql/dialect.ts insertUnlessKeyTaken, or reserveWithChange's own on PostgreSQL), so a sale
// costs the round trips it did when the database numbered its rows, and a draw taken costs one more.
//
// SQLite's group commit (store/group-commit.ts) changes nothing here: the units of a batch run
// one after the other on the one writer, each sees the rows of the units before it, and a taken
// id fails only its own statement, inside its unit's savepoint.
import { isDrawableTraceId, RANDOM_TRACE_ID_END, RANDOM_TRACE_ID_MIN, TRACE_ID_TRIES, type TraceIdSource } from '../../domain/trace-id.js';
import { ID_TAKEN } from './dialect.js';

/** Every draw of an insert was taken: a broken id source or a full range, never a merchant's doing. */
export class TraceIdsExhausted extends Error {
  constructor() {
    super(`no free trace_id in ${TRACE_ID_TRIES} draws: the id source repeats itself or its range is full`);
    this.name = 'TraceIdsExhausted';
  }
}

/** One draw of `source`, checked: a source that gives an id outside the range is a fault. */
export function drawTraceId(source: TraceIdSource): number {
  const trace_id = source.next();
  if (!isDrawableTraceId(trace_id)) {
    throw new Error(`the trace_id source gave ${trace_id}, outside [${RANDOM_TRACE_ID_MIN}, ${RANDOM_TRACE_ID_END})`);
  }
  return trace_id;
}

/**
 * Runs `one_try` with drawn trace_ids until one is not taken; answers what that try answered
 * (the row, or null when the idempotency key was taken).
 */
export async function withFreshTraceId<R>(
  source: TraceIdSource,
  one_try: (trace_id: number) => Promise<R | null | typeof ID_TAKEN>,
): Promise<R | null> {
  for (let draw = 0; draw < TRACE_ID_TRIES; draw += 1) {
    const outcome = await one_try(drawTraceId(source));
    if (outcome !== ID_TAKEN) return outcome;
  }
  throw new TraceIdsExhausted();
}
