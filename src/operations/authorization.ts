// The capture and the void of an authorization (decisions §16), by the merchant's API call, an
// agent in the back office, or the gateway when the authorization expires. The life of one is
// the life of a sale's request, for an action on an existing transaction:
//   1. reserve: the action's row (authorization_actions, keyed by the authorization) is written
//      `requested` before the processor is asked, so a second capture or void of the same
//      authorization, from anyone, finds it and never reaches the processor;
//   2. ask the processor, outside any database transaction, with an idempotency key that is the
//      same on every attempt of this action;
//   3. settle: one database transaction moves the authorization through the state machine
//      (captured: `approved` with the captured amount; voided: `cancelled`), notified, and marks
//      the action done. A processor that confirms later (Checkout.com's 202) leaves it `accepted`
//      until its webhook or a lookup says so; an outcome the gateway did not get (a time-out, a
//      crash) leaves it `requested`, and the due-work sweep asks the processor before deciding.
import { randomBytes } from 'node:crypto';
import type { AuthorizationActionResult, Connector, PaymentState } from '../connectors/connector.js';
import type { AuthorizationActionKind, AuthorizationActionOrigin, AuthorizationActionRow } from '../domain/authorization-record.js';
import { money } from '../domain/backoffice-format.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { TransactionStatus, TransactionType } from '../domain/transaction-state.js';
import type { UnitOfWork } from '../store/store.js';
import { changeStatus } from '../transitions/transaction.js';
import type { OperationDeps } from './deps.js';
import { type TransactionAnswer, transactionAnswer } from './reservation.js';

export interface AuthorizationActionInput {
  /** The merchant whose request it is; null for an operator's agent or the expiry (any merchant's authorization). */
  readonly merchant_id: string | null;
  readonly trace_id: number;
  readonly action: AuthorizationActionKind;
  /** A capture's amount; null: the whole authorized amount (and always for a void). */
  readonly amount_minor: number | null;
  readonly origin: Exclude<AuthorizationActionOrigin, 'processor'>;
  /** The agent's name, for an agent's action. */
  readonly agent: string | null;
}

/** Why a capture or void is refused, nothing changed (decisions §16 "Refusals"). */
export type AuthorizationRefusal =
  /** Not an `authorized` authorization: a sale, or an authorization captured, voided, declined... */
  | { readonly reason: 'not_authorized'; readonly transaction_type: TransactionType; readonly status: TransactionStatus }
  | { readonly reason: 'exceeds_authorized'; readonly authorized_minor: number }
  /** Another action of the authorization came first (a capture of another amount, or the other action). */
  | { readonly reason: 'other_action'; readonly action: AuthorizationActionKind; readonly amount_minor: number }
  /** The processor refused it: nothing happened there, and the authorization stays authorized. */
  | { readonly reason: 'processor_refused'; readonly error_code: string; readonly error_details: string };

export type AuthorizationActionOutcome =
  | {
      readonly kind: 'processed';
      readonly answer: TransactionAnswer;
      readonly replayed: boolean;
      /**
       * The answer is this request's own committed write (the action done, read in its transaction):
       * on disk once the operation returned, so it need not wait for later commits of others. False
       * where it is read afterwards (accepted, unknown, asked again), which may show others' commits.
       */
      readonly own_commit: boolean;
    }
  /** Absent, or another merchant's: the same answer for both. */
  | { readonly kind: 'reference_not_found' }
  | ({ readonly kind: 'refused' } & AuthorizationRefusal)
  /** The same action is still being asked of the processor by another request. */
  | { readonly kind: 'in_progress' }
  /** The authorization's connector does not run here, or cannot capture (a sandbox one on a live instance). */
  | { readonly kind: 'no_processor' };

