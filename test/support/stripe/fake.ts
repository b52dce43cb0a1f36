// A stateful fake of Stripe's PaymentIntents and Refunds APIs on 127.0.0.1, for the tests of our
// `stripe` connector, which cannot reach Stripe. The official `stripe` package talks to it as to
// Stripe (`new Stripe(key, { host: '127.0.0.1', port, protocol: 'http' })`). It follows Stripe's
// documented test-mode behaviour (test-cards.ts and test/psp-specs/stripe/SOURCE.md list the
// pages) and checks itself and its client against Stripe's published description: every request
// is checked with spec.ts (an invalid one is answered 400 as Stripe would), every JSON answer and
// every webhook event too; all problems land in `fake.violations`, which tests assert is empty.
//
// Endpoints: POST /v1/payment_intents (card payments, confirm=true with raw card data, capture_method
// automatic or manual), GET /v1/payment_intents/{intent}, GET /v1/payment_intents/search,
// POST /v1/payment_intents/{intent}/capture, POST /v1/payment_intents/{intent}/cancel,
// POST /v1/refunds, GET /v1/refunds/{refund}, GET /v1/refunds; GET/POST
// /3d_secure_2_test/{intent}/{token} is the 3-D Secure test page for a person.
//
// What a test does at "Stripe" itself (the controls, beyond FakeProcessorControls' failNext,
// holdEvents, waitForEvent...; those that make events resolve once the events are delivered):
// - authenticate(payment_intent_id, 'complete' | 'fail'): the 3-D Secure page's buttons.
// - settleRefunds(): asynchronous refunds reach their final status now.
// - openDispute(payment_intent_id, { amount?, reason?, status? }) → FakeDisputeView: the cardholder
//   disputes a captured payment (charge.dispute.created, then charge.dispute.funds_withdrawn for a
//   chargeback; status needs_response by default, warning_needs_response for an inquiry).
// - updateDispute(dispute_id, status) → FakeDisputeView: e.g. under_review once evidence is in
//   (charge.dispute.updated).
// - closeDispute(dispute_id, 'won' | 'lost') → FakeDisputeView: charge.dispute.closed (and
//   .funds_reinstated when a chargeback is won).
// - refundFromDashboard(payment_intent_id, amount?) → FakeRefundView: a refund made in Stripe's
//   Dashboard, without our metadata (refund.created, charge.refunded): what a reversal looks like.
// - expireAuthorization(payment_intent_id): an uncaptured PaymentIntent canceled by Stripe after its
//   authorization window (cancellation_reason automatic, payment_intent.canceled).
// - hangNextCapture(): the next capture is made but never answered (failNext on the capture route
//   with 'timeout'): the client times out and must ask (retrieve) or replay its Idempotency-Key.
// Routes for failNext and requestsTo are FakeStripeRoute's ('POST /v1/payment_intents/{intent}/capture', ...).
//
// Documented behaviour followed:
// - Authorization "Bearer <secret key>" (or Basic with the key as user name); otherwise 401 with
//   Stripe's error object (https://docs.stripe.com/api/authentication).
// - Idempotency-Key on POST (https://docs.stripe.com/api/idempotent_requests): "saving the
//   resulting status code and body of the first request … regardless of whether it succeeds or
//   fails. Subsequent requests with the same key return the same result"; "compares incoming
//   parameters to those of the original request and errors if they're not the same" (400
//   idempotency_error); "We save results only after the execution of an endpoint begins. If
//   incoming parameters fail validation, or the request conflicts with another request that's
//   executing concurrently, we don't save" (a duplicate while the first is in flight: 409
//   idempotency_key_in_use); keys pruned after 24 h; GET ignores keys. Replays carry
//   Idempotent-Replayed: true and create nothing.
// - PaymentIntents with confirm=true: test cards decide (test-cards.ts). Approved: 200 `succeeded`
//   with a succeeded charge (latest_charge). Declined: 402 card_error with code, decline_code,
//   message, charge, payment_intent (status requires_payment_method, last_payment_error) and
//   payment_method (https://docs.stripe.com/error-handling, https://docs.stripe.com/declines).
//   capture_method=manual (https://docs.stripe.com/payments/place-a-hold-on-a-payment-method):
//   approved means 200 `requires_capture` with amount_capturable and an uncaptured charge
//   (charge.succeeded, payment_intent.amount_capturable_updated; after 3-D Secure likewise).
//   3-D Secure: 200 `requires_action`, next_action redirect_to_url (url: this fake's test page,
//   return_url) when a return_url was given, use_stripe_sdk otherwise; the page's buttons end in
//   `succeeded` or in `requires_payment_method` with payment_intent_authentication_failure, then
//   303 to return_url?payment_intent=…&payment_intent_client_secret=…&redirect_status=….
//   off_session=true with a card that needs authentication: 402 authentication_required.
//   Card data Stripe refuses before any attempt (bad number, month, year, CVC): 402 card_error,
//   no PaymentIntent made. Since API version 2023-08-16 a PaymentIntent without
//   payment_method_types takes automatic payment methods, and confirming it needs a return_url
//   unless automatic_payment_methods[allow_redirects]=never
//   (https://docs.stripe.com/upgrades/manage-payment-methods). A request naming API version
//   2026-09-30 or later (the stripe package 23 names 2026-10-28.endive) may not send
//   payment_method_types, replaced there by allowed_payment_method_types (CHOSEN from the package's
//   CHANGELOG). Answers keep the description's 2023-08-16 shapes (see SOURCE.md).
// - expand[]: latest_charge and payment_method of PaymentIntents, charge and payment_intent of
//   refunds (data.… in the search and the list, total_count in the search); anything else is 400.
// - Search (https://docs.stripe.com/search): clauses `field:value` (metadata['k']:'v', status,
//   currency, amount and created with : > < >= <=, customer), negation with "-", joined by AND or
//   OR (not both) or spaces (AND); answer {object: search_result, url, has_more, next_page, data},
//   total_count only with expand[]=total_count; newest first (CHOSEN). "Data is searchable in
//   less than a minute": `search_delay_ms` (default 0) keeps new PaymentIntents out of results.
// - Refunds (https://docs.stripe.com/api/refunds, https://docs.stripe.com/testing.md "Simulate an
//   asynchronous refund"): card refunds `succeeded` at once, except 4000000000007726 (`pending`,
//   later `succeeded`, refund.updated) and 4000000000005126 (`succeeded`, later `failed`,
//   refund.failed); later = `refund_settle_ms` or settleRefunds(). More than remains: 400
//   (charge_already_refunded when nothing remains).
// - Capture (https://docs.stripe.com/api/payment_intents/capture, .../place-a-hold-on-a-payment-method):
//   only from requires_capture (else 400 payment_intent_unexpected_state); amount_to_capture at most
//   amount_capturable (default all of it), once: "Partially capturing automatically releases the
//   remaining amount" and "Authorized payments can only be captured once". → succeeded,
//   amount_received; events charge.captured, payment_intent.succeeded. CHOSEN: the released rest
//   shows in the charge's amount_refunded (refunded: true once nothing is left), but is no Refund
//   object (GET /v1/refunds lists only refunds someone asked for).
// - Cancel (https://docs.stripe.com/api/payment_intents/cancel): from requires_payment_method,
//   requires_capture, requires_confirmation or requires_action (else 400
//   payment_intent_unexpected_state); → canceled, canceled_at, cancellation_reason (as given, else
//   null); the hold of a requires_capture one is released; event payment_intent.canceled.
// - Disputes (https://docs.stripe.com/disputes/how-disputes-work, the description's `dispute`):
//   made by the test controls above only; a dispute object with evidence_details.due_by (7 days on,
//   CHOSEN), the payment's charge and payment_intent, and balance_transactions for the funds
//   withdrawn and reinstated; the charge says disputed: true.
// - Webhooks (https://docs.stripe.com/webhooks#verify-manually): POST of the event, pretty-printed
//   JSON as Stripe sends it, Stripe-Signature: t=<unix s>,v1=<hex HMAC-SHA256 of "t.body" keyed
//   with the whsec_ secret>; retried on a non-2xx answer or a network error (bounded:
//   `webhook_attempts`). Events are sent one at a time in the order they were made. Types:
//   payment_intent.created / .succeeded / .payment_failed / .requires_action /
//   .amount_capturable_updated / .canceled, charge.succeeded / .failed / .captured / .refunded,
//   refund.created / .updated / .failed, charge.refund.updated, charge.dispute.created / .updated /
//   .closed / .funds_withdrawn / .funds_reinstated.
// Not checked against the description: the 3-D Secure page (HTML for a browser) and answers to
// unknown paths. CHOSEN where the documentation is silent is marked so at the place.
// What both fakes do alike (the webhook outbox, the failure modes, the recording of requests and
// violations, the local server, the controls every fake offers) is in ../fake-processor/.
import type http from 'node:http';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createProcessorControls, type FakeProcessorControls } from '../fake-processor/controls.js';
import {
  answerText,
  createFailureQueue,
  createHeldAnswers,
  sendProcessed,
  type FakeAnswer,
  type FakeFailureMode,
} from '../fake-processor/failure-modes.js';
import { answeredIconRequest, pageAnswers } from '../fake-processor/html.js';
import { failuresAsViolations, startLocalServer } from '../fake-processor/local-server.js';
import { safeDecode } from '../fake-processor/openapi-operations.js';
import type { RequestBody } from '../fake-processor/read-body.js';
import { createViolationLog, keepBounded, type RecordedRequestBase, type Violation, type Writable } from '../fake-processor/recording.js';
import {
  createWebhookOutbox,
  type OutboxEvent,
  type WebhookDelivery,
  type WebhookEventState,
  type WebhookEventView,
  type WebhookOptions,
} from '../fake-processor/webhook-outbox.js';
import { stripeValidator, type StripeProblem, type StripeValidator } from './spec.js';
import * as cards from './test-cards.js';
import { challengePage, finishedPage, unknownAuthenticationPage } from './challenge-page.js';

export const FAKE_STRIPE_SECRET_KEY = 'sk_test_51PaygateFakeStripeKey7xkq3mzt2vwnd5hj4ra6ce9';

export type FakeStripeRoute =
  | 'POST /v1/payment_intents'
  | 'GET /v1/payment_intents/{intent}'
  | 'GET /v1/payment_intents/search'
  | 'POST /v1/payment_intents/{intent}/capture'
  | 'POST /v1/payment_intents/{intent}/cancel'
  | 'POST /v1/refunds'
  | 'GET /v1/refunds/{refund}'
  | 'GET /v1/refunds';

export type { FakeFailureMode, Violation };

export interface FakeStripeOptions extends WebhookOptions {
  /** The secret key the Authorization header must carry (default FAKE_STRIPE_SECRET_KEY). */
  readonly secret_key?: string;
  readonly idempotency_window_ms?: number;
  /** Delay before an asynchronous refund changes status; null: only by settleRefunds(). Default 20 ms. */
  readonly refund_settle_ms?: number | null;
  /** How long a new PaymentIntent stays out of search results (Stripe: "less than a minute"). Default 0. */
  readonly search_delay_ms?: number;
  /** Whether the account may send raw card numbers (Stripe enables it on request). Default true. */
  readonly raw_card_data?: boolean;
  /** api_version of events (default: the description's, 2023-08-16). */
  readonly api_version?: string;
  readonly max_intents?: number;
  readonly max_refunds?: number;
  readonly max_disputes?: number;
  /** Requests and events kept for inspection (oldest dropped beyond). */
  readonly max_recorded?: number;
  /** Another validator (tests of the fake's checks); default the project's description. */
  readonly validator?: StripeValidator;
}

export interface RecordedRequest extends RecordedRequestBase<FakeStripeRoute> {
  /** The query decoded (bracket notation) and typed. */
  readonly query: Readonly<Record<string, unknown>>;
  readonly stripe_version: string | null;
  /** The form body decoded (bracket notation) and typed by the operation's schema. */
  readonly form: Readonly<Record<string, unknown>>;
  readonly request_id: string;
  /** For POSTs with an Idempotency-Key: processed anew, replayed, refused as a mismatch or as in flight. */
  readonly idempotency: 'new' | 'replayed' | 'mismatch' | 'in_flight' | null;
}

