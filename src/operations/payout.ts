// A card payout (spec §4.1 variants D and E; the route has already decrypted variant D's card):
// choose the gateway, reserve the idempotency key, then either hold the payout for an
// operator (gateways.hold_payouts: it stops in `requested`) or ask the processor and apply its
// result through the state machine. Also the pieces every payout shares with direct payouts.
import { cardBrand, type CardData, formatExpiry } from '../domain/cards.js';
import { type Gateway, type Merchant, selectGateway } from '../domain/merchants.js';
import type { Processor, ProcessorResult } from '../processors/processor.js';
import type { NewTransactionRow, TransactionRow } from '../store/schema.js';
import type { StoreOps } from '../store/store.js';
import type { OperationDeps } from './deps.js';
import { finish, holdForApproval, requestRow, type ReserveOptions, reserve, type TransactionAnswer } from './lifecycle.js';
import { panFingerprint, vaultCard } from './card-vault.js';
import type { CashierLink, Identity } from './sale.js';

/** What every payout request carries, card or direct. */
export interface PayoutRequestBase {
  readonly merchant: Merchant;
  readonly identity: Identity;
  readonly api_version: string;
  readonly order_id: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly pin: string;
  /** Required by variants D, E and the direct payout. */
  readonly gateway: string;
  readonly return_url: string;
  readonly notification_url: string;
  readonly request_fingerprint: string;
  readonly variables: Readonly<Record<string, string>>;
  /** Set by the hosted cashier: the session the payout is made in (docs/cashier.md). */
  readonly cashier?: CashierLink;
}

export interface CardPayoutInput extends PayoutRequestBase {
  readonly card: CardData;
}

export type PayoutOutcome =
  | { readonly kind: 'processed'; readonly answer: TransactionAnswer; readonly replayed: boolean }
  | { readonly kind: 'duplicate_order' }
  | { readonly kind: 'in_progress' }
  | { readonly kind: 'no_gateway'; readonly currency: string };

/** The gateway named in the request, if it is the merchant's, takes the currency and its processor is loaded here. */
/**
 * The gateway and processor of a payout. hold_payouts is read from the store, not from the
 * merchant copy the request was authenticated with (which may be a few seconds old, see
 * domain/merchants.ts): an operator's hold takes effect on every instance at once.
 */
export async function payoutGateway(
  deps: OperationDeps, merchant: Merchant, currency: string, gateway_id: string,
): Promise<{ gateway: Gateway; processor: Processor } | null> {
  const selected = selectGateway(merchant, currency, gateway_id);
  if (!selected) return null;
  const processor = deps.processors.get(selected.processor);
  if (!processor) return null;
  const stored = await deps.store.getGateway(selected.gateway_id);
  if (!stored) return null;
  return { gateway: { ...selected, hold_payouts: stored.hold_payouts === 1 }, processor };
}

/** The reserved row of a payout: born `pending`, like every transaction. */
export function payoutRow(
  deps: OperationDeps,
  input: PayoutRequestBase,
  gateway: Gateway,
  processor: Processor,
  specific: Pick<NewTransactionRow, 'payment_method'> & Partial<NewTransactionRow>,
): NewTransactionRow {
  return requestRow(input, {
    transaction_type: 'payout', gateway_id: gateway.gateway_id, payment_processor: processor.name, payment_method: specific.payment_method,
    created_at_ms: deps.clock.now_ms(),
  }, specific);
}

/**
 * Reserve, then hold or process. `ask` calls the processor for this payout while the customer
 * is present; it runs only when the gateway does not hold payouts.
 */
export async function runPayout(
  deps: OperationDeps,
  row: NewTransactionRow,
  gateway: Gateway,
  processor: Processor,
  ask: (reserved: TransactionRow) => Promise<ProcessorResult>,
  options: ReserveOptions = {},
): Promise<PayoutOutcome> {
  const reservation = await reserve(deps, row, options);
  if (reservation.kind === 'replay') return { kind: 'processed', answer: reservation.answer, replayed: true };
  if (reservation.kind === 'duplicate_order' || reservation.kind === 'in_progress') return reservation;
  if (reservation.kind === 'refused_by_guard') throw new Error('payout preparation never refuses');
  if (gateway.hold_payouts) return { kind: 'processed', answer: await holdForApproval(deps, reservation.row), replayed: false };
  const result = await ask(reservation.row);
  const answer = await finish(deps, reservation.row, result, (token) => processor.challengeUrl(token, 'wallet'));
  return { kind: 'processed', answer, replayed: false };
}

export async function processCardPayout(deps: OperationDeps, input: CardPayoutInput): Promise<PayoutOutcome> {
  const chosen = await payoutGateway(deps, input.merchant, input.currency, input.gateway);
  if (!chosen) return { kind: 'no_gateway', currency: input.currency };
  const { gateway, processor } = chosen;
  const merchant_id = input.merchant.merchant_id;
  const row = payoutRow(deps, input, gateway, processor, {
    payment_method: 'card',
    // Like a sale: the masked form, brand, expiry and a keyed fingerprint; never the PAN or CVV in clear.
    card_masked: input.card.masked,
    card_brand: cardBrand(input.card.pan),
    card_exp: formatExpiry(input.card.expiry),
    card_fingerprint: panFingerprint(deps.sealer, input.card.pan),
  });
  // A held payout is sent to the processor later, by an operator, without the request's card
  // data: its card waits sealed in the vault (the token is never answered for a payout).
  const prepare = gateway.hold_payouts
    ? async (tx: StoreOps) => ({ card_token: await vaultCard(tx, deps.sealer, merchant_id, input.pin, input.card, row.created_at_ms) })
    : undefined;
  return runPayout(deps, row, gateway, processor, (reserved) => processor.cardPayout({
    trace_id: reserved.trace_id,
    amount_minor: input.amount_minor,
    currency: input.currency,
    card: input.card,
  }), prepare ? { prepare } : {});
}