/** What the refusal says, for the API's description and the back office's message. */
export function describeAuthorizationRefusal(action: AuthorizationActionKind, refusal: AuthorizationRefusal, trace_id: number): string {
  const verb = action === 'capture' ? 'Capture refused' : 'Void refused';
  switch (refusal.reason) {
    case 'not_authorized':
      return `${verb}: transaction ${trace_id} is not an authorized authorization (transaction_type ${refusal.transaction_type}, status ${refusal.status})`;
    case 'exceeds_authorized':
      return `${verb}: amount exceeds the authorized amount (${refusal.authorized_minor})`;
    case 'other_action':
      return refusal.action === 'capture'
        ? `${verb}: the authorization was already captured for ${refusal.amount_minor}`
        : `${verb}: the authorization was already voided`;
    case 'processor_refused':
      // The connectors' own texts already say so ("Capture refused by the processor (HTTP 422: ...)").
      return (
        /refused by the processor/i.test(refusal.error_details)
          ? refusal.error_details
          : `${verb} by the processor: ${refusal.error_details}`
      ).slice(0, 255);
  }
}

/** Polling step of waiting for the same action of another request. */
const WAIT_STEP_MS = 25;

/** What acting on an authorization needs: the merchant's request, an agent's, and the due-work's expiry all have it. */
export type AuthorizationDeps = Pick<OperationDeps, 'store' | 'clock' | 'config'> & {
  readonly connectors: Pick<OperationDeps['connectors'], 'forGatewayId'>;
};

export async function actOnAuthorization(deps: AuthorizationDeps, input: AuthorizationActionInput): Promise<AuthorizationActionOutcome> {
  const row = await deps.store.transactions.get(input.trace_id);
  if (!row || (input.merchant_id !== null && row.merchant_id !== input.merchant_id)) return { kind: 'reference_not_found' };
  const deadline_ms = Date.now() + deps.config.limits.idempotency_wait_ms;
  for (;;) {
    const existing = await deps.store.authorizations.getAction(row.trace_id);
    if (existing) {
      const same =
        existing.action === input.action &&
        (input.action === 'void' || existing.amount_minor === (input.amount_minor ?? existing.authorized_minor));
      if (!same) return { kind: 'refused', reason: 'other_action', action: existing.action, amount_minor: existing.amount_minor };
      // The same action asked again: answered from the authorization as it now is, never asked twice.
      if (existing.state !== 'requested')
        return { kind: 'processed', answer: await currentAnswer(deps, row.trace_id), replayed: true, own_commit: false };
      if (Date.now() >= deadline_ms) return { kind: 'in_progress' };
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
      continue;
    }
    const current = (await deps.store.transactions.get(row.trace_id)) ?? row;
    if (current.transaction_type !== 'authorize' || current.status !== 'authorized') {
      // Captured or voided by a request that reserved its action after this one looked: answer as that action.
      if (current.transaction_type === 'authorize' && (await deps.store.authorizations.getAction(row.trace_id))) continue;
      return { kind: 'refused', reason: 'not_authorized', transaction_type: current.transaction_type, status: current.status };
    }
    const amount_minor = input.action === 'capture' ? (input.amount_minor ?? current.amount_minor) : current.amount_minor;
    if (amount_minor > current.amount_minor)
      return { kind: 'refused', reason: 'exceeds_authorized', authorized_minor: current.amount_minor };
    const connector = (await deps.connectors.forGatewayId(deps.store, current.gateway_id))?.connector;
    if (!connector?.authorizations || current.psp_transaction_id === null) return { kind: 'no_processor' };
    const now_ms = deps.clock.now_ms();
    const action: AuthorizationActionRow = {
      trace_id: current.trace_id,
      action: input.action,
      authorized_minor: current.amount_minor,
      amount_minor,
      state: 'requested',
      origin: input.origin,
      agent: input.agent,
      // The gateway and the transaction (unique across installations sharing a processor account),
      // and a nonce of this reservation: every attempt of this action repeats it, and an action
      // asked again after the processor refused one is a new request there, not a replay of the refusal.
      idempotency_key: `paygate-${current.gateway_id}-${current.trace_id}-${input.action}-${randomBytes(4).toString('hex')}`,
      psp_action_id: null,
      attempts: 0,
      requested_at_ms: now_ms,
      updated_at_ms: now_ms,
    };
    const { attempts: _, ...reserved } = action;
    // Lost to another request reserving at the same moment: read what it reserved.
    if (!(await deps.store.authorizations.reserveAction(reserved))) continue;
    const result = await askProcessor(connector, current, action);
    return settleAction(deps, action, result, 'processor answered');
  }
}

