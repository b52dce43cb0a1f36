// What every connector (one per payment processor: the sandbox, Checkout.com, ...) is to the rest
// of the gateway: a definition (its name, settings, capabilities, the environments it may run in)
// that builds one Connector per configured gateway, and the normalized requests and results the
// operations exchange with it. Operations never see a processor's own wire format; each
// connector folder holds its wire types and the one map from the processor's statuses to ours.
import type { CardData } from '../domain/cards.js';
import type { Clock } from '../domain/clock.js';
import type { Environment } from '../domain/environment.js';
import type { CashierTexts } from '../domain/cashier-texts.js';
import type { ProcessorResult } from '../domain/processor-result.js';
import type { DisputeStage } from '../domain/dispute-record.js';
import type { ProcessorSender } from '../outbound/processor-http.js';
import type { PayeeMapping } from '../domain/payee.js';
import type { SettingSpec } from './setting-spec.js';

/** The customer as the request described them; processors use it for risk checks and card payouts. */
export interface Customer {
  readonly first_name: string | null;
  readonly last_name: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  readonly address: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zip: string | null;
  /** ISO 3166-1 alpha-2. */
  readonly country: string | null;
  readonly ip: string | null;
}

export const NO_CUSTOMER: Customer = {
  first_name: null,
  last_name: null,
  email: null,
  phone: null,
  address: null,
  city: null,
  state: null,
  zip: null,
  country: null,
  ip: null,
};

/** The customer from a request's (or a cashier session's) fields of the same names; requester_ip is the ip. */
export function customerFrom(fields: Readonly<Record<string, unknown>>): Customer {
  const text = (name: string): string | null => (typeof fields[name] === 'string' && fields[name] !== '' ? (fields[name] as string) : null);
  return {
    first_name: text('first_name'),
    last_name: text('last_name'),
    email: text('email'),
    phone: text('phone'),
    address: text('address'),
    city: text('city'),
    state: text('state'),
    zip: text('zip'),
    country: text('country'),
    ip: text('requester_ip'),
  };
}

/** Every request a connector sends carries what identifies it at the processor and lets it be found again. */
export interface ProcessorReference {
  /** Ours: sent to the processor (as metadata where it takes it) so a lookup finds exactly this transaction. */
  readonly trace_id: number;
  /** The merchant's order_id, sent as the processor's own reference (decisions §13). */
  readonly reference: string;
}

export interface CardSaleRequest extends ProcessorReference {
  readonly merchant_id: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly card: CardData;
  readonly customer: Customer;
  /** customer: the cardholder is present (CVV given); merchant: a stored-card charge (MIT). */
  readonly initiated_by: 'customer' | 'merchant';
  /**
   * A merchant-initiated retry of a stored-card charge that was declined before (card schemes
   * want retries flagged); false for first tries and customer-initiated sales.
   */
  readonly mit_retry: boolean;
  /**
   * Where the processor sends the customer back after its own 3-D Secure page: the gateway,
   * which asks the processor for the outcome and then sends the customer on to return_url.
   * null for a merchant-initiated charge (nobody is there to send anywhere).
   */
  readonly return_to: { readonly success_url: string; readonly failure_url: string } | null;
  /**
   * true: a sale (authorized and captured at once). false: an authorization only (transaction_type
   * `authorize`, decisions §16): the processor holds the funds until the gateway captures or voids
   * them; its approval is the transaction's `authorized`. Only sent false to a connector with
   * `authorizations`.
   */
  readonly capture: boolean;
}

/** What a capture or a void is about: an authorization this gateway made (decisions §16). */
export interface AuthorizationActionRequest extends ProcessorReference {
  /** The authorization's id at the processor (its psp_transaction_id). */
  readonly psp_transaction_id: string;
  /** What was authorized, in `currency`'s minor units. */
  readonly authorized_minor: number;
  readonly currency: string;
  /**
   * Sent as the processor's idempotency key: the same action asked again (a replayed request, a
   * retry after a crash) is one action at the processor.
   */
  readonly idempotency_key: string;
}

export interface CaptureRequest extends AuthorizationActionRequest {
  /** What to capture, at most authorized_minor; less is a partial capture and the rest is released. */
  readonly amount_minor: number;
}

export type VoidRequest = AuthorizationActionRequest;