/** One attempt to deliver an event (signature: the Stripe-Signature header sent). */
export type FakeEventDelivery = WebhookDelivery;

export type FakeEventState = WebhookEventState;

export interface StripeEventJson {
  readonly id: string;
  readonly object: 'event';
  readonly api_version: string;
  readonly created: number;
  readonly data: { readonly object: Readonly<Record<string, unknown>>; readonly previous_attributes?: Readonly<Record<string, unknown>> };
  readonly livemode: false;
  readonly pending_webhooks: number;
  readonly request: { readonly id: string | null; readonly idempotency_key: string | null };
  readonly type: string;
}

/** Its signature is the Stripe-Signature header of its last delivery. */
export interface FakeEvent extends WebhookEventView {
  /** The id of data.object (pi_…, ch_…, re_…, dp_…). */
  readonly object_id: string;
  readonly payment_intent_id: string | null;
  readonly refund_id: string | null;
  readonly json: StripeEventJson;
}

export interface FakeRefundView {
  readonly id: string;
  readonly payment_intent: string;
  readonly charge: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly failure_reason: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  /** The refund object as the API answers it now. */
  readonly json: Readonly<Record<string, unknown>>;
}

/** A dispute's statuses, as the description lists them. */
export type FakeDisputeStatus =
  'warning_needs_response' | 'warning_under_review' | 'warning_closed' | 'needs_response' | 'under_review' | 'won' | 'lost';

export interface FakeDisputeView {
  readonly id: string;
  readonly payment_intent: string;
  readonly charge: string;
  readonly amount: number;
  readonly currency: string;
  readonly reason: string;
  readonly status: FakeDisputeStatus;
  /** evidence_details.due_by (unix seconds). */
  readonly due_by: number;
  /** The dispute object as Stripe shows it now. */
  readonly json: Readonly<Record<string, unknown>>;
}

export interface FakePaymentIntentView {
  readonly id: string;
  readonly client_secret: string;
  readonly status: string;
  /** automatic, or manual (an authorization, captured or canceled later). */
  readonly capture_method: string;
  readonly amount: number;
  /** What may still be captured (a requires_capture PaymentIntent's hold), else 0. */
  readonly amount_capturable: number;
  readonly amount_received: number;
  /** What a partial capture or a cancel released of an authorization (never captured, never a Refund). */
  readonly amount_released: number;
  readonly cancellation_reason: string | null;
  /** Pending and succeeded refunds. */
  readonly amount_refunded: number;
  readonly currency: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly return_url: string | null;
  readonly off_session: boolean;
  readonly card_last4: string | null;
  readonly latest_charge: string | null;
  readonly charges: readonly string[];
  readonly refunds: readonly FakeRefundView[];
  readonly disputes: readonly FakeDisputeView[];
  /** The code (decline_code when there is one) of last_payment_error, or null. */
  readonly last_error: { readonly code: string; readonly decline_code: string | null } | null;
  readonly three_ds: 'none' | 'pending' | 'succeeded' | 'failed';
  /** The 3-D Secure test page of a requires_action PaymentIntent. */
  readonly authentication_url: string | null;
  readonly idempotency_keys: readonly string[];
  /** The PaymentIntent object as the API answers it now. */
  readonly json: Readonly<Record<string, unknown>>;
}

export interface FakeStripe extends FakeProcessorControls<FakeStripeRoute, FakeEvent, RecordedRequest> {
  /** http://127.0.0.1:PORT, without a trailing slash. */
  readonly url: string;
  /** For the stripe package: new Stripe(secret_key, { host, port, protocol: 'http' }). */
  readonly host: string;
  readonly port: number;
  readonly secret_key: string;
  /** A fresh snapshot of every PaymentIntent, oldest first. */
  readonly paymentIntents: readonly FakePaymentIntentView[];
  paymentIntent(id: string): FakePaymentIntentView | undefined;
  /** PaymentIntents whose metadata[key] is value (at once, whatever search_delay_ms says). */
  intentsWithMetadata(key: string, value: string): FakePaymentIntentView[];
  readonly refunds: readonly FakeRefundView[];
  refund(id: string): FakeRefundView | undefined;
  /** Where events go and the signing secret (whsec_…); null stops sending (events are then 'no_endpoint'). */
  setWebhookEndpoint(url: string | null, secret?: string): void;
  /**
   * What the 3-D Secure page's buttons do, without a browser: completes or fails the pending
   * authentication; resolves (events delivered) with where the browser would be sent, or null.
   */
  authenticate(payment_intent_id: string, outcome: 'complete' | 'fail'): Promise<string | null>;
  /** Moves every asynchronous refund to its final status now; resolves when their events are delivered. */
  settleRefunds(): Promise<void>;
  readonly disputes: readonly FakeDisputeView[];
  dispute(id: string): FakeDisputeView | undefined;
  /**
   * The cardholder disputes a captured (succeeded) PaymentIntent's charge: a dispute of `amount`
   * (default: all that was captured) for `reason` (default 'fraudulent'), in `status` (default
   * needs_response: a chargeback, whose funds are withdrawn at once; warning_needs_response: an
   * inquiry). Events charge.dispute.created (and .funds_withdrawn for a chargeback); resolves once
   * they are delivered. Throws for an unknown or uncaptured PaymentIntent.
   */
  openDispute(
    payment_intent_id: string,
    options?: { readonly amount?: number; readonly reason?: string; readonly status?: 'needs_response' | 'warning_needs_response' },
  ): Promise<FakeDisputeView>;
  /** The dispute moves on while open (e.g. under_review once evidence is submitted): charge.dispute.updated. */
  updateDispute(dispute_id: string, status: OpenDisputeStatus): Promise<FakeDisputeView>;
  /**
   * The dispute is decided: charge.dispute.closed, and charge.dispute.funds_reinstated when a
   * chargeback is won (an inquiry closes as warning_closed whatever the outcome, CHOSEN).
   */
  closeDispute(dispute_id: string, outcome: 'won' | 'lost'): Promise<FakeDisputeView>;
  /**
   * A refund made in Stripe's Dashboard (outside the gateway): no metadata of ours, reason
   * requested_by_customer; `amount` default all that remains. Events refund.created and
   * charge.refunded (then the asynchronous test cards' later events as for any refund); resolves
   * once delivered. Throws with Stripe's message when Stripe would refuse it.
   */
  refundFromDashboard(payment_intent_id: string, amount?: number): Promise<FakeRefundView>;
  /**
   * An authorization (requires_capture) not captured in time: Stripe cancels it (canceled,
   * cancellation_reason automatic, the hold released; payment_intent.canceled). Later captures
   * are refused (payment_intent_unexpected_state). Throws when the PaymentIntent holds nothing.
   */
  expireAuthorization(payment_intent_id: string): Promise<void>;
  /** The next capture is made at the fake but never answered (failNext on the capture route with 'timeout'). */
  hangNextCapture(): void;
}

/** The statuses of a dispute still open. */
export type OpenDisputeStatus = 'needs_response' | 'under_review' | 'warning_needs_response' | 'warning_under_review';