/** Sends the action to the processor (again, with the same idempotency key, when a lookup found it not done). */
export function askProcessor(
  connector: Connector,
  authorization: TransactionRow,
  action: AuthorizationActionRow,
): Promise<AuthorizationActionResult> {
  const authorizations = connector.authorizations;
  if (!authorizations || authorization.psp_transaction_id === null) {
    return Promise.resolve({ kind: 'unknown', reason: 'the connector cannot capture or void here' });
  }
  const request = {
    trace_id: authorization.trace_id,
    reference: authorization.cashier_order_id ?? authorization.order_id,
    psp_transaction_id: authorization.psp_transaction_id,
    authorized_minor: action.authorized_minor,
    currency: authorization.currency,
    idempotency_key: action.idempotency_key,
  };
  return action.action === 'capture'
    ? authorizations.capture({ ...request, amount_minor: action.amount_minor })
    : authorizations.void(request);
}

/**
 * Applies what the processor answered to an action: done moves the authorization; accepted waits
 * for the confirmation; refused gives the authorization back (the action row is removed, so it may
 * be captured or voided again); unknown leaves it for the sweep.
 */
export async function settleAction(
  deps: Pick<OperationDeps, 'store' | 'clock'>,
  action: AuthorizationActionRow,
  result: AuthorizationActionResult,
  source: string,
): Promise<AuthorizationActionOutcome> {
  const now_ms = deps.clock.now_ms();
  if (result.kind === 'refused') {
    await deps.store.transaction(async (tx) => {
      await tx.authorizations.deleteAction(action.trace_id, action.state);
    });
    return { kind: 'refused', reason: 'processor_refused', error_code: result.error_code, error_details: result.error_details };
  }
  if (result.kind === 'unknown') {
    await deps.store.authorizations.updateAction(action.trace_id, action.state, { updated_at_ms: now_ms });
    return { kind: 'processed', answer: await currentAnswer(deps, action.trace_id), replayed: false, own_commit: false };
  }
  if (result.kind === 'accepted') {
    if (action.state === 'requested') {
      await deps.store.authorizations.updateAction(action.trace_id, 'requested', {
        state: 'accepted',
        psp_action_id: result.psp_action_id,
        updated_at_ms: now_ms,
      });
    }
    return { kind: 'processed', answer: await currentAnswer(deps, action.trace_id), replayed: false, own_commit: false };
  }
  const answer = await deps.store.transaction(async (tx) => {
    const row = await tx.transactions.lock(action.trace_id);
    if (!row) throw new Error(`authorization ${action.trace_id} vanished`);
    const current = (await tx.authorizations.getAction(action.trace_id)) ?? action;
    await completeAction(tx, row, current, action.action === 'capture' ? action.amount_minor : null, result.psp_action_id, source, now_ms);
    return transactionAnswer((await tx.transactions.get(action.trace_id)) ?? row);
  });
  return { kind: 'processed', answer, replayed: false, own_commit: true };
}

/**
 * The authorization's capture (captured_minor) or void (captured_minor null) done at the processor,
 * in the caller's transaction: the status moves (notified) and the action is marked done; a
 * capture or void made outside the gateway (no action of ours) is recorded as the processor's.
 * Nothing changes when the authorization is no longer `authorized` (the webhook after the
 * answer, a replayed event).
 */
