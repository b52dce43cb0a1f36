// A customer's payment in a cashier session: a deposit (init-pay-in), the checkout of an order
// (init-checkout), a withdrawal (init-pay-out) or the payout of an order (init-pay-out-order).
//
//   1. claim the next attempt (one database transaction): refused while the session has ended,
//      the order is closed, another request is busy with an attempt, a payment of the session
//      is still in flight, or (withdrawals) the amount exceeds what is left of the balance;
//   2. pay-in and pay-out sessions: ask the merchant (validation request, decisions.md §11);
//      a refusal releases the claim and creates nothing;
//   3. the normal sale / card payout / direct payout operation, with the transaction tied to the
//      session (cashier_* columns): stored, notified, refundable like any other;
//   4. release the claim.
// Attempt n's transaction has the internal order_id `cashier-session:<session>:attempt:<n>`;
// longer than the 50 characters a merchant's order_id may have, it never meets one.
import { randomBytes } from 'node:crypto';
import type { CardData } from '../domain/cards.js';
import type { CashierPayee } from '../domain/payee.js';
import { customerFrom } from '../connectors/connector.js';
import { routePayment } from './gateway-choice.js';
import { CLOSED_ORDER_STATUSES, isOrderSession } from '../domain/order-state.js';
import { FINAL_STATUSES } from '../domain/transaction-state.js';
import type { CashierSessionRow } from '../domain/cashier-record.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import { authTokenOf, isPayout, knownCustomer } from './cashier-session.js';
import type { OperationDeps } from './deps.js';
import { processDirectPayout } from './direct-payout.js';
import type { TransactionAnswer } from './lifecycle.js';
import { processCardPayout } from './payout.js';
import { type CashierLink, processSale } from './sale.js';
import { sendValidationRequest } from './validation-request.js';
import { processWalletSale } from './wallet-sale.js';

/** A claim lapses after this long, so a request that died mid-way does not block the session forever. */
const CLAIM_MS = 90_000;

/** Payouts that end without moving money (or whose money came back): they do not count against the balance. */
const NOT_PAID_OUT: ReadonlySet<string> = new Set(['declined', 'rejected', 'error', 'cancelled', 'reversed']);

export function attemptOrderId(session_id: string, attempt: number): string {
  return `cashier-session:${session_id}:attempt:${attempt}`;
}

export function transactionTypeOf(session: Pick<CashierSessionRow, 'kind'>): 'sale' | 'payout' {
  return isPayout(session.kind) ? 'payout' : 'sale';
}

/** Withdrawals: the balance sent at init minus every payout of the session that has not failed. */
export function remainingBalance(session: CashierSessionRow, transactions: readonly TransactionRow[]): number | null {
  if (session.balance_minor === null) return null;
  const used = transactions
    .filter((t) => t.transaction_type === 'payout' && !NOT_PAID_OUT.has(t.status))
    .reduce((sum, t) => sum + t.amount_minor, 0);
  return Math.max(0, session.balance_minor - used);
}

export type ClaimRefusal =
  | { readonly kind: 'ended' }
  | { readonly kind: 'order_closed'; readonly order_status: string }
  | { readonly kind: 'busy' }
  | { readonly kind: 'in_flight'; readonly row: TransactionRow }
  | { readonly kind: 'over_balance'; readonly remaining_minor: number };

type Claim = { readonly kind: 'claimed'; readonly attempt: number; readonly session: CashierSessionRow } | ClaimRefusal;

async function claimAttempt(deps: OperationDeps, session_id: string, amount_minor: number): Promise<Claim> {
  return deps.store.transaction(async (tx): Promise<Claim> => {
    const session = await tx.cashier.lockSession(session_id);
    if (!session) return { kind: 'ended' };
    const now_ms = deps.clock.now_ms();
    if (isOrderSession(session) && CLOSED_ORDER_STATUSES.has(session.order_status ?? '')) {
      return { kind: 'order_closed', order_status: session.order_status! };
    }
    if (now_ms >= session.expires_at_ms) return { kind: 'ended' };
    // The claim is held on the real clock: moving the sandbox clock cannot end it mid-payment.
    const wall_ms = deps.wall_clock.now_ms();
    if (session.claim_until_ms !== null && session.claim_until_ms > wall_ms) return { kind: 'busy' };
    const transactions = await tx.cashier.listTransactions(session_id);
    const in_flight = transactions.find((t) => !FINAL_STATUSES.has(t.status));
    if (in_flight) return { kind: 'in_flight', row: in_flight };
    const remaining = remainingBalance(session, transactions);
    if (remaining !== null && amount_minor > remaining) return { kind: 'over_balance', remaining_minor: remaining };
    const attempt = session.attempts + 1;
    const claimed = await tx.cashier.updateSessionIf(
      session_id,
      { attempts: session.attempts },
      {
        attempts: attempt,
        claim_until_ms: wall_ms + CLAIM_MS,
        updated_at_ms: now_ms,
      },
    );
    return claimed ? { kind: 'claimed', attempt, session } : { kind: 'busy' };
  });
}