/** What the processor answered to a capture or a void. */
export type AuthorizationActionResult =
  /** Done now: captured (the funds are the merchant's) or voided (the hold is released). */
  | { readonly kind: 'done'; readonly psp_action_id: string | null }
  /** Taken, confirmed later by a webhook or a lookup (Checkout.com answers 202). */
  | { readonly kind: 'accepted'; readonly psp_action_id: string | null }
  /** Refused by the processor, nothing happened there (the authorization expired, was voided at the processor...). */
  | { readonly kind: 'refused'; readonly error_code: string; readonly error_details: string }
  /**
   * The outcome is unknown (a time-out, a lost connection, an unreadable answer): the processor is
   * asked (lookup) before anything is decided; asking again with the same idempotency key is safe.
   */
  | { readonly kind: 'unknown'; readonly reason: string };

export interface RefundRequest extends ProcessorReference {
  /** The sale's id at the processor (its transaction_id). */
  readonly sale_psp_transaction_id: string | null;
  readonly sale_trace_id: number;
  readonly amount_minor: number;
  readonly currency: string;
}

/** A deposit paid from the customer's e-wallet (hosted cashier); the customer confirms it at the wallet. */
export interface WalletDepositRequest extends ProcessorReference {
  readonly amount_minor: number;
  readonly currency: string;
  /** The customer's account at the wallet provider (the sandbox's wallet; PayPal's buyer logs in at PayPal instead and may ignore it). */
  readonly wallet_id: string;
  /** Where the wallet's own page sends the customer back (PayPal's return and cancel URLs): the gateway, as for 3-D Secure. */
  readonly return_to: { readonly success_url: string; readonly failure_url: string };
}

export interface CardPayoutRequest extends ProcessorReference {
  readonly amount_minor: number;
  readonly currency: string;
  readonly card: CardData;
  readonly customer: Customer;
}

export interface DirectPayoutRequest extends ProcessorReference {
  readonly amount_minor: number;
  readonly currency: string;
  /** The payment_method the connector's checkDirectPayout named for these data_ fields. */
  readonly method: string;
  /** Every data_ field of the request (spec §4.2 data_PARAM), names included. */
  readonly data: Readonly<Record<string, string>>;
  /**
   * true when the customer is at the merchant's site right now (the payout request itself);
   * false when an operator released a held payout later. A connector must not ask an absent
   * customer to act on a page (no `challenge` or `redirect` result).
   */
  readonly customer_present: boolean;
}

/** What a lookup asks about: a transaction this gateway sent (or was sending) to the processor. */
export interface LookupRequest extends ProcessorReference {
  readonly transaction_type: 'sale' | 'authorize' | 'refund' | 'payout';
  /** The processor's id when the gateway recorded one (a later lookup), else null (the answer was lost). */
  readonly psp_transaction_id: string | null;
  /** Refunds: the refunded sale's id at the processor. */
  readonly sale_psp_transaction_id: string | null;
  readonly amount_minor: number;
  readonly currency: string;
}

/**
 * What the processor knows of a payment beyond its result, reported by a lookup where it can: an
 * authorization's hold, and the refunds it holds (ours, and any made outside the gateway: a
 * reversal, decisions §16).
 */
export interface PaymentState {
  /**
   * An authorization (lookup of transaction_type `authorize` whose result is approved): open
   * (neither captured nor voided yet), captured (captured_minor of it) or voided. null otherwise.
   */
  readonly hold: 'open' | 'captured' | 'voided' | null;
  readonly captured_minor: number | null;
  /** Every refund the processor has of this payment; null when the connector cannot tell. */
  readonly refunds: readonly ProcessorRefund[] | null;
}

/** A refund the processor holds of a payment; trace_id is ours when the refund was the gateway's (its metadata or reference). */
export interface ProcessorRefund {
  readonly psp_refund_id: string;
  readonly amount_minor: number;
  readonly trace_id: number | null;
}

/** At most this many parameters, each at most RETURN_PARAM_MAX_CHARS, are passed on from a customer's way back. */
export const RETURN_PARAMS_MAX = 20;
export const RETURN_PARAM_MAX_CHARS = 4096;

/**
 * A customer back at the gateway from the processor's own page (decisions §17): PayPal's buyer
 * approval, Adyen's 3-D Secure redirect. The processor's word decides, never the customer's:
 * `outcome` and `params` only say which way they came back and what the processor attached.
 */
