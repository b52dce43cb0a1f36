// A card sale (spec §4.1 variants A and B): choose the gateway, reserve the idempotency key,
// ask the gateway's connector, apply its result through the state machine. A soft decline or a
// processor error is tried on the merchant's next routing candidate (the cascade, domain/routing.ts):
// each attempt is a transaction of its own, with its own trace_id, under the merchant's order_id;
// the merchant is answered, and notified of, the attempt that ends it.
import { randomBytes } from 'node:crypto';
import type { Connector, Customer } from '../connectors/connector.js';
import { cardBrand, type CardData, formatExpiry } from '../domain/cards.js';
import type { Gateway, GatewayRefusal, Merchant } from '../domain/merchants.js';
import { cascadable } from '../domain/routing.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { NewTransactionRow } from '../store/schema.js';
import { storeWithin, type UnitOfWork, WritesNotHeld } from '../store/store.js';
import type { OperationDeps } from './deps.js';
import { routePayment } from './gateway-choice.js';
import { answerForExisting, type CascadableResult, cascadeTo, finish, requestRow, reserve, type TransactionAnswer } from './lifecycle.js';
import { panFingerprint, vaultCard } from './card-vault.js';
import { processorReturnUrls } from './processor-return.js';

export interface Identity {
  readonly kind: 'application_key' | 'frontend';
  readonly value: string;
}

export interface SaleInput {
  readonly merchant: Merchant;
  readonly identity: Identity;
  readonly api_version: string;
  readonly order_id: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly card: CardData;
  /** The cardholder as the request describes them, passed to the processor. */
  readonly customer: Customer;
  readonly pin: string;
  readonly gateway: string | undefined;
  /** null for a merchant-initiated charge (a subscription renewal): nobody returns anywhere. */
  readonly return_url: string | null;
  readonly notification_url: string;
  readonly request_fingerprint: string;
  readonly variables: Readonly<Record<string, string>>;
  readonly initiated_by: 'customer' | 'merchant';
  /** See CardSaleRequest.mit_retry. */
  readonly mit_retry: boolean;
  /** Set by the hosted cashier: the session the sale is made in (docs/cashier.md). */
  readonly cashier?: CashierLink;
  /** `authorize`: the processor holds the funds until a capture or a void (decisions §16); absent: a sale. */
  readonly transaction_type?: 'sale' | 'authorize';
}

/** The columns that tie a transaction to the cashier session it was made in. */
export type CashierLink = Required<Pick<NewTransactionRow, 'cashier_session_id' | 'cashier_order_id' | 'cashier_auth_token'>>;

export type SaleOutcome =
  | {
      readonly kind: 'processed';
      readonly answer: TransactionAnswer;
      readonly replayed: boolean;
      /**
       * The answer is what this request's own last commit wrote, and that commit was on disk before
       * the sale returned: whatever it read before was, too (Store.durable). False when it was read
       * from another request's commit (a replay, a webhook that settled the attempt meanwhile).
       */
      readonly own_commit: boolean;
    }
  | { readonly kind: 'duplicate_order' }
  | { readonly kind: 'in_progress' }
  | { readonly kind: 'no_gateway'; readonly refusal: GatewayRefusal };

/** Thrown inside the one unit of an in-process sale when its key was taken meanwhile: the sale goes the usual way. */
class KeyTakenMeanwhile extends Error {}

type Routed = Extract<Awaited<ReturnType<typeof routePayment>>, { kind: 'routed' }>;

export async function processSale(deps: OperationDeps, input: SaleInput): Promise<SaleOutcome> {
  const transaction_type = input.transaction_type ?? 'sale';
  const routing = await routePayment(
    deps,
    input.merchant,
    { currency: input.currency, amount_minor: input.amount_minor, card: input.card },
    input.gateway,
    transaction_type === 'authorize' ? 'authorize_capture' : input.initiated_by === 'merchant' ? 'merchant_initiated' : null,
  );
  if (routing.kind === 'refused') return { kind: 'no_gateway', refusal: routing.refusal };
  // A connector that decides in this process (the sandbox), with no cascade to a processor behind
  // it, leaves nothing to ask after a crash, so the reservation, the decision and the finish may be
  // written together: the store holds them and writes the row once, in its final status, in one
  // commit (Store.holdWrites: one statement on PostgreSQL, one group-commit unit on SQLite). On a
  // store that commits in groups (SQLite) a key already taken (a replay) is answered from the row
  // just read first, without a transaction, as a refund's retry is (refund.ts), and what the unit
  // cannot hold (a challenge's due work, a cashier order) is still one transaction, one commit
  // unit instead of three. Elsewhere that, and a key taken meanwhile, goes the usual way, which
  // may wait for a twin.
  if (routing.connector.decides_in_process && routing.alternatives.length === 0) {
    const together = await saleInOneUnit(deps, input, transaction_type, routing);
    if (together !== null) return together;
  }
  return saleAttempts(deps, input, transaction_type, routing, false);
}

