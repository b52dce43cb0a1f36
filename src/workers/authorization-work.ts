// Due work of authorizations (decisions §16), run by each due-work pass (workers/due-work.ts):
// - a capture or void whose answer the gateway did not get (a time-out, a crash between request
//   and answer), or that its processor confirms later and whose confirmation has not come: the
//   processor is asked (a lookup) before anything is decided, on the lookup schedule;
// - an authorization neither captured nor voided within PAYGATE_AUTHORIZATION_TTL_HOURS: voided
//   by the gateway, notified.
// Everything is found in the database, so another instance or a restart picks it up.
import type { AuthorizationActionRow } from '../domain/authorization-record.js';
import { actOnAuthorization, completeAction, settleFromLookup } from '../operations/authorization.js';
import { lookupRequestOf } from '../operations/processor-lookup.js';
import type { AskLater, DueWorkDeps } from './due-work.js';

/** Actions asked about at most per pass, and authorizations voided at most per pass. */
const BATCH = 20;

/** An action the gateway stopped asking about is asked about again after this (an operator settles it meanwhile). */
const GIVEN_UP_WAIT_MS = 30 * 86_400_000;

export async function runAuthorizationWork(deps: DueWorkDeps, ask_later: AskLater, now_ms: number): Promise<number> {
  return (await settleUnsettledActions(deps, now_ms)) + (await voidExpired(deps, ask_later, now_ms));
}

/**
 * Actions left `requested` longer than any processor call may take (stuck_processing_seconds), or
 * `accepted` with no confirmation: the n-th question waits processor_lookup_seconds[n] after the
 * one before; after processor_lookup_max_age_seconds the action is left to the operator (logged).
 */
async function settleUnsettledActions(deps: DueWorkDeps, now_ms: number): Promise<number> {
  const schedule = deps.config.schedules;
  const actions = await deps.store.authorizations.listUnsettled(now_ms - schedule.stuck_processing_seconds * 1000, BATCH);
  let settled = 0;
  for (const action of actions) {
    const waits = schedule.processor_lookup_seconds;
    if (action.attempts > 0 && action.updated_at_ms + waits[Math.min(action.attempts - 1, waits.length - 1)]! * 1000 > now_ms) continue;
    if (now_ms - action.requested_at_ms >= schedule.processor_lookup_max_age_seconds * 1000) {
      deps.logger.error(
        { trace_id: action.trace_id, action: action.action, state: action.state },
        'the processor gave no final answer to a capture or void within PAYGATE_PROCESSOR_LOOKUP_MAX_AGE_SECONDS; left to the operator',
      );
      // Out of the sweep's list for a month (its listing reads updated_at_ms), so it is logged once, not on every pass.
      await deps.store.authorizations.updateAction(action.trace_id, action.state, { updated_at_ms: now_ms + GIVEN_UP_WAIT_MS });
      continue;
    }
    if ((await askAbout(deps, action, now_ms)) === 'settled') settled += 1;
  }
  return settled;
}

async function askAbout(deps: DueWorkDeps, action: AuthorizationActionRow, now_ms: number): Promise<'settled' | 'waiting'> {
  const row = await deps.store.transactions.get(action.trace_id);
  const found = row ? await deps.connectors.forGatewayId(deps.store, row.gateway_id) : null;
  if (!row || !found) {
    deps.logger.error(
      { trace_id: action.trace_id },
      "capture or void unsettled, and its gateway's connector does not run here; left to the operator",
    );
    await deps.store.authorizations.updateAction(action.trace_id, action.state, { attempts: action.attempts + 1, updated_at_ms: now_ms });
    return 'waiting';
  }
  // Claimed like a lease before asking: another instance's pass leaves it alone meanwhile.
  const claimed = await deps.store.authorizations.updateAction(action.trace_id, action.state, {
    attempts: action.attempts + 1,
    updated_at_ms: now_ms,
  });
  if (!claimed) return 'waiting';
  const current: AuthorizationActionRow = { ...action, attempts: action.attempts + 1, updated_at_ms: now_ms };
  const lookup = await found.connector.lookup(lookupRequestOf(row, null));
  if (lookup.kind !== 'found') {
    deps.logger.warn(
      { trace_id: row.trace_id, lookup: lookup.kind },
      'capture or void: the processor could not say yet; asking again later',
    );
    return 'waiting';
  }
  return settleFromLookup(deps, found.connector, row, current, lookup.payment);
}

/**
 * Authorizations past PAYGATE_AUTHORIZATION_TTL_HOURS: voided like an agent's void, by the gateway.
 * A processor that refuses the void (its own hold lapsed first, or someone captured or voided it
 * there) is asked what became of the authorization, and that is applied: captured stays captured,
 * anything else is cancelled, since it can no longer be captured. One that cannot be voided now
 * (its connector does not run here) is tried again after the longest lookup wait.
 */
async function voidExpired(deps: DueWorkDeps, ask_later: AskLater, now_ms: number): Promise<number> {
  const expired = await deps.store.authorizations.listExpired(now_ms - deps.config.schedules.authorization_ttl_seconds * 1000, BATCH);
  let voided = 0;
  for (const row of expired) {
    if (!ask_later.due(row.trace_id, now_ms)) continue;
    const outcome = await actOnAuthorization(deps, {
      merchant_id: null,
      trace_id: row.trace_id,
      action: 'void',
      amount_minor: null,
      origin: 'expiry',
      agent: null,
    });
    if (outcome.kind === 'processed') {
      voided += 1;
    } else if (outcome.kind === 'refused' && outcome.reason === 'processor_refused') {
      const found = await deps.connectors.forGatewayId(deps.store, row.gateway_id);
      const lookup = found ? await found.connector.lookup(lookupRequestOf(row, null)) : null;
      const hold = lookup?.kind === 'found' ? (lookup.payment?.hold ?? null) : null;
      const captured_minor = hold === 'captured' && lookup?.kind === 'found' ? (lookup.payment?.captured_minor ?? row.amount_minor) : null;
      await deps.store.transaction(async (tx) => {
        const locked = await tx.transactions.lock(row.trace_id);
        if (locked) {
          await completeAction(
            tx,
            locked,
            null,
            captured_minor,
            null,
            `expiry; the processor refused the void: ${outcome.error_details}`.slice(0, 200),
            deps.clock.now_ms(),
          );
        }
      });
      voided += 1;
    } else {
      deps.logger.warn({ trace_id: row.trace_id, outcome: outcome.kind }, 'expired authorization not voided; trying again later');
      ask_later.wait(row.trace_id, now_ms, deps.config.schedules.processor_lookup_seconds.at(-1)! * 1000);
    }
  }
  return voided;
}