export interface ReturnRequest extends LookupRequest {
  /** success_url or failure_url of CardSaleRequest.return_to (PayPal's return and cancel URLs). */
  readonly outcome: 'success' | 'failure';
  /**
   * The query (or form) parameters the processor sent the customer back with (Adyen's
   * redirectResult, PayPal's token and PayerID), at most RETURN_PARAMS_MAX, each cut to
   * RETURN_PARAM_MAX_CHARS; the gateway's own (outcome) left out.
   */
  readonly params: Readonly<Record<string, string>>;
  /**
   * For a completion that moves money (PayPal's capture of an approved order): sent as the
   * processor's idempotency key, the same on every attempt for this transaction.
   */
  readonly idempotency_key: string;
}

/** A completion's answer: a processor result, or the customer cancelled at the processor's page (PayPal's cancel link). */
export type ReturnResult =
  | ProcessorResult
  | { readonly kind: 'cancelled'; readonly psp_transaction_id: string | null; readonly error_code: string; readonly error_details: string };

export type LookupResult =
  /** The processor knows it: its result now (possibly still pending), and what else it knows of the payment. */
  | { readonly kind: 'found'; readonly result: ProcessorResult; readonly payment?: PaymentState }
  /** The processor has no such transaction: it never reached it. */
  | { readonly kind: 'not_found' }
  /** The processor could not be asked now (unreachable, an error of its own): ask again later. */
  | { readonly kind: 'unavailable'; readonly reason: string };

/**
 * One data_ field a connector's direct payout takes (spec §4.2: "defined per PSP"). Each
 * connector declares its own and docs/payouts.md lists them per connector. data_ fields a
 * connector does not declare are still stored and passed on.
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

/** Checks data_ fields against a connector's declarations; the first problem, or null. An empty text counts as missing. */
export function checkDataFields(specs: readonly DataFieldSpec[], data: Readonly<Record<string, string>>): DataFieldProblem | null {
  for (const spec of specs) {
    const value = data[spec.name];
    if (value === undefined || value === '') {
      if (spec.required) return { field: spec.name, kind: 'missing', rule: spec.rule };
      continue;
    }
    const fits =
      value.length <= spec.max_length &&
      (spec.pattern === undefined || spec.pattern.test(value)) &&
      (spec.values === undefined || spec.values.includes(value));
    if (!fits) return { field: spec.name, kind: 'invalid', rule: spec.rule };
  }
  return null;
}

export type DirectPayoutCheck =
  { readonly ok: true; readonly payment_method: string } | { readonly ok: false; readonly problem: DataFieldProblem };

/** A result later, a decline's kind and the result of a call: the domain's (domain/processor-result.ts), which the routing rules read too. */
export type { DeclineKind, LaterResult, ProcessorResult } from '../domain/processor-result.js';

/** What a verified processor webhook says happened, in our terms. */
export interface WebhookEvent {
  /** The processor's event id: an event applied once is never applied again. */
  readonly event_id: string;
  readonly event_type: string;
  /** How to find the transaction, most precise first. */
  readonly match: {
    readonly trace_id: number | null;
    readonly psp_transaction_id: string | null;
    readonly transaction_type: 'sale' | 'refund' | 'payout' | null;
    readonly reference: string | null;
  };
  /** The result to apply, or null for an event that changes nothing of ours (pending, informational). */
  readonly result: ProcessorResult | null;
  /**
   * What happened to the payment itself (decisions §16), when the event says it: a capture or a
   * void confirmed, a refund made (by the gateway, or outside it: a reversal), a dispute opened
   * or moved on. Absent for events that only report a request's result.
   */
  readonly payment_event?: PaymentEvent;
}

/** Where a dispute is, in our terms (domain/dispute-record.ts); each connector maps its processor's stages to these. */
export { DISPUTE_STAGES, type DisputeStage } from '../domain/dispute-record.js';

/** A dispute (chargeback) as one event of the processor describes it. */
export interface DisputeFacts {
  /** The processor's id of the dispute: one payment may have several. */
  readonly psp_dispute_id: string;
  readonly stage: DisputeStage;
  /** Disputed, in `currency`'s minor units; null when this event does not say. */
  readonly amount_minor: number | null;
  readonly currency: string | null;
  /** The processor's reason (its code or words), as it gives it. */
  readonly reason: string | null;
  /** When evidence is due at the processor (unix ms), when it says. */
  readonly evidence_due_at_ms: number | null;
}

