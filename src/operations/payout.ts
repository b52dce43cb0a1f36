// A card payout (spec §4.1 variants D and E; the route has already decrypted variant D's card):
// choose the gateway, reserve the idempotency key, then either hold the payout for an
// operator (gateways.hold_payouts: it stops in `requested`) or ask the processor and apply its
// result through the state machine. Also the pieces every payout shares with direct payouts.
import type { Connector, Customer, ProcessorResult } from '../connectors/connector.js';
import { cardBrand, type CardData, formatExpiry } from '../domain/cards.js';
import type { Gateway, GatewayRefusal, Merchant } from '../domain/merchants.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { NewTransactionRow } from '../store/schema.js';
import type { UnitOfWork } from '../store/store.js';
import type { OperationDeps } from './deps.js';
import { type NeededCapability, type PaymentToRoute, routePayment } from './gateway-choice.js';
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
  /** Required by variants D and E; a direct payout without one is routed by the merchant's rules (decisions §17). */
  readonly gateway: string | null;
  readonly return_url: string;
  readonly notification_url: string;
  readonly request_fingerprint: string;
  readonly variables: Readonly<Record<string, string>>;
  /** The payee as the request describes them: a processor's card payout needs the name. */
  readonly customer: Customer;
  /** Set by the hosted cashier: the session the payout is made in (docs/cashier.md). */
  readonly cashier?: CashierLink;
}

export interface CardPayoutInput extends PayoutRequestBase {
  readonly card: CardData;
}

export type PayoutOutcome =
  | {
      readonly kind: 'processed';
      readonly answer: TransactionAnswer;
      readonly replayed: boolean;
      /** The answer is this request's own commit, on disk before the payout returned (as for a sale: SaleOutcome). */
      readonly own_commit: boolean;
    }
  | { readonly kind: 'duplicate_order' }
  | { readonly kind: 'in_progress' }
  | { readonly kind: 'no_gateway'; readonly refusal: GatewayRefusal };

/**
 * The gateway and connector of a payout: the gateway the request names, if it is the
 * merchant's, usable here, takes the currency and its connector can make this kind of payout.
 * hold_payouts is read from the store, not from the merchant copy the request was authenticated
 * with (which may be a few seconds old, see operations/merchant-directory.ts): an operator's hold
 * takes effect on every instance at once.
 */
export async function payoutGateway(
  deps: OperationDeps,
  merchant: Merchant,
  payment: PaymentToRoute,
  gateway_id: string | null,
  need: NeededCapability,
): Promise<
  | { readonly kind: 'routed'; readonly gateway: Gateway; readonly connector: Connector }
  | { readonly kind: 'refused'; readonly refusal: GatewayRefusal }
> {
  const routing = await routePayment(deps, merchant, payment, gateway_id, need);
  if (routing.kind === 'refused') return routing;
  const stored = await deps.store.merchants.getGateway(routing.gateway.gateway_id);
  if (!stored) return { kind: 'refused', refusal: { kind: 'unknown', gateway_id: routing.gateway.gateway_id } };
  return { kind: 'routed', gateway: { ...routing.gateway, hold_payouts: stored.hold_payouts === 1 }, connector: routing.connector };
}

/** What a payout's sealed payee is bound to (the master-key rotation re-seals it with the same purpose). */
export const PAYOUT_CUSTOMER_PURPOSE = 'payout-customer';
const CUSTOMER_PURPOSE = PAYOUT_CUSTOMER_PURPOSE;

/** The payee of a payout, sealed in its row: a held payout released later still names them to the processor. */
export function sealPayoutCustomer(deps: Pick<OperationDeps, 'sealer'>, customer: Customer): string {
  return deps.sealer.seal(JSON.stringify(customer), CUSTOMER_PURPOSE);
}

export function openPayoutCustomer(deps: Pick<OperationDeps, 'sealer'>, sealed: string | null): Customer | null {
  return sealed === null ? null : (JSON.parse(deps.sealer.open(sealed, CUSTOMER_PURPOSE)) as Customer);
}

/** The reserved row of a payout: born `pending`, like every transaction. */
export function payoutRow(
  deps: OperationDeps,
  input: PayoutRequestBase,
  gateway: Gateway,
  connector: Connector,
  specific: Pick<NewTransactionRow, 'payment_method'> & Partial<NewTransactionRow>,
): NewTransactionRow {
  return requestRow(
    input,
    {
      transaction_type: 'payout',
      gateway_id: gateway.gateway_id,
      payment_processor: connector.name,
      payment_method: specific.payment_method,
      created_at_ms: deps.clock.now_ms(),
    },
    { customer_sealed: sealPayoutCustomer(deps, input.customer), ...specific },
  );
}

/**
 * Reserve, then hold or process. `ask` calls the processor for this payout while the customer
 * is present; it runs only when the gateway does not hold payouts.
 */
export async function runPayout(
  deps: OperationDeps,
  row: NewTransactionRow,
  gateway: Gateway,
  connector: Connector,
  ask: (reserved: TransactionRow) => Promise<ProcessorResult>,
  options: ReserveOptions = {},
): Promise<PayoutOutcome> {
  const reservation = await reserve(deps, row, options);
  if (reservation.kind === 'replay') return { kind: 'processed', answer: reservation.answer, replayed: true, own_commit: false };
  if (reservation.kind === 'duplicate_order' || reservation.kind === 'in_progress') return reservation;
  if (reservation.kind === 'refused_by_guard') throw new Error('payout preparation never refuses');
  if (gateway.hold_payouts)
    return { kind: 'processed', answer: await holdForApproval(deps, reservation.row), replayed: false, own_commit: true };
  const result = await ask(reservation.row);
  const answer = await finish(deps, reservation.row, result, connector);
  return { kind: 'processed', answer, replayed: false, own_commit: true };
}

export async function processCardPayout(deps: OperationDeps, input: CardPayoutInput): Promise<PayoutOutcome> {
  const chosen = await payoutGateway(
    deps,
    input.merchant,
    { currency: input.currency, amount_minor: input.amount_minor, card: input.card, payout_method: 'card' },
    input.gateway,
    'card_payout',
  );
  if (chosen.kind === 'refused') return { kind: 'no_gateway', refusal: chosen.refusal };
  const { gateway, connector } = chosen;
  const cardPayout = connector.cardPayout?.bind(connector);
  if (!cardPayout)
    return {
      kind: 'no_gateway',
      refusal: { kind: 'capability', gateway_id: gateway.gateway_id, connector: gateway.connector, capability: 'card payouts' },
    };
  const merchant_id = input.merchant.merchant_id;
  const row = payoutRow(deps, input, gateway, connector, {
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
    ? async (tx: UnitOfWork) => ({ card_token: await vaultCard(tx, deps.sealer, merchant_id, input.pin, input.card, row.created_at_ms) })
    : undefined;
  return runPayout(
    deps,
    row,
    gateway,
    connector,
    (reserved) =>
      cardPayout({
        trace_id: reserved.trace_id,
        reference: input.cashier?.cashier_order_id ?? input.order_id,
        amount_minor: input.amount_minor,
        currency: input.currency,
        card: input.card,
        customer: input.customer,
      }),
    prepare ? { prepare } : {},
  );
}