/** The Stripe-Signature header of a webhook body: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">. */
export function stripeSignatureHeader(raw_body: string, secret: string, timestamp_s: number = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp_s}.${raw_body}`, 'utf8').digest('hex');
  return `t=${timestamp_s},v1=${v1}`;
}

type JsonObject = Record<string, unknown>;

interface CardState {
  readonly number: string;
  readonly exp_month: number;
  readonly exp_year: number;
  readonly cvc: string | null;
  readonly brand: string;
  readonly fingerprint: string;
  readonly test: cards.TestCard;
}

interface PaymentMethodState {
  readonly id: string;
  readonly created_s: number;
  readonly card: CardState;
  readonly billing_details: JsonObject;
}

interface ChargeState {
  readonly id: string;
  readonly created_s: number;
  readonly intent_id: string;
  readonly amount: number;
  readonly currency: string;
  readonly pm: PaymentMethodState;
  readonly decline: cards.Decline | null;
  readonly three_ds: 'none' | 'challenge' | 'frictionless';
  /** Set when the charge is captured (at once for automatic capture): an authorization has none before. */
  balance_transaction: string | null;
  /** Refunds asked for (pending or succeeded). */
  amount_refunded: number;
  /** false while an authorization (manual capture) holds the funds. */
  captured: boolean;
  amount_captured: number;
  /** What a partial capture or a cancel released of an authorization. */
  amount_released: number;
  disputed: boolean;
}

interface DisputeState {
  readonly seq: number;
  readonly id: string;
  readonly created_s: number;
  readonly charge_id: string;
  readonly intent_id: string;
  readonly amount: number;
  readonly currency: string;
  readonly reason: string;
  readonly due_by_s: number;
  readonly brand: string;
  /** An inquiry (warning_*: no funds withdrawn) rather than a chargeback. */
  readonly inquiry: boolean;
  status: FakeDisputeStatus;
  readonly balance_transactions: JsonObject[];
}

interface RefundState {
  readonly seq: number;
  readonly id: string;
  readonly created_s: number;
  readonly intent_id: string;
  readonly charge_id: string;
  readonly amount: number;
  readonly currency: string;
  readonly metadata: Record<string, string>;
  readonly reason: string | null;
  readonly behaviour: cards.RefundBehaviour;
  readonly balance_transaction: string;
  status: 'pending' | 'succeeded' | 'failed';
  failure_reason: string | null;
  failure_balance_transaction: string | null;
  settled: boolean;
  timer: NodeJS.Timeout | null;
}

interface ThreeDsState {
  phase: 'pending' | 'succeeded' | 'failed';
  readonly token: string;
  readonly return_url: string | null;
}

interface IntentState {
  readonly seq: number;
  readonly id: string;
  readonly client_secret: string;
  readonly created_s: number;
  readonly created_ms: number;
  readonly amount: number;
  readonly currency: string;
  readonly description: string | null;
  readonly metadata: Record<string, string>;
  readonly return_url: string | null;
  readonly off_session: boolean;
  readonly payment_method_types: readonly string[];
  readonly automatic_payment_methods: { readonly enabled: boolean; readonly allow_redirects?: string } | null;
  readonly request_three_d_secure: string;
  readonly receipt_email: string | null;
  readonly statement_descriptor: string | null;
  readonly statement_descriptor_suffix: string | null;
  readonly setup_future_usage: string | null;
  readonly capture_method: string;
  readonly confirmation_method: string;
  status: string;
  pm: PaymentMethodState | null;
  last_pm: PaymentMethodState | null;
  readonly charges: ChargeState[];
  last_payment_error: JsonObject | null;
  next_action: JsonObject | null;
  three_ds: ThreeDsState | null;
  amount_received: number;
  amount_capturable: number;
  canceled_at_s: number | null;
  cancellation_reason: string | null;
  readonly idempotency_keys: string[];
}

interface EventState extends OutboxEvent {
  readonly object_id: string;
  readonly payment_intent_id: string | null;
  readonly refund_id: string | null;
  readonly json: StripeEventJson;
}

type RecordedState = Writable<RecordedRequest>;

interface Answer extends FakeAnswer<EventState> {
  /** Whether an Idempotency-Key keeps this answer (false: the endpoint never began, e.g. invalid parameters). */
  readonly keep: boolean;
  readonly headers?: Readonly<Record<string, string>>;
}

interface StoredAnswer {
  readonly route: FakeStripeRoute;
  readonly params_hash: string;
  readonly status: number;
  readonly text: string;
  readonly request_id: string;
  readonly at_ms: number;
}

interface RequestContext {
  readonly request_id: string;
  readonly idempotency_key: string | null;
  /** The Stripe-Version the request named (the stripe package always names its pinned one), or null. */
  readonly stripe_version: string | null;
}

/** The first API version without payment_method_types on PaymentIntent creation (see processCreateIntent). */
const ENDIVE = '2026-09-30';

/** Whether an API version ("2026-10-28.endive") is this date or later; no version: the account's default, taken as older. */
function apiVersionAtLeast(version: string | null, date: string): boolean {
  return version !== null && /^\d{4}-\d{2}-\d{2}/.test(version) && version.slice(0, 10) >= date;
}

const BODY_MAX_BYTES = 64 * 1024;
const HELD_RESPONSES_MAX = 100;
const FAILURES_QUEUED_MAX = 100;
const RELEASED_AT_ONCE_MAX = 1000;
const WAIT_MAX_MS = 60_000;
const SEARCH_DELAY_MAX_MS = 3_600_000;
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CHALLENGE_PREFIX = '/3d_secure_2_test/';
const MERCHANT_NAME = 'Paygate test merchant';
const ROUTES: readonly FakeStripeRoute[] = [
  'POST /v1/payment_intents',
  'GET /v1/payment_intents/{intent}',
  'GET /v1/payment_intents/search',
  'POST /v1/payment_intents/{intent}/capture',
  'POST /v1/payment_intents/{intent}/cancel',
  'POST /v1/refunds',
  'GET /v1/refunds/{refund}',
  'GET /v1/refunds',
];
const SEARCH_FIELDS = new Set(['amount', 'created', 'currency', 'customer', 'metadata', 'status']);
/** Statuses a PaymentIntent may be canceled from (https://docs.stripe.com/api/payment_intents/cancel; processing left out: cards never stay there here). */
const CANCELABLE: readonly string[] = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action'];
/** CHOSEN: how long a dispute leaves for evidence (Stripe: the card network's deadline, often 7 to 21 days). */
const DISPUTE_EVIDENCE_S = 7 * 24 * 3600;
/** CHOSEN: the dispute fee, in the dispute currency's minor units (Stripe's 15.00 USD). */
const DISPUTE_FEE_MINOR = 1500;
/** The fields of a dispute's evidence (the description's dispute_evidence), none given here. */
const DISPUTE_EVIDENCE_FIELDS: readonly string[] = [
  'access_activity_log',
  'billing_address',
  'cancellation_policy',
  'cancellation_policy_disclosure',
  'cancellation_rebuttal',
  'customer_communication',
  'customer_email_address',
  'customer_name',
  'customer_purchase_ip',
  'customer_signature',
  'duplicate_charge_documentation',
  'duplicate_charge_explanation',
  'duplicate_charge_id',
  'product_description',
  'receipt',
  'refund_policy',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'service_date',
  'service_documentation',
  'shipping_address',
  'shipping_carrier',
  'shipping_date',
  'shipping_documentation',
  'shipping_tracking_number',
  'uncategorized_file',
  'uncategorized_text',
];

/** A PaymentIntent whose card was approved: captured, or authorized and waiting for its capture. */
function approvedStatus(status: string): boolean {
  return status === 'succeeded' || status === 'requires_capture';
}

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  const secret_key = options.secret_key ?? FAKE_STRIPE_SECRET_KEY;
  const idempotency_window_ms = options.idempotency_window_ms ?? 24 * 60 * 60 * 1000;
  const refund_settle_ms =
    options.refund_settle_ms === undefined
      ? 20
      : options.refund_settle_ms === null
        ? null
        : Math.min(Math.max(options.refund_settle_ms, 0), 600_000);
  const search_delay_ms = Math.min(Math.max(options.search_delay_ms ?? 0, 0), SEARCH_DELAY_MAX_MS);
  const raw_card_data = options.raw_card_data ?? true;
  const max_intents = options.max_intents ?? 10_000;
  const max_refunds = options.max_refunds ?? 10_000;
  const max_disputes = options.max_disputes ?? 10_000;
  const max_recorded = options.max_recorded ?? 10_000;
  const validator = options.validator ?? stripeValidator();
  validator.precompile();
  const api_version =
    options.api_version ?? String((validator.description.document.info as JsonObject | undefined)?.version ?? '2023-08-16');

  const violations = createViolationLog(max_recorded);
  const requests: RecordedState[] = [];
  const events: EventState[] = [];
  const intents = new Map<string, IntentState>();
  const charges = new Map<string, ChargeState>();
  const refunds = new Map<string, RefundState>();
  const disputes = new Map<string, DisputeState>();
  const idempotency = new Map<string, StoredAnswer>();
  const in_flight = new Set<string>();
  const failures = createFailureQueue<FakeStripeRoute>('fake stripe', FAILURES_QUEUED_MAX);
  const held_answers = createHeldAnswers(HELD_RESPONSES_MAX);
  const webhooks = createWebhookOutbox<EventState>({
    name: 'fake stripe',
    events,
    settings: options,
    // Signed anew at each attempt, with the time of the attempt (t=), as Stripe does.
    sign: (raw_body, secret) => stripeSignatureHeader(raw_body, secret),
    signature_header: 'stripe-signature',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      'cache-control': 'no-cache',
    },
    max_held_events: max_recorded,
    max_released_ids: RELEASED_AT_ONCE_MAX,
    wait_max_ms: WAIT_MAX_MS,
  });
  let request_seq = 0;
  let intent_seq = 0;
  let refund_seq = 0;
  let dispute_seq = 0;
  let base_url = '';

  const nowS = (): number => Math.floor(Date.now() / 1000);

  // ---------------------------------------------------------------- objects as the API shows them

  function pmJson(pm: PaymentMethodState): JsonObject {
    const card = pm.card;
    return {
      id: pm.id,
      object: 'payment_method',
      billing_details: pm.billing_details,
      card: {
        ...cardFacts(card),
        generated_from: null,
        networks: { available: [card.brand], preferred: null },
        three_d_secure_usage: { supported: card.test.three_ds !== 'not_supported' },
        wallet: null,
      },
      created: pm.created_s,
      customer: null,
      livemode: false,
      metadata: {},
      type: 'card',
    };
  }

  /** What a PaymentMethod's card and a Charge's payment_method_details.card both say of the card. */
  function cardFacts(card: CardState): JsonObject {
    return {
      brand: card.brand,
      checks: cardChecks(card),
      country: card.test.country,
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      fingerprint: card.fingerprint,
      funding: card.test.funding,
      last4: card.number.slice(-4),
    };
  }

  function cardChecks(card: CardState): JsonObject {
    const cvc_check =
      card.cvc === null
        ? null
        : card.test.on_session !== 'approve' && card.test.on_session !== 'authenticate' && card.test.on_session.code === 'incorrect_cvc'
          ? 'fail'
          : 'pass';
    return { address_line1_check: null, address_postal_code_check: null, cvc_check };
  }

  function chargeJson(charge: ChargeState): JsonObject {
    const intent = intents.get(charge.intent_id);
    const succeeded = charge.decline === null;
    const card = charge.pm.card;
    const decline = charge.decline;
    return {
      id: charge.id,
      object: 'charge',
      amount: charge.amount,
      amount_captured: succeeded ? charge.amount_captured : 0,
      amount_refunded: charge.amount_refunded + charge.amount_released,
      application: null,
      application_fee: null,
      application_fee_amount: null,
      balance_transaction: charge.balance_transaction,
      billing_details: charge.pm.billing_details,
      calculated_statement_descriptor: 'PAYGATE TEST',
      captured: succeeded && charge.captured,
      created: charge.created_s,
      currency: charge.currency,
      customer: null,
      description: intent?.description ?? null,
      disputed: charge.disputed,
      failure_balance_transaction: null,
      failure_code: decline?.code ?? null,
      failure_message: decline?.message ?? null,
      fraud_details: {},
      invoice: null,
      livemode: false,
      metadata: { ...(intent?.metadata ?? {}) },
      on_behalf_of: null,
      outcome: decline
        ? {
            network_status: 'declined_by_network',
            reason: decline.decline_code ?? decline.code,
            risk_level: 'normal',
            risk_score: 32,
            seller_message: cards.sellerMessage(decline),
            type: 'issuer_declined',
          }
        : {
            network_status: 'approved_by_network',
            reason: null,
            risk_level: 'normal',
            risk_score: 32,
            seller_message: 'Payment complete.',
            type: 'authorized',
          },
      paid: succeeded,
      payment_intent: charge.intent_id,
      payment_method: charge.pm.id,
      payment_method_details: {
        card: {
          ...cardFacts(card),
          installments: null,
          mandate: null,
          network: card.brand,
          network_token: { used: false },
          three_d_secure:
            charge.three_ds === 'none'
              ? null
              : { authentication_flow: charge.three_ds, result: 'authenticated', result_reason: null, version: '2.2.0' },
          wallet: null,
        },
        type: 'card',
      },
      receipt_email: intent?.receipt_email ?? null,
      receipt_number: null,
      receipt_url: succeeded ? `https://pay.stripe.com/receipts/payment/${charge.id}` : null,
      refunded: succeeded && charge.amount_refunded + charge.amount_released >= charge.amount,
      review: null,
      shipping: null,
      source_transfer: null,
      statement_descriptor: intent?.statement_descriptor ?? null,
      statement_descriptor_suffix: intent?.statement_descriptor_suffix ?? null,
      status: succeeded ? 'succeeded' : 'failed',
      transfer_data: null,
      transfer_group: null,
    };
  }

  function intentJson(intent: IntentState): JsonObject {
    const latest = intent.charges[intent.charges.length - 1];
    const automatic = intent.automatic_payment_methods;
    return {
      id: intent.id,
      object: 'payment_intent',
      amount: intent.amount,
      amount_capturable: intent.amount_capturable,
      amount_details: { tip: {} },
      amount_received: intent.amount_received,
      application: null,
      application_fee_amount: null,
      automatic_payment_methods: automatic
        ? { ...(automatic.allow_redirects ? { allow_redirects: automatic.allow_redirects } : {}), enabled: automatic.enabled }
        : null,
      canceled_at: intent.canceled_at_s,
      cancellation_reason: intent.cancellation_reason,
      capture_method: intent.capture_method,
      client_secret: intent.client_secret,
      confirmation_method: intent.confirmation_method,
      created: intent.created_s,
      currency: intent.currency,
      customer: null,
      description: intent.description,
      invoice: null,
      last_payment_error: intent.last_payment_error,
      latest_charge: latest?.id ?? null,
      livemode: false,
      metadata: { ...intent.metadata },
      next_action: intent.next_action,
      on_behalf_of: null,
      payment_method: intent.pm?.id ?? null,
      payment_method_options: {
        card: { installments: null, mandate_options: null, network: null, request_three_d_secure: intent.request_three_d_secure },
      },
      payment_method_types: [...intent.payment_method_types],
      processing: null,
      receipt_email: intent.receipt_email,
      review: null,
      setup_future_usage: intent.setup_future_usage,
      shipping: null,
      statement_descriptor: intent.statement_descriptor,
      statement_descriptor_suffix: intent.statement_descriptor_suffix,
      status: intent.status,
      transfer_data: null,
      transfer_group: null,
    };
  }

  function refundJson(refund: RefundState): JsonObject {
    const json: JsonObject = {
      id: refund.id,
      object: 'refund',
      amount: refund.amount,
      balance_transaction: refund.balance_transaction,
      charge: refund.charge_id,
      created: refund.created_s,
      currency: refund.currency,
    };
    if (refund.failure_balance_transaction !== null) json.failure_balance_transaction = refund.failure_balance_transaction;
    if (refund.failure_reason !== null) json.failure_reason = refund.failure_reason;
    json.metadata = { ...refund.metadata };
    json.payment_intent = refund.intent_id;
    json.reason = refund.reason;
    json.receipt_number = null;
    json.source_transfer_reversal = null;
    json.status = refund.status;
    json.transfer_reversal = null;
    return json;
  }

  function requestLogUrl(context: RequestContext): string {
    return `https://dashboard.stripe.com/test/logs/${context.request_id}?t=${nowS()}`;
  }

  /** Stripe's error object (https://docs.stripe.com/api/errors). */
  function errorAnswer(
    status: number,
    context: RequestContext,
    error: JsonObject,
    keep: boolean,
    events: readonly EventState[] = [],
  ): Answer {
    const body: JsonObject = {};
    for (const key of ['charge', 'code', 'decline_code'] as const)
      if (error[key] !== undefined && error[key] !== null) body[key] = error[key];
    if (typeof error.code === 'string') body.doc_url = cards.docUrl(error.code);
    body.message = error.message;
    for (const key of ['param', 'payment_intent', 'payment_method'] as const)
      if (error[key] !== undefined && error[key] !== null) body[key] = error[key];
    body.request_log_url = requestLogUrl(context);
    body.type = error.type;
    return { status, json: { error: body }, events, keep };
  }

  function invalidRequest(
    context: RequestContext,
    message: string,
    extra: { code?: string; param?: string | undefined } = {},
    status = 400,
    keep = true,
  ): Answer {
    return errorAnswer(status, context, { type: 'invalid_request_error', message, ...extra }, keep);
  }

  // ---------------------------------------------------------------- events

  function makeEvent(type: string, object: JsonObject, context: RequestContext | null, previous_attributes?: JsonObject): EventState {
    const id = newId('evt');
    const json: StripeEventJson = {
      id,
      object: 'event',
      api_version,
      created: nowS(),
      data: previous_attributes ? { object, previous_attributes } : { object },
      livemode: false,
      pending_webhooks: webhooks.endpoint ? 1 : 0,
      request: { id: context?.request_id ?? null, idempotency_key: context?.idempotency_key ?? null },
      type,
    };
    // Stripe sends events pretty-printed; the signature covers these exact bytes.
    const body = JSON.stringify(json, null, 2);
    violations.add('event', `event ${type} ${id}`, validator.validateEvent(json));
    const kind = String(object.object);
    const object_id = String(object.id);
    const event: EventState = {
      id,
      type,
      object_id,
      payment_intent_id: kind === 'payment_intent' ? object_id : typeof object.payment_intent === 'string' ? object.payment_intent : null,
      refund_id: kind === 'refund' ? object_id : null,
      body,
      json,
      created_ms: Date.now(),
      state: 'queued',
      signature: null,
      status: null,
      deliveries: [],
    };
    events.push(event);
    keepBounded(events, max_recorded);
    return event;
  }

  // ---------------------------------------------------------------- payment intents

  function newPaymentMethod(data: JsonObject): PaymentMethodState | cards.Decline {
    const card = asRecord(data.card) ?? {};
    const number = String(card.number ?? '').replace(/\s+/g, '');
    const exp_month = Number(card.exp_month);
    const exp_year = Number(card.exp_year);
    const cvc = typeof card.cvc === 'string' && card.cvc !== '' ? card.cvc : null;
    const invalid = cards.invalidCardData({ number, exp_month, exp_year, cvc });
    if (invalid) return invalid;
    const billing = asRecord(data.billing_details) ?? {};
    const address = asRecord(billing.address);
    const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
    return {
      id: newId('pm'),
      created_s: nowS(),
      card: {
        number,
        exp_month,
        exp_year: exp_year < 100 ? 2000 + exp_year : exp_year,
        cvc,
        brand: cards.brandOf(number),
        fingerprint: createHash('sha256').update(`paygate-fake-stripe:${number}`).digest('base64url').slice(0, 16),
        test: cards.testCardFor(number),
      },
      billing_details: {
        address: {
          city: text(address?.city),
          country: text(address?.country),
          line1: text(address?.line1),
          line2: text(address?.line2),
          postal_code: text(address?.postal_code),
          state: text(address?.state),
        },
        email: text(billing.email),
        name: text(billing.name),
        phone: text(billing.phone),
      },
    };
  }

  function addCharge(
    intent: IntentState,
    pm: PaymentMethodState,
    decline: cards.Decline | null,
    three_ds: ChargeState['three_ds'],
  ): ChargeState {
    const charge: ChargeState = {
      id: newId('ch'),
      created_s: nowS(),
      intent_id: intent.id,
      amount: intent.amount,
      currency: intent.currency,
      pm,
      decline,
      three_ds,
      balance_transaction: decline || intent.capture_method === 'manual' ? null : newId('txn'),
      amount_refunded: 0,
      captured: decline === null && intent.capture_method !== 'manual',
      amount_captured: decline === null && intent.capture_method !== 'manual' ? intent.amount : 0,
      amount_released: 0,
      disputed: false,
    };
    intent.charges.push(charge);
    charges.set(charge.id, charge);
    return charge;
  }

  /** The card approved: captured at once (succeeded), or held for a later capture (manual: requires_capture). */
  function succeed(
    intent: IntentState,
    pm: PaymentMethodState,
    three_ds: ChargeState['three_ds'],
    context: RequestContext | null,
  ): EventState[] {
    const charge = addCharge(intent, pm, null, three_ds);
    intent.next_action = null;
    intent.last_payment_error = null;
    if (intent.capture_method === 'manual') {
      intent.status = 'requires_capture';
      intent.amount_capturable = intent.amount;
      return [
        makeEvent('charge.succeeded', chargeJson(charge), context),
        makeEvent('payment_intent.amount_capturable_updated', intentJson(intent), context),
      ];
    }
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    return [makeEvent('charge.succeeded', chargeJson(charge), context), makeEvent('payment_intent.succeeded', intentJson(intent), context)];
  }

  /** The attempt fails: the PaymentIntent goes back to requires_payment_method with last_payment_error. */
  function fail(
    intent: IntentState,
    pm: PaymentMethodState,
    decline: cards.Decline,
    three_ds: ChargeState['three_ds'],
    context: RequestContext | null,
  ): { charge: ChargeState; error: JsonObject; events: EventState[] } {
    const charge = addCharge(intent, pm, decline, three_ds);
    const error: JsonObject = { charge: charge.id, code: decline.code };
    if (decline.decline_code !== null) error.decline_code = decline.decline_code;
    error.doc_url = cards.docUrl(decline.code);
    error.message = decline.message;
    if (decline.param !== null) error.param = decline.param;
    error.payment_method = pmJson(pm);
    error.type = 'card_error';
    intent.status = 'requires_payment_method';
    intent.last_payment_error = error;
    intent.next_action = null;
    intent.last_pm = pm;
    intent.pm = null;
    return {
      charge,
      error,
      events: [
        makeEvent('charge.failed', chargeJson(charge), context),
        makeEvent('payment_intent.payment_failed', intentJson(intent), context),
      ],
    };
  }

  function processCreateIntent(body: JsonObject, context: RequestContext): Answer {
    if (intents.size >= max_intents) {
      violations.add('fake', 'POST /v1/payment_intents', [`the fake holds ${max_intents} PaymentIntents already (max_intents)`]);
      return errorAnswer(500, context, { type: 'api_error', message: 'The fake holds too many PaymentIntents.' }, false);
    }
    const confirm = body.confirm === true;
    for (const name of ['return_url', 'off_session', 'error_on_requires_action'] as const) {
      // CHOSEN wording; the description: "This parameter can only be used with confirm=true".
      if (body[name] !== undefined && !confirm)
        return invalidRequest(context, `The parameter ${name} can only be used with confirm=true.`, { param: name });
    }
    const amount = Number(body.amount);
    const currency = String(body.currency ?? '').toLowerCase();
    if (!/^[a-z]{3}$/.test(currency))
      return invalidRequest(
        context,
        `Invalid currency: ${String(body.currency)}. Stripe currently supports these currencies: usd, eur, gbp, …`,
        { param: 'currency' },
      );
    const minimum = cards.MINIMUM_AMOUNTS[currency];
    if (minimum !== undefined && amount < minimum)
      return invalidRequest(context, `Amount must be at least ${cards.formatAmount(minimum, currency)} ${currency}`, {
        code: 'amount_too_small',
        param: 'amount',
      });
    if (amount < 1)
      return invalidRequest(context, 'This value must be greater than or equal to 1.', {
        code: 'parameter_invalid_integer',
        param: 'amount',
      });
    if (amount > cards.MAXIMUM_AMOUNT)
      return invalidRequest(context, `Amount must be no more than ${cards.formatAmount(cards.MAXIMUM_AMOUNT, currency)}`, {
        code: 'amount_too_large',
        param: 'amount',
      });

    if (body.payment_method_types !== undefined && apiVersionAtLeast(context.stripe_version, ENDIVE)) {
      // CHOSEN from the stripe package's changelog (23.0.0, API 2026-09-30.endive): "Remove support for
      // payment_method_types on … PaymentIntentCreateParams"; allowed_payment_method_types replaces it.
      return invalidRequest(context, 'Received unknown parameter: payment_method_types', {
        code: 'parameter_unknown',
        param: 'payment_method_types',
      });
    }
    const listed = body.allowed_payment_method_types ?? body.payment_method_types;
    const given_types = Array.isArray(listed) ? listed.map(String) : null;
    const given_automatic = asRecord(body.automatic_payment_methods);
    if (body.payment_method_types !== undefined && body.allowed_payment_method_types !== undefined)
      return invalidRequest(context, 'You may only specify one of these parameters: allowed_payment_method_types, payment_method_types.', {
        param: 'payment_method_types',
      });
    if (given_types && given_automatic)
      return invalidRequest(
        context,
        `You may only specify one of these parameters: automatic_payment_methods, ${body.allowed_payment_method_types !== undefined ? 'allowed_payment_method_types' : 'payment_method_types'}.`,
        { param: 'automatic_payment_methods' },
      );
    // Since 2023-08-16, no payment_method_types means automatic payment methods (managed in the Dashboard).
    const automatic = given_types
      ? null
      : {
          enabled: given_automatic ? given_automatic.enabled === true : true,
          ...(typeof given_automatic?.allow_redirects === 'string' ? { allow_redirects: given_automatic.allow_redirects } : {}),
        };
    // CHOSEN: the account's Dashboard enables cards only, so automatic payment methods mean ['card'].
    const payment_method_types = given_types ?? ['card'];

    const data = asRecord(body.payment_method_data);
    if (typeof body.payment_method === 'string') {
      // CHOSEN: the fake keeps no PaymentMethods (not even Stripe's pm_card_* test ones): raw card data only.
      return invalidRequest(context, `No such PaymentMethod: '${body.payment_method}'`, {
        code: 'resource_missing',
        param: 'payment_method',
      });
    }
    if (data && data.type !== 'card')
      return invalidRequest(context, `The fake Stripe takes card payment methods only (payment_method_data[type] ${String(data.type)}).`, {
        param: 'payment_method_data[type]',
      });
    if (data && !payment_method_types.includes('card')) {
      return invalidRequest(
        context,
        `The PaymentMethod provided (card) is not allowed for this PaymentIntent. Please attach a PaymentMethod of one of the following types: ${payment_method_types.join(', ')}.`,
        { code: 'payment_intent_incompatible_payment_method', param: 'payment_method_data[type]' },
      );
    }
    if (data && !raw_card_data) {
      // Stripe refuses raw card numbers unless the account has raw card data APIs enabled.
      return invalidRequest(
        context,
        'Sending credit card numbers directly to the Stripe API is generally unsafe. We suggest you use test tokens that map to the test card you are using, see https://stripe.com/docs/testing. To enable testing raw card data APIs, see https://support.stripe.com/questions/enabling-access-to-raw-card-data-apis.',
      );
    }
    if (confirm && !data) {
      return invalidRequest(
        context,
        "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.",
        { code: 'payment_intent_unexpected_state' },
      );
    }
    if (confirm && automatic?.enabled && automatic.allow_redirects !== 'never' && typeof body.return_url !== 'string') {
      // CHOSEN: asked of off-session confirmations too (a connector that sends return_url or payment_method_types works either way).
      return invalidRequest(
        context,
        "This PaymentIntent is configured to accept payment methods enabled in your Dashboard. Because some of these payment methods might redirect your customer off of your page, you must provide a `return_url`. If you don't want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and `automatic_payment_methods[allow_redirects]` to `never` when creating Setup Intents and Payment Intents.",
      );
    }

    let pm: PaymentMethodState | null = null;
    if (data) {
      const made = newPaymentMethod(data);
      if ('code' in made) {
        // CHOSEN: card data refused while making the PaymentMethod: no PaymentIntent is made.
        return errorAnswer(
          402,
          context,
          { type: 'card_error', code: made.code, message: made.message, param: made.param ?? undefined },
          true,
        );
      }
      pm = made;
    }

    intent_seq += 1;
    const options = asRecord(asRecord(body.payment_method_options)?.card);
    const metadata: Record<string, string> = {};
    const given_metadata = asRecord(body.metadata);
    if (given_metadata) for (const [key, value] of Object.entries(given_metadata)) if (value !== '') metadata[key] = String(value);
    const id = newId('pi');
    const intent: IntentState = {
      seq: intent_seq,
      id,
      client_secret: `${id}_secret_${randomToken(25)}`,
      created_s: nowS(),
      created_ms: Date.now(),
      amount,
      currency,
      description: typeof body.description === 'string' ? body.description : null,
      metadata,
      return_url: typeof body.return_url === 'string' ? body.return_url : null,
      off_session: body.off_session === true || body.off_session === 'one_off' || body.off_session === 'recurring',
      payment_method_types,
      automatic_payment_methods: automatic,
      request_three_d_secure: typeof options?.request_three_d_secure === 'string' ? options.request_three_d_secure : 'automatic',
      receipt_email: typeof body.receipt_email === 'string' ? body.receipt_email : null,
      statement_descriptor: typeof body.statement_descriptor === 'string' ? body.statement_descriptor : null,
      statement_descriptor_suffix: typeof body.statement_descriptor_suffix === 'string' ? body.statement_descriptor_suffix : null,
      setup_future_usage: typeof body.setup_future_usage === 'string' ? body.setup_future_usage : null,
      capture_method: typeof body.capture_method === 'string' ? body.capture_method : 'automatic',
      confirmation_method: typeof body.confirmation_method === 'string' ? body.confirmation_method : 'automatic',
      status: pm ? 'requires_confirmation' : 'requires_payment_method',
      pm,
      last_pm: pm,
      charges: [],
      last_payment_error: null,
      next_action: null,
      three_ds: null,
      amount_received: 0,
      amount_capturable: 0,
      canceled_at_s: null,
      cancellation_reason: null,
      idempotency_keys: [],
    };
    intents.set(intent.id, intent);
    const created_event = makeEvent('payment_intent.created', intentJson(intent), context);
    if (!confirm || !pm) return { status: 200, json: intentJson(intent), events: [created_event], keep: true };

    const test = pm.card.test;
    let outcome: 'approve' | cards.Decline | 'authenticate' = intent.off_session ? test.off_session : test.on_session;
    if (
      !intent.off_session &&
      outcome === 'approve' &&
      test.three_ds === 'supported' &&
      (intent.request_three_d_secure === 'any' || intent.request_three_d_secure === 'challenge')
    )
      outcome = 'authenticate';
    // "Stripe skips the CVC check if you omit it, so the check can't fail" [testing].
    if (outcome !== 'approve' && outcome !== 'authenticate' && outcome.code === 'incorrect_cvc' && pm.card.cvc === null)
      outcome = 'approve';
    if (outcome === 'authenticate' && body.error_on_requires_action === true) outcome = cards.DECLINES.authentication_required;

    if (outcome === 'approve') {
      const three_ds = test.three_ds === 'frictionless' ? 'frictionless' : 'none';
      const created = [created_event, ...succeed(intent, pm, three_ds, context)];
      return { status: 200, json: intentJson(intent), events: created, keep: true };
    }
    if (outcome === 'authenticate') {
      const token = randomToken(24);
      intent.three_ds = { phase: 'pending', token, return_url: intent.return_url };
      intent.status = 'requires_action';
      const page = `${base_url}${CHALLENGE_PREFIX}${intent.id}/${token}`;
      intent.next_action =
        intent.return_url !== null
          ? { redirect_to_url: { return_url: intent.return_url, url: page }, type: 'redirect_to_url' }
          : // CHOSEN: without a return_url Stripe hands the authentication to Stripe.js (use_stripe_sdk).
            { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: page, source: newId('src') } };
      return {
        status: 200,
        json: intentJson(intent),
        events: [created_event, makeEvent('payment_intent.requires_action', intentJson(intent), context)],
        keep: true,
      };
    }
    const failed = fail(intent, pm, outcome, 'none', context);
    return errorAnswer(402, context, { ...failed.error, payment_intent: intentJson(intent) }, true, [created_event, ...failed.events]);
  }

  /** Completes or fails a pending 3-D Secure; returns the events and where the browser goes next. */
  function finishAuthentication(intent: IntentState, outcome: 'complete' | 'fail'): { events: EventState[]; redirect_to: string | null } {
    const three_ds = intent.three_ds;
    const pm = intent.pm;
    if (!three_ds || three_ds.phase !== 'pending' || !pm) return { events: [], redirect_to: returnUrlOf(intent) };
    let created: EventState[];
    if (outcome === 'fail') {
      three_ds.phase = 'failed';
      intent.status = 'requires_payment_method';
      intent.next_action = null;
      intent.last_payment_error = {
        code: cards.AUTHENTICATION_FAILURE.code,
        doc_url: cards.docUrl(cards.AUTHENTICATION_FAILURE.code),
        message: cards.AUTHENTICATION_FAILURE.message,
        payment_method: pmJson(pm),
        type: cards.AUTHENTICATION_FAILURE.type,
      };
      intent.last_pm = pm;
      intent.pm = null;
      created = [makeEvent('payment_intent.payment_failed', intentJson(intent), null)];
    } else {
      three_ds.phase = 'succeeded';
      const after = pm.card.test.after_authentication;
      created = after === 'approve' ? succeed(intent, pm, 'challenge', null) : fail(intent, pm, after, 'challenge', null).events;
    }
    return { events: created, redirect_to: returnUrlOf(intent) };
  }

  /** The return_url with Stripe's parameters, once the authentication is over; null without a return_url. */
  function returnUrlOf(intent: IntentState): string | null {
    const three_ds = intent.three_ds;
    if (!three_ds?.return_url || three_ds.phase === 'pending') return null;
    // An authorization approved (requires_capture) returns as succeeded: the customer's part is done.
    const redirect_status =
      intent.status === 'succeeded' || intent.status === 'requires_capture'
        ? 'succeeded'
        : intent.status === 'processing'
          ? 'processing'
          : 'failed';
    const separator = three_ds.return_url.includes('?') ? '&' : '?';
    return `${three_ds.return_url}${separator}payment_intent=${encodeURIComponent(intent.id)}&payment_intent_client_secret=${encodeURIComponent(intent.client_secret)}&redirect_status=${redirect_status}`;
  }

  function handleChallenge(method: string, path: string, body: string, record: RecordedState, response: http.ServerResponse): void {
    const [intent_id = '', token = ''] = path.slice(CHALLENGE_PREFIX.length).split('/').map(safeDecode);
    const intent = intents.get(intent_id);
    const { page: html, redirect } = pageAnswers(response, (status) => {
      record.status = status;
    });
    if (!intent?.three_ds || intent.three_ds.token !== token) return html(404, unknownAuthenticationPage());
    if (intent.three_ds.phase !== 'pending') {
      const target = returnUrlOf(intent);
      return target ? redirect(target) : html(200, finishedPage(intent.three_ds.phase === 'succeeded' && approvedStatus(intent.status)));
    }
    if (method === 'GET')
      return html(200, challengePage({ action: path, amount: intent.amount, currency: intent.currency, merchant: MERCHANT_NAME }));
    if (method !== 'POST') return html(405, unknownAuthenticationPage());
    const outcome = new URLSearchParams(body).get('outcome') === 'complete' ? 'complete' : 'fail';
    const finished = finishAuthentication(intent, outcome);
    void webhooks.publish(finished.events);
    return finished.redirect_to ? redirect(finished.redirect_to) : html(200, finishedPage(approvedStatus(intent.status)));
  }

  // ---------------------------------------------------------------- authorizations: capture and cancel

  function unexpectedState(context: RequestContext, intent: IntentState, message: string): Answer {
    return errorAnswer(
      400,
      context,
      { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message, payment_intent: intentJson(intent) },
      true,
    );
  }

  function processCapture(intent_id: string, body: JsonObject, context: RequestContext): Answer {
    const intent = intents.get(intent_id);
    if (!intent)
      return invalidRequest(context, `No such payment_intent: '${intent_id}'`, { code: 'resource_missing', param: 'intent' }, 404);
    if (intent.status !== 'requires_capture')
      return unexpectedState(
        context,
        intent,
        `This PaymentIntent could not be captured because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
      );
    const charge = intent.charges[intent.charges.length - 1];
    if (!charge || charge.decline !== null || charge.captured) {
      violations.add('fake', `POST /v1/payment_intents/${intent_id}/capture`, [
        'a requires_capture PaymentIntent without an uncaptured charge',
      ]);
      return errorAnswer(500, context, { type: 'api_error', message: 'The fake lost the charge to capture.' }, false);
    }
    const given = body.amount_to_capture;
    if (given !== undefined && (!Number.isInteger(given) || (given as number) < 1))
      return invalidRequest(context, 'Invalid positive integer', { code: 'parameter_invalid_integer', param: 'amount_to_capture' });
    const amount = given === undefined ? intent.amount_capturable : (given as number);
    if (amount > intent.amount_capturable)
      // CHOSEN wording and code.
      return invalidRequest(
        context,
        `The amount to capture (${cards.formatAmount(amount, intent.currency)}) is greater than the amount capturable (${cards.formatAmount(intent.amount_capturable, intent.currency)}).`,
        { code: 'amount_too_large', param: 'amount_to_capture' },
      );
    charge.captured = true;
    charge.amount_captured = amount;
    charge.amount_released = charge.amount - amount;
    charge.balance_transaction = newId('txn');
    intent.status = 'succeeded';
    intent.amount_received = amount;
    intent.amount_capturable = 0;
    const created = [
      makeEvent('charge.captured', chargeJson(charge), context),
      makeEvent('payment_intent.succeeded', intentJson(intent), context),
    ];
    return { status: 200, json: intentJson(intent), events: created, keep: true };
  }

  /** Cancels a PaymentIntent (the API's cancel, or Stripe itself when an authorization expires); the events, or the status that forbids it. */
  function cancelIntent(intent: IntentState, reason: string | null, context: RequestContext | null): EventState[] | string {
    if (!CANCELABLE.includes(intent.status)) return intent.status;
    const charge = intent.charges[intent.charges.length - 1];
    // The hold of an authorization is released.
    if (intent.status === 'requires_capture' && charge && charge.decline === null && !charge.captured)
      charge.amount_released = charge.amount;
    if (intent.three_ds?.phase === 'pending') intent.three_ds.phase = 'failed';
    intent.status = 'canceled';
    intent.amount_capturable = 0;
    intent.next_action = null;
    intent.canceled_at_s = nowS();
    intent.cancellation_reason = reason;
    return [makeEvent('payment_intent.canceled', intentJson(intent), context)];
  }

  function processCancel(intent_id: string, body: JsonObject, context: RequestContext): Answer {
    const intent = intents.get(intent_id);
    if (!intent)
      return invalidRequest(context, `No such payment_intent: '${intent_id}'`, { code: 'resource_missing', param: 'intent' }, 404);
    const done = cancelIntent(intent, typeof body.cancellation_reason === 'string' ? body.cancellation_reason : null, context);
    if (typeof done === 'string')
      return unexpectedState(
        context,
        intent,
        `You cannot cancel this PaymentIntent because it has a status of ${done}. Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE.join(', ')}, processing.`,
      );
    return { status: 200, json: intentJson(intent), events: done, keep: true };
  }

  // ---------------------------------------------------------------- disputes

  function balanceTransaction(amount: number, currency: string, fee: number, description: string, source: string): JsonObject {
    const created = nowS();
    return {
      id: newId('txn'),
      object: 'balance_transaction',
      amount,
      available_on: created,
      created,
      currency,
      description,
      exchange_rate: null,
      fee,
      fee_details: fee === 0 ? [] : [{ amount: fee, application: null, currency, description: 'Dispute fee', type: 'stripe_fee' }],
      net: amount - fee,
      reporting_category: 'dispute',
      source,
      status: 'available',
      type: 'adjustment',
    };
  }

  function disputeJson(dispute: DisputeState): JsonObject {
    const evidence: JsonObject = {};
    for (const field of DISPUTE_EVIDENCE_FIELDS) evidence[field] = null;
    return {
      id: dispute.id,
      object: 'dispute',
      amount: dispute.amount,
      balance_transactions: dispute.balance_transactions.map((t) => ({ ...t })),
      charge: dispute.charge_id,
      created: dispute.created_s,
      currency: dispute.currency,
      evidence,
      evidence_details: { due_by: dispute.due_by_s, has_evidence: false, past_due: false, submission_count: 0 },
      is_charge_refundable: false,
      livemode: false,
      metadata: {},
      payment_intent: dispute.intent_id,
      payment_method_details: { card: { brand: dispute.brand, network_reason_code: null }, type: 'card' },
      reason: dispute.reason,
      status: dispute.status,
    };
  }

  function openDispute(
    intent: IntentState,
    options: { readonly amount?: number; readonly reason?: string; readonly status?: 'needs_response' | 'warning_needs_response' },
  ): { dispute: DisputeState; events: EventState[] } {
    const charge = intent.charges[intent.charges.length - 1];
    if (intent.status !== 'succeeded' || !charge || !charge.captured)
      throw new Error(`fake stripe: ${intent.id} has no captured charge to dispute (status ${intent.status})`);
    if (disputes.size >= max_disputes) throw new Error(`fake stripe: the fake holds ${max_disputes} disputes already (max_disputes)`);
    const amount = options.amount ?? charge.amount_captured;
    if (!Number.isInteger(amount) || amount < 1 || amount > charge.amount_captured)
      throw new Error(`fake stripe: a dispute of ${amount} of a charge of ${charge.amount_captured} captured`);
    const status = options.status ?? 'needs_response';
    dispute_seq += 1;
    const created_s = nowS();
    const dispute: DisputeState = {
      seq: dispute_seq,
      id: newId('dp'),
      created_s,
      charge_id: charge.id,
      intent_id: intent.id,
      amount,
      currency: charge.currency,
      reason: options.reason ?? 'fraudulent',
      due_by_s: created_s + DISPUTE_EVIDENCE_S,
      brand: charge.pm.card.brand,
      inquiry: status === 'warning_needs_response',
      status,
      balance_transactions: [],
    };
    disputes.set(dispute.id, dispute);
    charge.disputed = true;
    const created = [makeEvent('charge.dispute.created', disputeJson(dispute), null)];
    if (!dispute.inquiry) {
      // A chargeback takes the disputed amount and the fee from the balance at once.
      dispute.balance_transactions.push(
        balanceTransaction(-amount, dispute.currency, DISPUTE_FEE_MINOR, `Chargeback withdrawal for ${charge.id}`, dispute.id),
      );
      created.push(makeEvent('charge.dispute.funds_withdrawn', disputeJson(dispute), null));
    }
    return { dispute, events: created };
  }

  function moveDispute(dispute: DisputeState, status: FakeDisputeStatus): EventState[] {
    if (dispute.status === 'won' || dispute.status === 'lost' || dispute.status === 'warning_closed')
      throw new Error(`fake stripe: dispute ${dispute.id} is closed (${dispute.status})`);
    const previous = { status: dispute.status };
    if (status === 'won' || status === 'lost') {
      dispute.status = dispute.inquiry ? 'warning_closed' : status;
      const created = [makeEvent('charge.dispute.closed', disputeJson(dispute), null, previous)];
      if (!dispute.inquiry && status === 'won') {
        dispute.balance_transactions.push(
          balanceTransaction(dispute.amount, dispute.currency, 0, `Chargeback reversal for ${dispute.charge_id}`, dispute.id),
        );
        created.push(makeEvent('charge.dispute.funds_reinstated', disputeJson(dispute), null));
      }
      return created;
    }
    dispute.status = status;
    return [makeEvent('charge.dispute.updated', disputeJson(dispute), null, previous)];
  }

  // ---------------------------------------------------------------- refunds

  function processCreateRefund(body: JsonObject, context: RequestContext): Answer {
    let intent: IntentState | undefined;
    if (typeof body.charge === 'string') {
      const charge = charges.get(body.charge);
      if (!charge) return invalidRequest(context, `No such charge: '${body.charge}'`, { code: 'resource_missing', param: 'charge' });
      intent = intents.get(charge.intent_id);
      if (typeof body.payment_intent === 'string' && body.payment_intent !== charge.intent_id)
        return invalidRequest(context, `The charge ${charge.id} does not belong to the PaymentIntent ${body.payment_intent}.`, {
          param: 'payment_intent',
        });
    } else if (typeof body.payment_intent === 'string') {
      intent = intents.get(body.payment_intent);
      if (!intent)
        return invalidRequest(context, `No such payment_intent: '${body.payment_intent}'`, {
          code: 'resource_missing',
          param: 'payment_intent',
        });
    } else {
      // CHOSEN wording.
      return invalidRequest(context, 'One of the following params should be provided for this request: payment_intent or charge.');
    }
    if (!intent) return invalidRequest(context, 'The charge has no PaymentIntent.', { param: 'charge' });
    const charge = intent.status === 'succeeded' ? intent.charges[intent.charges.length - 1] : undefined;
    // CHOSEN wording and no code (an authorization not captured yet is canceled, not refunded).
    if (!charge || charge.decline !== null || !charge.captured)
      return invalidRequest(context, `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`, {
        param: 'payment_intent',
      });
    // What was captured and not refunded yet (a partial capture released the rest: nothing to refund there).
    const remaining = charge.amount_captured - charge.amount_refunded;
    if (body.amount !== undefined && (!Number.isInteger(body.amount) || (body.amount as number) < 1))
      return invalidRequest(context, 'Invalid positive integer', { code: 'parameter_invalid_integer', param: 'amount' });
    const amount = body.amount === undefined ? remaining : (body.amount as number);
    if (remaining <= 0)
      return invalidRequest(context, `Charge ${charge.id} has already been refunded.`, {
        code: 'charge_already_refunded',
        param: 'charge',
      });
    if (amount > remaining) {
      return invalidRequest(
        context,
        `Refund amount (${cards.formatAmount(amount, charge.currency)}) is greater than unrefunded amount on charge (${cards.formatAmount(remaining, charge.currency)})`,
        { param: 'amount' },
      );
    }
    if (refunds.size >= max_refunds) {
      violations.add('fake', 'POST /v1/refunds', [`the fake holds ${max_refunds} refunds already (max_refunds)`]);
      return errorAnswer(500, context, { type: 'api_error', message: 'The fake holds too many refunds.' }, false);
    }
    refund_seq += 1;
    const metadata: Record<string, string> = {};
    const given_metadata = asRecord(body.metadata);
    if (given_metadata) for (const [key, value] of Object.entries(given_metadata)) if (value !== '') metadata[key] = String(value);
    const behaviour = charge.pm.card.test.refund;
    const refund: RefundState = {
      seq: refund_seq,
      id: newId('re'),
      created_s: nowS(),
      intent_id: intent.id,
      charge_id: charge.id,
      amount,
      currency: charge.currency,
      metadata,
      reason: typeof body.reason === 'string' ? body.reason : null,
      behaviour,
      balance_transaction: newId('txn'),
      status: behaviour === 'pending_then_succeeded' ? 'pending' : 'succeeded',
      failure_reason: null,
      failure_balance_transaction: null,
      settled: behaviour === 'instant',
      timer: null,
    };
    refunds.set(refund.id, refund);
    charge.amount_refunded += amount;
    if (!refund.settled && refund_settle_ms !== null) {
      refund.timer = setTimeout(() => {
        refund.timer = null;
        void webhooks.publish(settleRefund(refund));
      }, refund_settle_ms);
    }
    const created = [makeEvent('refund.created', refundJson(refund), context), makeEvent('charge.refunded', chargeJson(charge), context)];
    return { status: 200, json: refundJson(refund), events: created, keep: true };
  }

  /** The later status change of an asynchronous refund [testing "Simulate an asynchronous refund"]. */
  function settleRefund(refund: RefundState): EventState[] {
    if (refund.settled) return [];
    refund.settled = true;
    if (refund.timer) clearTimeout(refund.timer);
    refund.timer = null;
    const previous = { status: refund.status };
    if (refund.behaviour === 'pending_then_succeeded') {
      refund.status = 'succeeded';
      const json = refundJson(refund);
      return [makeEvent('refund.updated', json, null, previous), makeEvent('charge.refund.updated', json, null, previous)];
    }
    refund.status = 'failed';
    refund.failure_reason = 'expired_or_canceled_card';
    refund.failure_balance_transaction = newId('txn');
    const charge = charges.get(refund.charge_id);
    if (charge) charge.amount_refunded -= refund.amount;
    const json = refundJson(refund);
    return [makeEvent('refund.failed', json, null, previous), makeEvent('charge.refund.updated', json, null, previous)];
  }

  // ---------------------------------------------------------------- search and lists

  function searchIntents(query_text: string, query: JsonObject, context: RequestContext): Answer {
    const parsed = parseSearchQuery(query_text);
    if (typeof parsed === 'string') return invalidRequest(context, parsed, { param: 'query' });
    const limit = query.limit === undefined ? 10 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return invalidRequest(context, 'Invalid limit: must be between 1 and 100', { param: 'limit' });
    let offset = 0;
    if (query.page !== undefined) {
      const m = /^page_(\d{1,9})$/.exec(String(query.page));
      if (!m) return invalidRequest(context, `Invalid page: ${String(query.page)}`, { param: 'page' });
      offset = Number(m[1]);
    }
    const visible_until = Date.now() - search_delay_ms;
    const matching = [...intents.values()]
      .filter((intent) => intent.created_ms <= visible_until && parsed(intent))
      .sort((a, b) => b.seq - a.seq);
    const data = matching.slice(offset, offset + limit).map(intentJson);
    const has_more = matching.length > offset + limit;
    const json: JsonObject = {
      object: 'search_result',
      data,
      has_more,
      next_page: has_more ? `page_${offset + limit}` : null,
      url: '/v1/payment_intents/search',
    };
    if (Array.isArray(query.expand) && query.expand.includes('total_count')) json.total_count = matching.length;
    return { status: 200, json, events: [], keep: false };
  }

  function listRefunds(query: JsonObject, context: RequestContext): Answer {
    const limit = query.limit === undefined ? 10 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return invalidRequest(context, 'Invalid limit: must be between 1 and 100', { param: 'limit' });
    // CHOSEN: an unknown payment_intent or charge lists nothing.
    let list = [...refunds.values()]
      .filter(
        (r) =>
          (query.payment_intent === undefined || r.intent_id === query.payment_intent) &&
          (query.charge === undefined || r.charge_id === query.charge),
      )
      .sort((a, b) => b.seq - a.seq);
    if (typeof query.starting_after === 'string') {
      const at = list.findIndex((r) => r.id === query.starting_after);
      if (at < 0)
        return invalidRequest(context, `No such refund: '${query.starting_after}'`, { code: 'resource_missing', param: 'starting_after' });
      list = list.slice(at + 1);
    } else if (typeof query.ending_before === 'string') {
      const at = list.findIndex((r) => r.id === query.ending_before);
      if (at < 0)
        return invalidRequest(context, `No such refund: '${query.ending_before}'`, { code: 'resource_missing', param: 'ending_before' });
      list = list.slice(Math.max(0, at - limit), at);
      return {
        status: 200,
        json: { object: 'list', data: list.map(refundJson), has_more: at - limit > 0, url: '/v1/refunds' },
        events: [],
        keep: false,
      };
    }
    return {
      status: 200,
      json: { object: 'list', data: list.slice(0, limit).map(refundJson), has_more: list.length > limit, url: '/v1/refunds' },
      events: [],
      keep: false,
    };
  }

  // ---------------------------------------------------------------- HTTP

  /** The expansions each route takes (https://docs.stripe.com/api/expanding_objects); total_count is the search's. */
  const EXPANDABLE: Readonly<Record<FakeStripeRoute, readonly string[]>> = {
    'POST /v1/payment_intents': ['latest_charge', 'payment_method'],
    'GET /v1/payment_intents/{intent}': ['latest_charge', 'payment_method'],
    'GET /v1/payment_intents/search': ['data.latest_charge', 'data.payment_method', 'total_count'],
    'POST /v1/payment_intents/{intent}/capture': ['latest_charge', 'payment_method'],
    'POST /v1/payment_intents/{intent}/cancel': ['latest_charge', 'payment_method'],
    'POST /v1/refunds': ['charge', 'payment_intent'],
    'GET /v1/refunds/{refund}': ['charge', 'payment_intent'],
    'GET /v1/refunds': ['data.charge', 'data.payment_intent'],
  };

  /** Replaces ids by the objects asked for with expand[] (the description allows either: anyOf id or object). */
  function expandObject(json: JsonObject, fields: readonly string[]): JsonObject {
    const out = { ...json };
    if (json.object === 'payment_intent') {
      const intent = intents.get(String(json.id));
      if (fields.includes('latest_charge') && typeof json.latest_charge === 'string') {
        const charge = charges.get(json.latest_charge);
        if (charge) out.latest_charge = chargeJson(charge);
      }
      if (fields.includes('payment_method') && intent?.pm && json.payment_method === intent.pm.id) out.payment_method = pmJson(intent.pm);
    } else if (json.object === 'refund') {
      const charge = charges.get(String(json.charge));
      if (fields.includes('charge') && charge) out.charge = chargeJson(charge);
      const intent = intents.get(String(json.payment_intent));
      if (fields.includes('payment_intent') && intent) out.payment_intent = intentJson(intent);
    }
    return out;
  }

  function processRoute(
    route: FakeStripeRoute,
    path_params: Readonly<Record<string, string>>,
    form: JsonObject,
    query: JsonObject,
    query_text: string,
    context: RequestContext,
  ): Answer {
    const given = route.startsWith('POST') ? form.expand : query.expand;
    const expand = Array.isArray(given) ? given.map(String) : [];
    const refused = expand.find((field) => !EXPANDABLE[route].includes(field));
    // CHOSEN: checked before anything is done, like other parameters.
    if (refused !== undefined)
      return invalidRequest(context, `This property cannot be expanded (${refused}).`, { param: 'expand' }, 400, false);
    const answer = routeAnswer(route, path_params, form, query, query_text, context);
    const json = asRecord(answer.json);
    if (expand.length === 0 || answer.status !== 200 || !json) return answer;
    if (Array.isArray(json.data)) {
      const fields = expand.filter((f) => f.startsWith('data.')).map((f) => f.slice('data.'.length));
      return { ...answer, json: { ...json, data: json.data.map((item) => expandObject(item as JsonObject, fields)) } };
    }
    return { ...answer, json: expandObject(json, expand) };
  }

  function routeAnswer(
    route: FakeStripeRoute,
    path_params: Readonly<Record<string, string>>,
    form: JsonObject,
    query: JsonObject,
    query_text: string,
    context: RequestContext,
  ): Answer {
    switch (route) {
      case 'POST /v1/payment_intents':
        return processCreateIntent(form, context);
      case 'POST /v1/refunds':
        return processCreateRefund(form, context);
      case 'POST /v1/payment_intents/{intent}/capture':
        return processCapture(path_params.intent ?? '', form, context);
      case 'POST /v1/payment_intents/{intent}/cancel':
        return processCancel(path_params.intent ?? '', form, context);
      case 'GET /v1/payment_intents/{intent}': {
        const intent = intents.get(path_params.intent ?? '');
        return intent
          ? { status: 200, json: intentJson(intent), events: [], keep: false }
          : invalidRequest(
              context,
              `No such payment_intent: '${path_params.intent ?? ''}'`,
              { code: 'resource_missing', param: 'intent' },
              404,
            );
      }
      case 'GET /v1/refunds/{refund}': {
        const refund = refunds.get(path_params.refund ?? '');
        return refund
          ? { status: 200, json: refundJson(refund), events: [], keep: false }
          : invalidRequest(context, `No such refund: '${path_params.refund ?? ''}'`, { code: 'resource_missing', param: 'id' }, 404);
      }
      case 'GET /v1/payment_intents/search':
        return searchIntents(query_text, query, context);
      case 'GET /v1/refunds':
        return listRefunds(query, context);
    }
  }

  /** Stripe's 400 for parameters the description refuses (parameter_missing, parameter_unknown, parameter_invalid_*). */
  function invalidParameters(problems: readonly StripeProblem[], context: RequestContext): Answer {
    const first =
      problems.find((p) => p.kind === 'missing') ??
      problems.find((p) => p.kind === 'unknown') ??
      problems.find((p) => p.kind === 'invalid') ??
      problems[0];
    const param = first?.param ?? undefined;
    let answer: Answer;
    if (first?.kind === 'missing')
      answer = invalidRequest(context, `Missing required param: ${param ?? ''}.`, { code: 'parameter_missing', param }, 400, false);
    else if (first?.kind === 'unknown')
      answer = invalidRequest(context, `Received unknown parameter: ${param ?? ''}`, { code: 'parameter_unknown', param }, 400, false);
    else if (first?.kind === 'content_type')
      answer = invalidRequest(context, 'Invalid request: the body must be application/x-www-form-urlencoded.', {}, 400, false);
    else
      answer = invalidRequest(
        context,
        `Invalid ${param ?? 'request'}: ${first?.text ?? 'the request does not match the API'}`,
        { code: 'parameter_invalid_string', param },
        400,
        false,
      );
    return answer;
  }

  function authorized(header: string | undefined): boolean {
    if (header === undefined) return false;
    if (header === `Bearer ${secret_key}`) return true;
    const basic = /^Basic (\S+)$/.exec(header);
    if (!basic) return false;
    const decoded = Buffer.from(basic[1] ?? '', 'base64').toString('utf8');
    return decoded === `${secret_key}:` || decoded === secret_key;
  }

  /** `hold_key`: the answer will wait (webhook_first), so the key stays in flight until release. */
  function idempotentProcess(
    route: FakeStripeRoute,
    record: RecordedState,
    params_hash: string,
    context: RequestContext,
    hold_key: boolean,
    work: () => Answer,
  ): Answer {
    const key = record.idempotency_key;
    if (key === null || record.method !== 'POST') return work();
    if (in_flight.has(key)) {
      record.idempotency = 'in_flight';
      // CHOSEN type; the code is Stripe's (https://docs.stripe.com/error-codes#idempotency-key-in-use).
      return errorAnswer(
        409,
        context,
        {
          type: 'idempotency_error',
          code: 'idempotency_key_in_use',
          message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
        },
        false,
      );
    }
    const stored = idempotency.get(key);
    if (stored && Date.now() - stored.at_ms < idempotency_window_ms) {
      if (stored.route !== route || stored.params_hash !== params_hash) {
        record.idempotency = 'mismatch';
        return errorAnswer(
          400,
          context,
          {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
          },
          false,
        );
      }
      record.idempotency = 'replayed';
      return {
        status: stored.status,
        text: stored.text,
        events: [],
        keep: false,
        headers: { 'idempotent-replayed': 'true', 'original-request': stored.request_id },
      };
    }
    record.idempotency = 'new';
    if (hold_key) in_flight.add(key);
    const answer = work();
    if (answer.keep) {
      idempotency.set(key, {
        route,
        params_hash,
        status: answer.status,
        text: answer.text ?? JSON.stringify(answer.json),
        request_id: context.request_id,
        at_ms: Date.now(),
      });
      if (idempotency.size > max_recorded) idempotency.delete(idempotency.keys().next().value ?? '');
      const json = asRecord(answer.json);
      const intent_id = json?.object === 'payment_intent' ? json.id : asRecord(asRecord(json?.error)?.payment_intent)?.id;
      if (typeof intent_id === 'string') intents.get(intent_id)?.idempotency_keys.push(key);
    }
    return answer;
  }

  function writeAnswer(
    response: http.ServerResponse,
    record: RecordedState,
    status: number,
    text: string | null,
    extra: Readonly<Record<string, string>> = {},
  ): void {
    record.status = status;
    record.answer_body = text;
    const headers: Record<string, string> = {
      'request-id': record.request_id,
      'stripe-version': record.stripe_version ?? api_version,
      'cache-control': 'no-cache, no-store',
      ...(record.idempotency_key !== null && record.method === 'POST' ? { 'idempotency-key': record.idempotency_key } : {}),
      ...extra,
    };
    if (text === null) response.writeHead(status, { ...headers, 'content-length': '0' }).end();
    else response.writeHead(status, { ...headers, 'content-type': 'application/json' }).end(text);
  }

  async function handle(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    { text: body_text, too_large }: RequestBody,
  ): Promise<void> {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', base_url);
    const key_header = request.headers['idempotency-key'];
    const version_header = request.headers['stripe-version'];
    request_seq += 1;
    const record: RecordedState = {
      seq: request_seq,
      method,
      path: url.pathname,
      query: {},
      route: null,
      headers: request.headers,
      idempotency_key: typeof key_header === 'string' ? key_header : null,
      stripe_version: typeof version_header === 'string' ? version_header : null,
      body: body_text,
      form: {},
      at_ms: Date.now(),
      status: null,
      answer_body: null,
      request_id: newId('req'),
      failure: null,
      idempotency: null,
    };
    requests.push(record);
    keepBounded(requests, max_recorded);
    const context: RequestContext = {
      request_id: record.request_id,
      idempotency_key: method === 'POST' ? record.idempotency_key : null,
      stripe_version: record.stripe_version,
    };

    if (url.pathname.startsWith(CHALLENGE_PREFIX)) return handleChallenge(method, url.pathname, body_text, record, response);
    if (answeredIconRequest(url.pathname, response, record)) return;
    const label = `${method} ${url.pathname}`;
    if (too_large) {
      violations.add('request', label, [`the body is larger than ${BODY_MAX_BYTES} bytes`]);
      return writeAnswer(
        response,
        record,
        413,
        JSON.stringify({ error: { message: 'Request body too large.', type: 'invalid_request_error' } }),
      );
    }
    const match = validator.matchOperation(method, url.pathname);
    const route =
      match && ROUTES.includes(`${match.method} ${match.template}` as FakeStripeRoute)
        ? (`${match.method} ${match.template}` as FakeStripeRoute)
        : null;
    record.route = route;
    if (!match || !route) {
      violations.add('request', label, [`${label}: no operation of the description (subset) the fake serves`]);
      return writeAnswer(
        response,
        record,
        404,
        JSON.stringify({
          error: {
            message: `Unrecognized request URL (${method}: ${url.pathname}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
            type: 'invalid_request_error',
          },
        }),
      );
    }
    const failure = failures.take(route);
    record.failure = failure;
    if (failure === 'reset_before_processing') {
      request.socket.destroy();
      return;
    }
    if (failure === 'http_500' || failure === 'http_503') {
      const answer = errorAnswer(
        failure === 'http_500' ? 500 : 503,
        context,
        { type: 'api_error', message: 'An unknown error occurred' },
        false,
      );
      const text = JSON.stringify(answer.json);
      violations.add(
        'response',
        `${label} → ${answer.status}`,
        validator.validateResponse({ method, path: url.pathname, status: answer.status, body: text }),
      );
      return writeAnswer(response, record, answer.status, text);
    }

    // The Idempotency-Key of a request processed anew is in flight while its answer waits (webhook_first).
    const releaseKey = (): void => {
      if (record.idempotency === 'new' && record.idempotency_key !== null) in_flight.delete(record.idempotency_key);
    };
    const checked = validator.checkRequest({ method, path: url.pathname + url.search, headers: request.headers, body: body_text });
    record.form = checked.body;
    record.query = checked.query;
    // A missing or malformed Authorization header is a problem of the request; a wrong key is only a 401.
    violations.add(
      'request',
      label,
      checked.problems.map((p) => p.text),
    );
    const problems = checked.problems.filter((p) => p.kind !== 'auth');
    let answer: Answer;
    if (!request.headers.authorization) {
      answer = invalidRequest(
        context,
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
        {},
        401,
        false,
      );
    } else if (!authorized(request.headers.authorization)) {
      const given = /^Bearer (\S+)$/.exec(request.headers.authorization)?.[1] ?? '';
      answer = invalidRequest(
        context,
        `Invalid API Key provided: ${given.length > 8 ? `${given.slice(0, 8)}${'*'.repeat(Math.max(0, given.length - 12))}${given.slice(-4)}` : '****'}`,
        {},
        401,
        false,
      );
    } else if (problems.length > 0) answer = invalidParameters(problems, context);
    else {
      const params_hash = createHash('sha256').update(canonicalJson(checked.body)).digest('hex');
      const query_text = typeof checked.query.query === 'string' ? checked.query.query : '';
      try {
        answer = idempotentProcess(route, record, params_hash, context, failure === 'webhook_first', () =>
          processRoute(route, match.path_params, checked.body, checked.query, query_text, context),
        );
      } catch (error) {
        releaseKey();
        throw error;
      }
    }

    const text = answerText(answer);
    violations.add(
      'response',
      `${label} → ${answer.status}`,
      validator.validateResponse({ method, path: url.pathname, status: answer.status, body: text ?? undefined }),
    );
    const headers: Record<string, string> = {
      ...(answer.headers ?? {}),
      ...(answer.status === 401 ? { 'www-authenticate': 'Bearer realm="Stripe"' } : {}),
    };
    await sendProcessed(
      failure,
      {
        request,
        response,
        record,
        text,
        garbage_start: '{"id":"pi_',
        write: (body) => writeAnswer(response, record, answer.status, body, headers),
        publish:
          failure === 'webhook_first' ? () => webhooks.publish(answer.events).finally(releaseKey) : () => webhooks.publish(answer.events),
      },
      held_answers,
    );
  }

  const server = await startLocalServer({ body_max_bytes: BODY_MAX_BYTES, handle: failuresAsViolations(violations, handle) });
  base_url = server.url;

  // ---------------------------------------------------------------- views and controls

  function refundView(refund: RefundState): FakeRefundView {
    return {
      id: refund.id,
      payment_intent: refund.intent_id,
      charge: refund.charge_id,
      amount: refund.amount,
      currency: refund.currency,
      status: refund.status,
      failure_reason: refund.failure_reason,
      metadata: { ...refund.metadata },
      json: refundJson(refund),
    };
  }

  function disputeView(dispute: DisputeState): FakeDisputeView {
    return {
      id: dispute.id,
      payment_intent: dispute.intent_id,
      charge: dispute.charge_id,
      amount: dispute.amount,
      currency: dispute.currency,
      reason: dispute.reason,
      status: dispute.status,
      due_by: dispute.due_by_s,
      json: disputeJson(dispute),
    };
  }

  function intentView(intent: IntentState): FakePaymentIntentView {
    const error = intent.last_payment_error;
    const charge_ids = new Set(intent.charges.map((c) => c.id));
    const intent_refunds = [...refunds.values()].filter((r) => charge_ids.has(r.charge_id));
    const next = intent.next_action;
    const redirect = asRecord(next?.redirect_to_url);
    const sdk = asRecord(next?.use_stripe_sdk);
    return {
      id: intent.id,
      client_secret: intent.client_secret,
      status: intent.status,
      capture_method: intent.capture_method,
      amount: intent.amount,
      amount_capturable: intent.amount_capturable,
      amount_received: intent.amount_received,
      amount_released: intent.charges.reduce((sum, c) => sum + c.amount_released, 0),
      cancellation_reason: intent.cancellation_reason,
      amount_refunded: intent_refunds.filter((r) => r.status !== 'failed').reduce((sum, r) => sum + r.amount, 0),
      currency: intent.currency,
      metadata: { ...intent.metadata },
      return_url: intent.return_url,
      off_session: intent.off_session,
      card_last4: intent.last_pm?.card.number.slice(-4) ?? null,
      latest_charge: intent.charges[intent.charges.length - 1]?.id ?? null,
      charges: intent.charges.map((c) => c.id),
      refunds: intent_refunds.map(refundView),
      disputes: [...disputes.values()].filter((d) => d.intent_id === intent.id).map(disputeView),
      last_error: error
        ? { code: String(error.code), decline_code: typeof error.decline_code === 'string' ? error.decline_code : null }
        : null,
      three_ds: intent.three_ds?.phase ?? 'none',
      authentication_url: typeof redirect?.url === 'string' ? redirect.url : typeof sdk?.stripe_js === 'string' ? sdk.stripe_js : null,
      idempotency_keys: [...intent.idempotency_keys],
      json: intentJson(intent),
    };
  }

  /** Asynchronous refunds change no more. */
  function stopTimers(): void {
    for (const refund of refunds.values()) if (refund.timer) clearTimeout(refund.timer);
  }

  return {
    ...createProcessorControls({ violations, requests, events, failures, webhooks, held_answers, server, stopTimers }),
    url: base_url,
    host: '127.0.0.1',
    port: server.port,
    secret_key,
    get paymentIntents() {
      return [...intents.values()].map(intentView);
    },
    paymentIntent(id) {
      const intent = intents.get(id);
      return intent ? intentView(intent) : undefined;
    },
    intentsWithMetadata(key, value) {
      return [...intents.values()].filter((intent) => intent.metadata[key] === value).map(intentView);
    },
    get refunds() {
      return [...refunds.values()].map(refundView);
    },
    refund(id) {
      const refund = refunds.get(id);
      return refund ? refundView(refund) : undefined;
    },
    setWebhookEndpoint(url, secret = '') {
      webhooks.setEndpoint(url === null ? null : { url, secret });
    },
    async authenticate(payment_intent_id, outcome) {
      const intent = intents.get(payment_intent_id);
      if (!intent?.three_ds || intent.three_ds.phase !== 'pending')
        throw new Error(`fake stripe: ${payment_intent_id} has no pending authentication`);
      const finished = finishAuthentication(intent, outcome);
      await webhooks.publish(finished.events);
      return finished.redirect_to;
    },
    async settleRefunds() {
      const created = [...refunds.values()].flatMap(settleRefund);
      await webhooks.publish(created);
    },
    get disputes() {
      return [...disputes.values()].map(disputeView);
    },
    dispute(id) {
      const dispute = disputes.get(id);
      return dispute ? disputeView(dispute) : undefined;
    },
    async openDispute(payment_intent_id, dispute_options = {}) {
      const intent = intents.get(payment_intent_id);
      if (!intent) throw new Error(`fake stripe: no PaymentIntent ${payment_intent_id}`);
      const opened = openDispute(intent, dispute_options);
      await webhooks.publish(opened.events);
      return disputeView(opened.dispute);
    },
    async updateDispute(dispute_id, status) {
      const dispute = disputes.get(dispute_id);
      if (!dispute) throw new Error(`fake stripe: no dispute ${dispute_id}`);
      await webhooks.publish(moveDispute(dispute, status));
      return disputeView(dispute);
    },
    async closeDispute(dispute_id, outcome) {
      const dispute = disputes.get(dispute_id);
      if (!dispute) throw new Error(`fake stripe: no dispute ${dispute_id}`);
      await webhooks.publish(moveDispute(dispute, outcome));
      return disputeView(dispute);
    },
    async refundFromDashboard(payment_intent_id, amount) {
      // As the Dashboard does it: the API's own refund, with nothing of ours in it.
      const context: RequestContext = { request_id: newId('req'), idempotency_key: null, stripe_version: null };
      const answer = processCreateRefund(
        { payment_intent: payment_intent_id, reason: 'requested_by_customer', ...(amount === undefined ? {} : { amount }) },
        context,
      );
      const json = asRecord(answer.json);
      if (answer.status !== 200 || !json) throw new Error(`fake stripe: ${String(asRecord(json?.error)?.message ?? 'refund refused')}`);
      violations.add('response', 'Dashboard refund', validator.validateSchema('refund', json));
      await webhooks.publish(answer.events);
      return refundView(refunds.get(String(json.id))!);
    },
    async expireAuthorization(payment_intent_id) {
      const intent = intents.get(payment_intent_id);
      if (!intent || intent.status !== 'requires_capture')
        throw new Error(`fake stripe: ${payment_intent_id} is no authorization waiting for its capture (${intent?.status ?? 'unknown'})`);
      const done = cancelIntent(intent, 'automatic', null);
      if (typeof done !== 'string') await webhooks.publish(done);
    },
    hangNextCapture() {
      failures.failNext('POST /v1/payment_intents/{intent}/capture', 'timeout');
    },
  };
}