export type PaymentEvent =
  /** The capture of an authorization, confirmed; amount_minor null when the event does not say. */
  | { readonly kind: 'captured'; readonly psp_payment_id: string; readonly amount_minor: number | null }
  /** The void of an authorization, confirmed. */
  | { readonly kind: 'voided'; readonly psp_payment_id: string }
  /**
   * A refund of the payment at the processor. When `match` finds one of the gateway's refunds it
   * is that refund's result; when it finds none, someone refunded outside the gateway: a reversal.
   */
  | {
      readonly kind: 'refunded';
      readonly psp_payment_id: string;
      readonly psp_refund_id: string;
      readonly amount_minor: number;
      readonly currency: string;
    }
  | { readonly kind: 'dispute'; readonly psp_payment_id: string; readonly dispute: DisputeFacts };

export type WebhookReading =
  | { readonly kind: 'event'; readonly event: WebhookEvent }
  /** Several events in one verified body (Adyen's batches): each applied once, in order. */
  | { readonly kind: 'events'; readonly events: readonly WebhookEvent[] }
  /** The signature does not verify with the gateway's webhook secret: HTTP 401, nothing read. */
  | { readonly kind: 'bad_signature' }
  /** Verified, but not something this gateway reads (unknown shape): HTTP 200, nothing applied. */
  | { readonly kind: 'ignored'; readonly reason: string };

export type { CashierTexts } from '../domain/cashier-texts.js';

/** One gateway's connection to its processor. */
export interface Connector {
  /** As shown to merchants in payment_processor (the connector's name). */
  readonly name: string;
  /**
   * Prefixed to the error_details the gateway writes itself about this connector's transactions
   * (an interrupted call, a lookup that found nothing): `[TEST] ` in the sandbox (decisions §7).
   */
  readonly details_prefix: string;
  /**
   * True when the connector decides in this process alone (the sandbox): no processor is called and
   * nothing moves money elsewhere, so there is nothing to ask after a crash, and a sale may be
   * reserved, decided and finished as one unit (operations/sale.ts). On PostgreSQL that unit is
   * decided before its key is claimed (store/sql/held-writes.ts): a twin request's decision may be
   * made and then dropped, which is harmless only because nothing was charged by it.
   */
  readonly decides_in_process?: boolean;
  sale(request: CardSaleRequest): Promise<ProcessorResult>;
  refund(request: RefundRequest): Promise<ProcessorResult>;
  /** Absent when the connector has no card payouts: such a payout is refused with status 15. */
  cardPayout?(request: CardPayoutRequest): Promise<ProcessorResult>;
  /** Absent when the connector has no direct (bank, e-wallet) payouts. */
  readonly direct?: {
    /** The data_ fields this connector's direct payout takes. */
    readonly fields: readonly DataFieldSpec[];
    /** Validates the data_ fields (before anything is stored) and names the payment method they select. */
    check(data: Readonly<Record<string, string>>): DirectPayoutCheck;
    payout(request: DirectPayoutRequest): Promise<ProcessorResult>;
    /** The payees it pays (routing and the cashier's payout methods) and their data_ fields (domain/payee.ts). */
    readonly payee: PayeeMapping;
  };
  /**
   * Absent when the connector cannot authorize without capturing: an `authorize` is then refused
   * like an operation the gateway cannot do (status 15). Present: `sale` takes `capture: false`.
   */
  readonly authorizations?: {
    capture(request: CaptureRequest): Promise<AuthorizationActionResult>;
    void(request: VoidRequest): Promise<AuthorizationActionResult>;
  };
  /** Absent when the connector takes no e-wallet deposits; the cashier then offers only cards for pay-ins. */
  walletDeposit?(request: WalletDepositRequest): Promise<ProcessorResult>;
  /**
   * What became of a transaction this gateway sent (or was sending): after a crash during the
   * call, a time-out, an unreadable answer, a customer back from 3-D Secure, or a pending result
   * that no webhook settled. Never moves money.
   */
  lookup(request: LookupRequest): Promise<LookupResult>;
  /**
   * Present when a payment that sent the customer to the processor's page (a `redirect` result)
   * needs the gateway's word to complete once they are back or the processor says they approved:
   * PayPal's capture of an approved order, Adyen's /payments/details with the redirectResult.
   * It may move money, so it carries an idempotency key; it first asks the processor where the
   * payment is, so calling it again (the customer's return, then a scheduled lookup) is harmless.
   * Connectors without it are settled by `lookup` alone.
   */
  completeReturn?(request: ReturnRequest): Promise<ReturnResult>;
  /** The gateway's own challenge pages (`challenge` results): where the customer goes for one. */
  challengeUrl?(token: string, kind: 'card' | 'wallet'): string;
  /** Texts of this connector's own on the hosted cashier (the sandbox's); absent: the cashier's. */
  readonly cashier_texts?: CashierTexts;
  /**
   * Present when the processor sends webhooks: verifies and reads one (raw body as received).
   * May be asynchronous for a processor that verifies by a call of its own (PayPal's
   * verify-webhook-signature).
   */
  readWebhook?(
    raw_body: Buffer,
    headers: Readonly<Record<string, string | string[] | undefined>>,
  ): WebhookReading | Promise<WebhookReading>;
  /**
   * The body a verified webhook is answered with when the processor wants a particular one
   * (Adyen: the text `[accepted]`, or it sends the notification again); absent: the gateway's JSON.
   */
  readonly webhook_acknowledgement?: { readonly content_type: string; readonly body: string };
}

