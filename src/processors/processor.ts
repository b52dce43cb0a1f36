// The interface every processor (the sandbox simulator now, a live PSP connector later)
// implements, and its normalized result. Operations never see a processor's own wire format.
import type { CardData } from '../domain/cards.js';

export interface CardSaleRequest {
  readonly trace_id: number;
  readonly merchant_id: string;
  readonly order_id: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly card: CardData;
  /** customer: the cardholder is present (CVV given); merchant: a stored-card charge (MIT). */
  readonly initiated_by: 'customer' | 'merchant';
  /**
   * A merchant-initiated retry of a stored-card charge that was declined before (card schemes
   * want retries flagged); false for first tries and customer-initiated sales.
   */
  readonly mit_retry: boolean;
}

export interface RefundRequest {
  readonly trace_id: number;
  readonly sale_psp_transaction_id: string | null;
  readonly amount_minor: number;
  readonly currency: string;
}

/** A deposit paid from the customer's e-wallet (hosted cashier); the customer confirms it at the wallet. */
export interface WalletDepositRequest {
  readonly trace_id: number;
  readonly amount_minor: number;
  readonly currency: string;
  /** The customer's account at the wallet provider. */
  readonly wallet_id: string;
}

/** A payout the gateway asks about after losing the processor's answer (its process stopped during the call). */
export interface PayoutStatusRequest {
  /** The gateway's reference sent with the payout. */
  readonly trace_id: number;
  readonly amount_minor: number;
  readonly currency: string;
}

export interface CardPayoutRequest {
  readonly trace_id: number;
  readonly amount_minor: number;
  readonly currency: string;
  readonly card: CardData;
}

export interface DirectPayoutRequest {
  readonly trace_id: number;
  readonly amount_minor: number;
  readonly currency: string;
  /** The payment_method the processor's checkDirectPayout named for these data_ fields. */
  readonly method: string;
  /** Every data_ field of the request (spec §4.2 data_PARAM), names included. */
  readonly data: Readonly<Record<string, string>>;
  /**
   * true when the customer is at the merchant's site right now (the payout request itself);
   * false when an operator released a held payout later. A processor must not ask an absent
   * customer to act on a page (no `challenge` result).
   */
  readonly customer_present: boolean;
}

/**
 * One data_ field a processor's direct payout takes (spec §4.2: "defined per PSP"). Each
 * processor declares its own and docs/payouts.md lists them per processor. data_ fields a
 * processor does not declare are still stored and passed on.
 */
export interface DataFieldSpec {
  /** The full field name, data_ included. */
  readonly name: string;
  readonly required: boolean;
  readonly max_length: number;
  readonly pattern?: RegExp;
  /** When the field is a choice: its values. */
  readonly values?: readonly string[];
  /** What a valid value is, as the error names it: "Invalid field: NAME (expected RULE)". */
  readonly rule: string;
}

export interface DataFieldProblem {
  readonly field: string;
  readonly kind: 'missing' | 'invalid';
  readonly rule: string;
}

/** Checks data_ fields against a processor's declarations; the first problem, or null. An empty text counts as missing. */
export function checkDataFields(specs: readonly DataFieldSpec[], data: Readonly<Record<string, string>>): DataFieldProblem | null {
  for (const spec of specs) {
    const value = data[spec.name];
    if (value === undefined || value === '') {
      if (spec.required) return { field: spec.name, kind: 'missing', rule: spec.rule };
      continue;
    }
    const fits = value.length <= spec.max_length
      && (spec.pattern === undefined || spec.pattern.test(value))
      && (spec.values === undefined || spec.values.includes(value));
    if (!fits) return { field: spec.name, kind: 'invalid', rule: spec.rule };
  }
  return null;
}

export type DirectPayoutCheck =
  | { readonly ok: true; readonly payment_method: string }
  | { readonly ok: false; readonly problem: DataFieldProblem };

/**
 * A result the processor will produce later by itself. A live PSP reports it through its own
 * callback; the sandbox simulates it, and the gateway keeps it as due work in the database.
 */
export interface LaterResult {
  readonly after_ms: number;
  readonly to: 'approved' | 'rejected' | 'error';
  readonly error_code: string;
  readonly error_details: string;
}

export type ProcessorResult =
  | { readonly kind: 'approved'; readonly psp_transaction_id: string; readonly charge_amount_minor: number; readonly charge_currency: string; readonly error_code: string; readonly error_details: string }
  | { readonly kind: 'rejected'; readonly psp_transaction_id: string | null; readonly error_code: string; readonly error_details: string }
  | { readonly kind: 'error'; readonly psp_transaction_id: string | null; readonly error_code: string; readonly error_details: string }
  /** Accepted; the final answer comes later. */
  | { readonly kind: 'pending'; readonly psp_transaction_id: string; readonly error_code: string; readonly error_details: string; readonly later: LaterResult | null }
  /** The customer must act on a page (3-D Secure, e-wallet); `later` is what happens if nobody does. */
  | { readonly kind: 'challenge'; readonly psp_transaction_id: string; readonly error_code: string; readonly error_details: string; readonly mode: 'interactive' | 'unresponsive'; readonly later: LaterResult };

export interface Processor {
  /** As shown to merchants in payment_processor. */
  readonly name: string;
  sale(request: CardSaleRequest): Promise<ProcessorResult>;
  /** Absent when the processor takes no e-wallet deposits; the cashier then offers only cards for pay-ins. */
  walletDeposit?(request: WalletDepositRequest): Promise<ProcessorResult>;
  refund(request: RefundRequest): Promise<ProcessorResult>;
  cardPayout(request: CardPayoutRequest): Promise<ProcessorResult>;
  directPayout(request: DirectPayoutRequest): Promise<ProcessorResult>;
  /**
   * What became of a payout this gateway sent (or was sending) when its process stopped before
   * recording the answer; null when the processor has no such payout. Absent when the processor
   * cannot be asked: such payouts stay `in progress` for the operator.
   */
  payoutStatus?(request: PayoutStatusRequest): Promise<ProcessorResult | null>;
  /** The data_ fields this processor's direct payout takes. */
  readonly direct_payout_fields: readonly DataFieldSpec[];
  /**
   * Validates a direct payout's data_ fields by this processor's own rules (before anything is
   * stored) and names the payment method they select (answered as payment_method).
   */
  checkDirectPayout(data: Readonly<Record<string, string>>): DirectPayoutCheck;
  /** Where the customer goes for a challenge; the token identifies the transaction's challenge. */
  challengeUrl(token: string, kind: 'card' | 'wallet'): string;
}

export interface ProcessorRegistry {
  get(name: string): Processor | null;
}

export function processorRegistry(processors: readonly Processor[]): ProcessorRegistry {
  const by_name = new Map(processors.map((p) => [p.name, p]));
  return { get: (name) => by_name.get(name) ?? null };
}
