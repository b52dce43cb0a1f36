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
import { finish, holdForApproval, type ReserveOptions, reserve, type TransactionAnswer } from './lifecycle.js';
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
export function payoutGateway(deps: OperationDeps, merchant: Merchant, currency: string, gateway_id: string): { gateway: Gateway; processor: Processor } | null {
  const gateway = selectGateway(merchant, currency, gateway_id);
  if (!gateway) return null;
  const processor = deps.processors.get(gateway.processor);
  return processor ? { gateway, processor } : null;
}

/** The reserved row of a payout: born `pending`, like every transaction. */
export function payoutRow(
  deps: OperationDeps,
  input: PayoutRequestBase,
  gateway: Gateway,
  processor: Processor,
  specific: Pick<NewTransactionRow, 'payment_method'> & Partial<NewTransactionRow>,
): NewTransactionRow {
  const now_ms = deps.clock.now_ms();
  return {
    merchant_id: input.merchant.merchant_id,
    transaction_type: 'payout',
    order_id: input.order_id,
    request_fingerprint: input.request_fingerprint,
    api_version: input.api_version,
    identity_kind: input.identity.kind,
    identity_value: input.identity.value,
    gateway_id: gateway.gateway_id,
    payment_processor: processor.name,
    status: 'pending',
    amount_minor: input.amount_minor,
    currency: input.currency,
    charge_amount_minor: input.amount_minor,
    charge_currency: input.currency,
    pin: input.pin,
    card_masked: null,
    card_brand: null,
    card_exp: null,
    card_fingerprint: null,
    card_token: null,
    reference_id: null,
    return_url: input.return_url,
    notification_url: input.notification_url,
    psp_transaction_id: null,
    error_code: null,
    error_details: null,
    description: null,
    redirect_url: null,
    challenge_token_hash: null,
    challenge_expires_at_ms: null,
    challenge_mode: null,
    answer_json: null,
    variables_json: Object.keys(input.variables).length > 0 ? JSON.stringify(input.variables) : null,
    data_json: null,
    created_at_ms: now_ms,
    updated_at_ms: now_ms,
    ...input.cashier,
    ...specific,
  };
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
  const chosen = payoutGateway(deps, input.merchant, input.currency, input.gateway);
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