/** What a connector can do, for docs, `gateway show` and the operator API; must match the methods it has. */
export interface Capabilities {
  /** Card sales (and authorizations); false for a wallet-only processor (PayPal), whose `sale` refuses cards and which routing never picks for one. */
  readonly card_sale: boolean;
  readonly refund: true;
  readonly card_payout: boolean;
  readonly direct_payout: boolean;
  readonly wallet_deposit: boolean;
  /** Stored-card charges (subscription renewals). */
  readonly merchant_initiated: boolean;
  /** Authorize now, capture or void later (decisions §16): the connector has `authorizations`. */
  readonly authorize_capture: boolean;
  /** Reports disputes (chargebacks) and refunds made outside the gateway (reversals) by webhook. */
  readonly disputes: boolean;
  /** 3-D Secure, on the gateway's own page (sandbox) or the processor's. */
  readonly three_d_secure: boolean;
  readonly webhooks: boolean;
}

/**
 * The instance's settings a connector reads, taken from the configuration by whoever builds the
 * registry (config.ts connectorOptions): a connector never sees the whole configuration.
 */
export interface ConnectorOptions {
  readonly environment: Environment;
  /** PAYGATE_ALLOW_PRIVATE_URLS: live mode may reach private addresses (sandbox mode always may). */
  readonly allow_private_urls: boolean;
  /** A whole call to a processor, at most. */
  readonly processor_timeout_ms: number;
  /** How long a customer has for a challenge (3-D Secure, the e-wallet) before it times out. */
  readonly challenge_timeout_ms: number;
  /** The sandbox: when an asynchronous result (CVV 222/223, payout 1313) settles. */
  readonly sandbox_async_settle_ms: number;
  /** The sandbox: when the issuer that never answers (CVV 588, amount 713) times out. */
  readonly sandbox_issuer_timeout_ms: number;
}

/** What a connector is built with: nothing global, every dependency passed, and nothing it would call back. */
export interface ConnectorContext {
  readonly options: ConnectorOptions;
  readonly clock: Clock;
  /** PUBLIC_URL, or the bound address once listening. */
  readonly public_url: () => string;
  /** Outbound HTTP to processors (time-outs, size caps, address policy): the gateway's labelled view, so each call is counted (metrics). */
  readonly http: ProcessorSender;
}

export type { SettingSpec } from './setting-spec.js';

export interface ConnectorDefinition {
  readonly name: string;
  /** Where a gateway of this connector may take payments: the sandbox connector never runs live. */
  readonly environments: readonly Environment[];
  readonly capabilities: Capabilities;
  readonly settings: readonly SettingSpec[];
  /** Currencies a new gateway takes when `--currencies` is not given; null: the option is required. */
  readonly default_currencies: readonly string[] | null;
  /** Checks settings as a whole beyond each one's schema (a base_url that must be https in live mode...); the problem, or null. */
  check?(
    settings: Readonly<Record<string, string>>,
    context: { readonly environment: Environment; readonly allow_private_urls: boolean },
  ): { readonly field: string; readonly reason: string } | null;
  create(settings: Readonly<Record<string, string>>, context: ConnectorContext, gateway_id: string): Connector;
}