export async function completeAction(
  tx: UnitOfWork,
  row: TransactionRow,
  action: AuthorizationActionRow | null,
  captured_minor: number | null,
  psp_action_id: string | null,
  source: string,
  now_ms: number,
): Promise<'applied' | 'unchanged'> {
  if (row.transaction_type !== 'authorize' || row.status !== 'authorized') return 'unchanged';
  const kind: AuthorizationActionKind = captured_minor === null ? 'void' : 'capture';
  const amount_minor = captured_minor === null ? row.amount_minor : Math.min(captured_minor, row.amount_minor);
  if (action === null) {
    await tx.authorizations.reserveAction({
      trace_id: row.trace_id,
      action: kind,
      authorized_minor: row.amount_minor,
      amount_minor,
      state: 'done',
      origin: 'processor',
      agent: null,
      // Made at the processor, not by us: never sent anywhere.
      idempotency_key: `processor-${kind}-${row.trace_id}`,
      psp_action_id,
      requested_at_ms: now_ms,
      updated_at_ms: now_ms,
    });
  } else if (action.state !== 'done') {
    await tx.authorizations.updateAction(row.trace_id, action.state, {
      state: 'done',
      psp_action_id: psp_action_id ?? action.psp_action_id,
      updated_at_ms: now_ms,
    });
  }
  const who = action === null ? 'at the processor' : action.origin === 'agent' ? `by agent ${action.agent ?? ''}` : `by ${action.origin}`;
  if (kind === 'capture') {
    const charge_amount_minor =
      row.charge_currency === row.currency ? amount_minor : Math.round((row.charge_amount_minor * amount_minor) / row.amount_minor);
    const changed = await changeStatus(
      tx,
      row,
      {
        to: 'approved',
        // In the currency's major units, as every page shows an amount (the status history is read there).
        reason: `captured ${money(amount_minor, row.currency)} of ${money(row.amount_minor, row.currency)} ${who} (${source})`,
        patch: {
          amount_minor,
          charge_amount_minor,
          error_code: '0',
          error_details: amount_minor < row.amount_minor ? 'Captured in part; the rest released' : 'Captured',
        },
      },
      now_ms,
    );
    return changed.kind === 'changed' ? 'applied' : 'unchanged';
  }
  const changed = await changeStatus(
    tx,
    row,
    {
      to: 'cancelled',
      patch: { error_details: action?.origin === 'expiry' ? 'Voided: the authorization expired' : 'Voided' },
      reason:
        action?.origin === 'expiry' ? `voided at its expiry (PAYGATE_AUTHORIZATION_TTL_HOURS) (${source})` : `voided ${who} (${source})`,
    },
    now_ms,
  );
  return changed.kind === 'changed' ? 'applied' : 'unchanged';
}

/**
 * What a lookup says of an action the gateway did not get the answer to (or that the processor
 * confirms later): captured or voided settles it; an authorization still open is asked again
 * (the same idempotency key, so a capture that did reach the processor is not made twice) when
 * the action was never confirmed taken; an accepted one waits.
 */
export async function settleFromLookup(
  deps: Pick<OperationDeps, 'store' | 'clock' | 'logger'>,
  connector: Connector,
  row: TransactionRow,
  action: AuthorizationActionRow,
  payment: PaymentState | undefined,
): Promise<'settled' | 'waiting'> {
  const hold = payment?.hold ?? null;
  if (hold === 'captured' || hold === 'voided') {
    if ((hold === 'captured') !== (action.action === 'capture')) {
      deps.logger.error(
        { trace_id: row.trace_id, asked: action.action, processor: hold },
        'the processor did otherwise than the gateway asked of the authorization: applying what the processor says',
      );
    }
    const captured_minor = hold === 'captured' ? (payment?.captured_minor ?? action.amount_minor) : null;
    const now_ms = deps.clock.now_ms();
    await deps.store.transaction(async (tx) => {
      const locked = await tx.transactions.lock(row.trace_id);
      if (locked)
        await completeAction(
          tx,
          locked,
          (await tx.authorizations.getAction(row.trace_id)) ?? action,
          captured_minor,
          null,
          'lookup',
          now_ms,
        );
    });
    return 'settled';
  }
  if (action.state === 'accepted') return 'waiting';
  const outcome = await settleAction(deps, action, await askProcessor(connector, row, action), 'asked again after a lookup');
  return outcome.kind === 'processed' && (await deps.store.authorizations.getAction(row.trace_id))?.state !== 'done'
    ? 'waiting'
    : 'settled';
}

async function currentAnswer(deps: Pick<OperationDeps, 'store'>, trace_id: number): Promise<TransactionAnswer> {
  const row = await deps.store.transactions.get(trace_id);
  if (!row) throw new Error(`authorization ${trace_id} vanished`);
  return transactionAnswer(row);
}