async function releaseClaim(deps: OperationDeps, session_id: string, attempt: number): Promise<void> {
  await deps.store.cashier.updateSessionIf(session_id, { attempts: attempt }, { claim_until_ms: null, updated_at_ms: deps.clock.now_ms() });
}

/** What the customer chose and entered, already checked by the page (cashier-forms). */
export type PaymentChoice =
  | { readonly method: 'card'; readonly card: CardData }
  /** A deposit from an e-wallet (wallet_id '' when the wallet's own page asks: PayPal), or a payout to the sandbox's. */
  | { readonly method: 'ewallet'; readonly wallet_id: string }
  /** A payout to a PayPal account or a bank account (domain/payee.ts). */
  | { readonly method: 'paypal' | 'bank_account'; readonly payee: CashierPayee };

/** Who a payout choice pays, when it is not a card. */
function payeeOf(choice: Exclude<PaymentChoice, { method: 'card' }>): CashierPayee {
  return choice.method === 'ewallet' ? { method: 'ewallet', wallet_id: choice.wallet_id } : choice.payee;
}

export interface PaymentRequest {
  readonly session: CashierSessionRow;
  readonly amount_minor: number;
  readonly choice: PaymentChoice;
  /** PUBLIC_URL: the customer comes back to the cashier there after 3-D Secure or the wallet. */
  readonly public_url: string;
}

export type PaymentOutcome =
  | { readonly kind: 'processed'; readonly attempt: number; readonly answer: TransactionAnswer }
  | ClaimRefusal
  /** The merchant's validation refused: nothing was created. `description` is the merchant's, or null when it could not be asked. */
  | { readonly kind: 'refused_by_merchant'; readonly description: string | null }
  /** The gateway cannot take this payment (no gateway for the currency, wallet id refused by the processor). */
  | { readonly kind: 'unavailable'; readonly reason: string };

