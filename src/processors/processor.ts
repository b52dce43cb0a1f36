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
}

export interface RefundRequest {
  readonly trace_id: number;
  readonly sale_psp_transaction_id: string | null;
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
  readonly method: string;
  readonly data: Readonly<Record<string, string>>;
}

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
  refund(request: RefundRequest): Promise<ProcessorResult>;
  cardPayout(request: CardPayoutRequest): Promise<ProcessorResult>;
  directPayout(request: DirectPayoutRequest): Promise<ProcessorResult>;
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