// ---------------------------------------------------------------- search query language

type IntentPredicate = (intent: {
  readonly amount: number;
  readonly created_s: number;
  readonly currency: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly status: string;
}) => boolean;

const MAX_QUERY_LENGTH = 5000;
const MAX_CLAUSES = 10;

/**
 * Stripe's search query language for PaymentIntents (https://docs.stripe.com/search): clauses
 * `field:value` (exact; text values in single or double quotes), `field>n`, `<`, `>=`, `<=` for
 * amount and created, `metadata['key']:'value'`, a leading "-" negates; clauses joined by AND or
 * by OR (case-insensitive, not both) or by spaces (AND). Returns a predicate, or the error text.
 */
export function parseSearchQuery(text: string): IntentPredicate | string {
  if (text.trim() === '') return 'The query must not be empty.';
  if (text.length > MAX_QUERY_LENGTH) return `The query is longer than ${MAX_QUERY_LENGTH} characters.`;
  const clauses: IntentPredicate[] = [];
  const joins = new Set<string>();
  let rest = text.trim();
  while (rest.length > 0) {
    if (clauses.length >= MAX_CLAUSES) return `A query may combine at most ${MAX_CLAUSES} clauses.`;
    const m = /^(-?)(metadata\[(?:'([^']*)'|"([^"]*)")\]|[a-z_]+)(:|>=|<=|>|<)(?:'([^']*)'|"([^"]*)"|([^\s'"]+))/.exec(rest);
    if (!m)
      return `Invalid query: could not read a clause at "${rest.slice(0, 40)}". Clauses look like field:'value' or metadata['key']:'value'.`;
    const negate = m[1] === '-';
    const metadata_key = m[3] ?? m[4];
    const field = metadata_key !== undefined ? 'metadata' : (m[2] ?? '');
    const operator = m[5] ?? ':';
    const value = m[6] ?? m[7] ?? m[8] ?? '';
    if (!SEARCH_FIELDS.has(field))
      return `Field \`${field}\` is an unsupported search field for PaymentIntents. Supported fields: ${[...SEARCH_FIELDS].join(', ')}.`;
    if (field === 'metadata' && metadata_key === undefined) return "Search on metadata needs a key: metadata['key']:'value'.";
    const numeric = field === 'amount' || field === 'created';
    if (operator !== ':' && !numeric) return `The operator ${operator} only applies to numeric fields (amount, created).`;
    if (numeric && !/^-?\d+$/.test(value)) return `Field \`${field}\` takes whole numbers, not ${value}.`;
    const number = Number(value);
    let clause: IntentPredicate;
    switch (field) {
      case 'metadata':
        clause = (intent) => intent.metadata[metadata_key ?? ''] === value;
        break;
      case 'status':
        clause = (intent) => intent.status === value;
        break;
      case 'currency':
        clause = (intent) => intent.currency === value.toLowerCase();
        break;
      case 'customer':
        // The fake's PaymentIntents have no customer.
        clause = () => false;
        break;
      default: {
        const pick =
          field === 'amount'
            ? (intent: Parameters<IntentPredicate>[0]) => intent.amount
            : (intent: Parameters<IntentPredicate>[0]) => intent.created_s;
        clause = (intent) => {
          const v = pick(intent);
          return operator === ':'
            ? v === number
            : operator === '>'
              ? v > number
              : operator === '<'
                ? v < number
                : operator === '>='
                  ? v >= number
                  : v <= number;
        };
      }
    }
    clauses.push(negate ? (intent) => !clause(intent) : clause);
    rest = rest.slice(m[0].length);
    const join = /^\s+(AND|OR)\s+/i.exec(rest) ?? /^\s+/.exec(rest);
    if (join) {
      joins.add((join[1] ?? 'AND').toUpperCase());
      rest = rest.slice(join[0].length);
    } else if (rest.length > 0) return `Invalid query: unexpected "${rest.slice(0, 40)}".`;
  }
  if (joins.size > 1) return 'AND and OR operators cannot be combined in one query.';
  const any = joins.has('OR');
  return (intent) => (any ? clauses.some((c) => c(intent)) : clauses.every((c) => c(intent)));
}

// ---------------------------------------------------------------- helpers

function asRecord(value: unknown): JsonObject | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : null;
}

/** Stripe-like ids: a prefix, "_", 24 characters of [A-Za-z0-9]. */
function newId(prefix: string): string {
  return `${prefix}_${randomToken(24)}`;
}

function randomToken(length: number): string {
  let text = '';
  for (const byte of randomBytes(length)) text += ID_ALPHABET[byte % ID_ALPHABET.length];
  return text;
}

/** JSON with object keys sorted, so that two encodings of the same parameters compare equal. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as JsonObject)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