export async function submitPayment(deps: OperationDeps, request: PaymentRequest): Promise<PaymentOutcome> {
  const merchant = await deps.merchants.find(request.session.merchant_id);
  if (!merchant) return { kind: 'ended' };
  // A session opened before the operator disabled the merchant takes no new payment (docs/security.md §5).
  if (merchant.disabled) return { kind: 'unavailable', reason: 'merchant_disabled' };
  const claim = await claimAttempt(deps, request.session.session_id, request.amount_minor);
  if (claim.kind !== 'claimed') return claim;
  const { session, attempt } = claim;
  try {
    const transaction_type = transactionTypeOf(session);
    const auth_token = authTokenOf(deps, session.session_id);
    // The merchant's order_id for orders; for pay-in and pay-out one per transaction, shown in the validation request and notifications.
    const cashier_order_id = session.order_id ?? `cs-${session.session_id.slice(0, 16)}-${attempt}-${randomBytes(3).toString('hex')}`;
    const identity = { kind: session.identity_kind as 'application_key' | 'frontend', value: session.identity_value };
    if (session.validation_url !== null) {
      const validation = await sendValidationRequest(deps, {
        url: session.validation_url,
        secret: merchant.secret,
        fields: {
          merchant_id: session.merchant_id,
          identity,
          pin: session.pin,
          order_id: cashier_order_id,
          transaction_type,
          amount: request.amount_minor,
          currency: session.currency,
          payment_method: request.choice.method,
          auth_token,
          version: session.api_version,
        },
      });
      if (validation.kind === 'refused')
        return { kind: 'refused_by_merchant', description: validation.description === '' ? null : validation.description };
      if (validation.kind === 'failed') return { kind: 'refused_by_merchant', description: null };
    }
    const cashier: CashierLink = { cashier_session_id: session.session_id, cashier_order_id, cashier_auth_token: auth_token };
    const variables = session.variables_json ? (JSON.parse(session.variables_json) as Record<string, string>) : {};
    const order_id = attemptOrderId(session.session_id, attempt);
    const request_fingerprint = deps.sealer.fingerprint(`${order_id}:${request.amount_minor}:${request.choice.method}`, 'request');
    const return_url = `${request.public_url}/cashier/attempt/${attempt}`;
    const customer = customerFrom({ ...(await knownCustomer(deps, session)), country: session.country });
    const common = {
      merchant,
      identity,
      api_version: session.api_version,
      order_id,
      amount_minor: request.amount_minor,
      currency: session.currency,
      pin: session.pin,
      return_url,
      notification_url: session.notification_url,
      request_fingerprint,
      variables,
      cashier,
      customer,
    };
    if (transaction_type === 'sale') {
      // An order to authorize (init-checkout transaction_type authorize, decisions §16) takes cards only: a wallet payment cannot be held.
      if (session.transaction_type === 'authorize' && request.choice.method !== 'card')
        return { kind: 'unavailable', reason: 'no_gateway' };
      const outcome =
        request.choice.method === 'card'
          ? await processSale(deps, {
              ...common,
              card: request.choice.card,
              gateway: session.gateway_id ?? undefined,
              initiated_by: 'customer',
              mit_retry: false,
              transaction_type: session.transaction_type,
            })
          : request.choice.method === 'ewallet'
            ? await processWalletSale(deps, { ...common, wallet_id: request.choice.wallet_id, gateway: session.gateway_id ?? undefined })
            : null;
      if (outcome === null) return { kind: 'unavailable', reason: 'no_gateway' };
      if (outcome.kind === 'processed') return { kind: 'processed', attempt, answer: outcome.answer };
      if (outcome.kind === 'no_gateway') return { kind: 'unavailable', reason: 'no_gateway' };
      return { kind: 'busy' };
    }
    const choice = request.choice;
    const payee = choice.method === 'card' ? null : payeeOf(choice);
    const routing = await routePayment(
      deps,
      merchant,
      {
        currency: session.currency,
        amount_minor: request.amount_minor,
        card: choice.method === 'card' ? choice.card : null,
        payout_method: payee === null ? 'card' : payee.method,
      },
      session.gateway_id,
      payee === null ? 'card_payout' : 'direct_payout',
    );
    if (routing.kind === 'refused') return { kind: 'unavailable', reason: 'no_gateway' };
    const gateway = routing.gateway;
    const known = await knownCustomer(deps, session);
    const holder = { email: known.email ?? null, dob: known.dob ?? null, country: session.country };
    const outcome =
      choice.method === 'card'
        ? await processCardPayout(deps, { ...common, gateway: gateway.gateway_id, card: choice.card })
        : await processDirectPayout(deps, {
            ...common,
            gateway: gateway.gateway_id,
            // The chosen gateway's own data_ fields for this payee (its connector pays this kind, routing checked).
            data: routing.connector.direct?.payee.data(payee!, holder) ?? {},
          });
    if (outcome.kind === 'processed') return { kind: 'processed', attempt, answer: outcome.answer };
    if (outcome.kind === 'no_gateway') return { kind: 'unavailable', reason: 'no_gateway' };
    // The processor's own check of the payee refused it (a PayPal address it does not take, an IBAN it cannot pay).
    if (outcome.kind === 'invalid_data') return { kind: 'unavailable', reason: choice.method === 'ewallet' ? 'wallet' : 'payee' };
    return { kind: 'busy' };
  } finally {
    await releaseClaim(deps, session.session_id, attempt);
  }
}

/** The transaction of attempt n of a session, if it was created. */
export async function attemptTransaction(deps: OperationDeps, session: CashierSessionRow, attempt: number): Promise<TransactionRow | null> {
  const row = await deps.store.transactions.findByKey(
    session.merchant_id,
    transactionTypeOf(session),
    attemptOrderId(session.session_id, attempt),
  );
  return row && row.cashier_session_id === session.session_id ? row : null;
}

/** Everything the cashier page needs to say where the session stands. */
export interface SessionState {
  readonly transactions: readonly TransactionRow[];
  /** A payment of the session still waiting for its final status. */
  readonly in_flight: TransactionRow | null;
  readonly remaining_minor: number | null;
  readonly approved: readonly TransactionRow[];
}

export async function sessionState(deps: OperationDeps, session: CashierSessionRow): Promise<SessionState> {
  const transactions = await deps.store.cashier.listTransactions(session.session_id);
  return {
    transactions,
    in_flight: transactions.find((t) => !FINAL_STATUSES.has(t.status)) ?? null,
    remaining_minor: remainingBalance(session, transactions),
    approved: transactions.filter((t) => t.status === 'approved'),
  };
}