/** processSale's in-process sale written as one unit (see there); null: go the usual way. */
async function saleInOneUnit(
  deps: OperationDeps,
  input: SaleInput,
  transaction_type: 'sale' | 'authorize',
  routing: Routed,
): Promise<SaleOutcome | null> {
  const attempts = (uow: UnitOfWork) =>
    saleAttempts({ ...deps, store: storeWithin(deps.store, uow) }, input, transaction_type, routing, true);
  const not_together = (error: unknown) => {
    if (error instanceof KeyTakenMeanwhile || error instanceof WritesNotHeld) return null;
    throw error;
  };
  if (deps.store.groups_commits) {
    const taken = await deps.store.transactions.findByKey(input.merchant.merchant_id, transaction_type, input.order_id);
    if (taken !== null) {
      const existing = await answerForExisting(deps, taken, input.request_fingerprint);
      return existing.kind === 'replay' ? { kind: 'processed', answer: existing.answer, replayed: true, own_commit: false } : existing;
    }
  }
  // Elsewhere no look-up first: a replay's held row finds its key taken when written.
  const held = deps.store.holdWrites ? await deps.store.holdWrites(attempts).catch(not_together) : null;
  if (held !== null || !deps.store.groups_commits) return held;
  return deps.store.transaction(attempts).catch(not_together);
}

/**
 * Reserve, ask the connector (and the next gateways of the cascade), finish. `in_one_transaction`:
 * `deps.store` is an open transaction or a held unit (storeWithin), in which nobody may wait for a
 * twin request.
 */
async function saleAttempts(
  deps: OperationDeps,
  input: SaleInput,
  transaction_type: 'sale' | 'authorize',
  routing: Routed,
  in_one_transaction: boolean,
): Promise<SaleOutcome> {
  const { gateway, connector } = routing;
  const now_ms = deps.clock.now_ms();
  const merchant_id = input.merchant.merchant_id;
  const reservation = await reserve(
    deps,
    requestRow(
      input,
      {
        transaction_type,
        gateway_id: gateway.gateway_id,
        payment_processor: connector.name,
        payment_method: 'card',
        created_at_ms: now_ms,
      },
      {
        card_masked: input.card.masked,
        card_brand: cardBrand(input.card.pan),
        card_exp: formatExpiry(input.card.expiry),
        card_fingerprint: panFingerprint(deps.sealer, input.card.pan),
      },
    ),
    { wait_for_twin: !in_one_transaction },
  );
  if (in_one_transaction && reservation.kind !== 'reserved') throw new KeyTakenMeanwhile();
  if (reservation.kind === 'replay') return { kind: 'processed', answer: reservation.answer, replayed: true, own_commit: false };
  if (reservation.kind === 'duplicate_order' || reservation.kind === 'in_progress') return reservation;
  if (reservation.kind === 'refused_by_guard') throw new Error('a sale reservation has no guard to refuse it');

  let row = reservation.row;
  let current = { gateway, connector };
  const next_gateways = [...routing.alternatives];
  for (;;) {
    const result = await current.connector.sale({
      trace_id: row.trace_id,
      reference: input.cashier?.cashier_order_id ?? input.order_id,
      merchant_id,
      amount_minor: input.amount_minor,
      currency: input.currency,
      card: input.card,
      customer: input.customer,
      initiated_by: input.initiated_by,
      mit_retry: input.mit_retry,
      return_to: input.return_url === null ? null : processorReturnUrls(deps, row.trace_id),
      capture: transaction_type === 'sale',
    });
    const next = row.cascade_level < deps.config.limits.cascade_max_retries && cascadable(result) ? nextUsable(deps, next_gateways) : null;
    if (next) {
      const attempt = await cascadeTo(
        deps,
        row,
        result as CascadableResult,
        cascadeRow(row, next.gateway, next.connector, deps.clock.now_ms()),
      );
      if (attempt.kind === 'attempt') {
        row = attempt.row;
        current = next;
        continue;
      }
      // The attempt was settled meanwhile (its processor's webhook): the merchant gets what it says.
      return { kind: 'processed', answer: attempt.answer, replayed: false, own_commit: false };
    }
    // The card is kept only if the sale can still be approved; its token is shown once approved.
    const answer = await finish(deps, row, result, current.connector, {
      vault: (tx) => vaultCard(tx, deps.sealer, merchant_id, input.pin, input.card, now_ms),
    });
    return { kind: 'processed', answer, replayed: false, own_commit: true };
  }
}

/** The next candidate whose connector can be built here; the ones it skips are dropped. */
function nextUsable(deps: OperationDeps, gateways: Gateway[]): { readonly gateway: Gateway; readonly connector: Connector } | null {
  while (gateways.length > 0) {
    const gateway = gateways.shift()!;
    const connector = deps.connectors.forGateway(gateway);
    if (connector) return { gateway, connector };
  }
  return null;
}

/**
 * A cascade attempt's row: the first attempt's request on another gateway, with its own trace_id
 * and an internal order_id (longer than a merchant's may be, so it never meets one); notified and
 * answered with the merchant's order_id, the cascade level and its first attempt.
 */
function cascadeRow(previous: TransactionRow, gateway: Gateway, connector: Connector, now_ms: number): NewTransactionRow {
  const root = previous.cascade_root ?? previous.trace_id;
  const level = previous.cascade_level + 1;
  const { trace_id: _, ...copied } = previous;
  return {
    ...copied,
    order_id: `cascade-attempt:${root}:${level}:${randomBytes(16).toString('hex')}`,
    cashier_order_id: previous.cashier_order_id ?? previous.order_id,
    cascade_root: root,
    cascade_level: level,
    gateway_id: gateway.gateway_id,
    payment_processor: connector.name,
    status: 'pending',
    psp_transaction_id: null,
    error_code: null,
    error_details: null,
    redirect_url: null,
    answer_json: null,
    card_token: null,
    challenge_token_hash: null,
    challenge_expires_at_ms: null,
    challenge_mode: null,
    charge_amount_minor: previous.amount_minor,
    charge_currency: previous.currency,
    refund_reserved_minor: 0,
    created_at_ms: now_ms,
    updated_at_ms: now_ms,
  };
}
