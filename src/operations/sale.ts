// A card sale (spec §4.1 variants A and B): choose the gateway, reserve the idempotency key,
// ask the gateway's connector, apply its result through the state machine.
import type { Customer } from '../connectors/connector.js';
import { cardBrand, type CardData, formatExpiry } from '../domain/cards.js';
import type { GatewayRefusal, Merchant } from '../domain/merchants.js';
import type { NewTransactionRow } from '../store/schema.js';
import type { OperationDeps } from './deps.js';
import { routePayment } from './gateway-choice.js';
import { finish, requestRow, reserve, type TransactionAnswer } from './lifecycle.js';
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
}

/** The columns that tie a transaction to the cashier session it was made in. */
export type CashierLink = Required<Pick<NewTransactionRow, 'cashier_session_id' | 'cashier_order_id' | 'cashier_auth_token'>>;

export type SaleOutcome =
  | { readonly kind: 'processed'; readonly answer: TransactionAnswer; readonly replayed: boolean }
  | { readonly kind: 'duplicate_order' }
  | { readonly kind: 'in_progress' }
  | { readonly kind: 'no_gateway'; readonly refusal: GatewayRefusal };

export async function processSale(deps: OperationDeps, input: SaleInput): Promise<SaleOutcome> {
  const routing = await routePayment(deps, input.merchant, input.currency, input.gateway, input.initiated_by === 'merchant' ? 'merchant_initiated' : null);
  if (routing.kind === 'refused') return { kind: 'no_gateway', refusal: routing.refusal };
  const { gateway, connector } = routing;

  const now_ms = deps.clock.now_ms();
  const merchant_id = input.merchant.merchant_id;
  const reservation = await reserve(deps, requestRow(input, {
    transaction_type: 'sale', gateway_id: gateway.gateway_id, payment_processor: connector.name, payment_method: 'card', created_at_ms: now_ms,
  }, {
    card_masked: input.card.masked,
    card_brand: cardBrand(input.card.pan),
    card_exp: formatExpiry(input.card.expiry),
    card_fingerprint: panFingerprint(deps.sealer, input.card.pan),
  }));
  if (reservation.kind === 'replay') return { kind: 'processed', answer: reservation.answer, replayed: true };
  if (reservation.kind === 'duplicate_order' || reservation.kind === 'in_progress') return reservation;
  if (reservation.kind === 'refused_by_guard') throw new Error('a sale reservation has no guard to refuse it');

  const row = reservation.row;
  const result = await connector.sale({
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
  });
  // The card is kept only if the sale can still be approved; its token is shown once approved.
  const answer = await finish(deps, row, result, connector, {
    vault: (tx) => vaultCard(tx, deps.sealer, merchant_id, input.pin, input.card, now_ms),
  });
  return { kind: 'processed', answer, replayed: false };
}
