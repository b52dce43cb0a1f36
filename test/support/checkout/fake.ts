// A stateful fake of Checkout.com's Unified Payments API ("NAS") on 127.0.0.1, for the tests of
// our `checkout` connector, which cannot reach Checkout.com. It follows the sandbox's published
// behaviour (test cards, amounts, 3-D Secure, webhooks, idempotency; see sandbox-rules.ts and
// test/psp-specs/checkout.com/SOURCE.md for the pages relied on) and checks itself and its client
// against the published description: every API request is validated with spec.ts and an invalid
// one is answered 422 as Checkout.com would; every JSON answer and every webhook event it sends is
// validated too; all problems land in `fake.violations`, which tests assert is empty.
//
// Endpoints: POST /payments (card payment or card payout), GET /payments/{id} (payment or sid_
// session id), GET /payments?reference= (our supplement), POST /payments/{id}/captures,
// POST /payments/{id}/voids, POST /payments/{id}/refunds, GET /payments/{id}/actions; GET/POST
// /3ds/{sid} is the challenge page for a person.
//
// Controls a test calls (beside those of every fake, ../fake-processor/controls.ts: failNext,
// holdEvents, releaseHeldEvents, redeliver, sendRaw, waitForEvent, requestsTo, violations):
// - settlePayouts(): Promise<void>; abandonChallenge(payment_id): Promise<void> (see below).
// - openDispute(payment_id, options?: { amount?, category?, reason_code?, evidence_due_in_ms?,
//   evidence_required? }): Promise<FakeDisputeView>: a chargeback of a captured payment; sends
//   dispute_received, then (unless evidence_required is false) dispute_evidence_required, both
//   with evidence_required_by, signed like every event; resolves when they are delivered.
// - moveDispute(dispute_id, to: FakeDisputeMove): Promise<FakeDisputeView>: sends `dispute_<to>`
//   ('won', 'lost', 'accepted', 'canceled', 'expired', 'evidence_submitted', ...) and moves it on.
// - refundFromDashboard(payment_id, amount?): Promise<FakeAction>: a refund made in Checkout.com's
//   dashboard (all that remains by default): a Refund action with no reference and no metadata of
//   ours, and payment_refunded without a reference.
// - hangNextCapture(): the next capture is processed (captured, its event sent) but never answered:
//   the connector times out (failNext('POST /payments/{id}/captures', 'timeout'); any failure mode
//   works on the capture and void routes too).
// - declineNext('capture' | 'void', response_code = '20012'): the next capture or void is accepted
//   (202), then declined: payment_capture_declined / payment_void_declined, nothing captured or
//   voided, the authorization still open.
// - dispute(dispute_id) and FakePaymentView.disputes, .released_amount: what the fake holds.
//
// Documented behaviour followed (pages in SOURCE.md):
// - Authorization: "Bearer <secret key>"; anything else is 401 with no body.
// - Cko-Idempotency-Key: a request repeating a key answers the original status and body again
//   (Checkout.com's idempotency page: "Subsequent requests with the same key will return the same
//   HTTP status code and response body as the original request"; it says nothing of a different
//   body, so a different body is answered the same way, and `requests[i].idempotency` says
//   'replayed_different_body'). Only requests processed with a 2xx answer are kept (not 4xx
//   answers, not injected failures before processing). Keys are scoped to the route and path and
//   kept `idempotency_window_ms` (24 h, the documented default). The documented 429 for a
//   duplicate arriving while the first is still processed cannot happen here: processing is
//   synchronous.
// - A card payment answers 201 Authorized/Declined (or Card Verified for amount 0 or no amount);
//   with `capture` true or absent it is then captured (payment_approved, then payment_captured).
//   3-D Secure challenges answer 202 Pending with _links.redirect to /3ds/{sid}; the page redirects
//   (303) to success_url or failure_url with ?cko-session-id=sid_… appended.
// - A payout to a card answers 202 Pending, then after `payout_settle_ms` (or settlePayouts())
//   becomes Paid (payment_paid) or Declined (payment_declined) by the documented payout cards and
//   (CHOSEN) the xx05 amounts (sandbox-rules.ts payoutCode). Both request forms are taken: today's
//   card payout (CardPayoutRequest: instruction.funds_transfer_type, no billing_descriptor; our
//   supplement) and the 2021 PayoutRequest with our card destination. The amount paid is `amount`,
//   else `source.amount` (CHOSEN: the fake has no FX, so both are read in the payout currency);
//   neither is 422 `amount_required`. `metadata` is kept and shown in GET /payments/{id}, the list
//   and the events (PaygateSupplementCardPayoutDetails), as for card payments.
// - Refunds answer 202 and are processed at once (payment_refunded or payment_refund_declined);
//   403 with no body when the payment is not captured or has nothing left to refund, 422
//   `refund_amount_exceeds_balance` when the amount exceeds what remains.
// - Captures and voids ("processed asynchronously", the description says) answer 202 with the
//   action's id (CaptureAcceptedResponse, VoidAcceptedResponse) and are processed at once, their
//   event (payment_captured, payment_voided) following the answer; 404 for an unknown payment,
//   403 with no body for one that is not an open authorization (a sale, captured, voided,
//   declined, a payout), 422 when the amount is 0 or above what was authorized. CHOSEN: one
//   capture per payment whatever capture_type says (paygate sends Final): a capture of less than
//   authorized releases the rest (FakePaymentView.released_amount) and leaves the payment
//   Partially Captured; a void releases the whole hold and leaves it Voided (approved stays true:
//   it was authorized). Refunds take Captured and Partially Captured payments, up to what was
//   captured. Idempotency keys are honoured on both routes as on the others.
// - Disputes (test controls, no API): Checkout.com's dispute events as its webhook pages show
//   them (data: the dispute's id, category, amount, currency, reason_code, payment_id,
//   payment_action_id, payment_reference, payment_method, evidence_required_by, date), checked
//   against our supplement's PaygateSupplementDisputeEvent (SOURCE.md); the payment itself is
//   unchanged, as on Checkout.com.
// - Webhooks: POST of the event JSON with Cko-Signature = lowercase hex HMAC-SHA256 of the raw body
//   keyed with the webhook secret; retried on a non-2xx answer or a network error (bounded:
//   `webhook_attempts`). Events are sent one at a time in the order they were made.
// Not checked against the description: the 3-D Secure page (HTML for a browser) and the answers
// of injected failures (500, 503, garbage). Operations of the description the fake does not
// implement (incremental authorizations, disputes API, …) are answered 404.
// CHOSEN where the documentation is silent (each also said where it is done): event body shape is
// the description's Events/EventObject ({id, type, created_on, data, _links}); events carry no
// `status` (its enum lacks Paid); capture_on is captured at once; an answer of actions for a
// payment that has none yet (pending) is 404; error codes of 422 answers are derived from the
// problem (`<field>_required` / `<field>_invalid`, the documented naming, not each name checked).
// What both fakes do alike (the webhook outbox, the failure modes, the recording of requests and
// violations, the local server, the controls every fake offers) is in ../fake-processor/.
import type http from 'node:http';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
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
import { checkoutValidator, type CheckoutValidator, type MatchedOperation } from './spec.js';
import * as rules from './sandbox-rules.js';
import { challengePage, finishedPage, unknownSessionPage } from './challenge-page.js';

export const FAKE_CHECKOUT_SECRET_KEY = 'sk_sbox_paygatefake7xkq3mzt2vwnd5hj4ra6';

export type FakeCheckoutRoute =
  | 'POST /payments'
  | 'GET /payments'
  | 'GET /payments/{id}'
  | 'POST /payments/{id}/captures'
  | 'POST /payments/{id}/voids'
  | 'POST /payments/{id}/refunds'
  | 'GET /payments/{id}/actions';

export type { FakeFailureMode, Violation };

export interface FakeCheckoutOptions extends WebhookOptions {
  /** The secret key the Authorization header must carry (default FAKE_CHECKOUT_SECRET_KEY). */
  readonly secret_key?: string;
  /** Delay before a pending payout is settled; null: only by settlePayouts(). Default 20 ms. */
  readonly payout_settle_ms?: number | null;
  readonly idempotency_window_ms?: number;
  /** Honour the documented response-code amounts (xxx05 → 20005, …). Default true. */
  readonly amount_triggers?: boolean;
  readonly max_payments?: number;
  /** Requests and events kept for inspection (oldest dropped beyond). */
  readonly max_recorded?: number;
  /** Another validator (tests of the fake's checks); default the project's description. */
  readonly validator?: CheckoutValidator;
  /**
   * The processor's latency (bench/fake-checkout.ts): each request waits this long on a timer
   * before it is processed and answered. Default 0.
   */
  readonly answer_delay_ms?: number;
  /**
   * Asked as each request arrives (bench/fake-checkout.ts): true, and the request is neither
   * processed, recorded nor answered, a processor that hangs; its socket goes when the client
   * gives up. Default never.
   */
  readonly hanging?: () => boolean;
  /** How long idle connections are kept (fake-processor/local-server.ts); default 1 s. */
  readonly keep_alive_timeout_ms?: number;
}

export interface RecordedRequest extends RecordedRequestBase<FakeCheckoutRoute> {
  readonly query: Readonly<Record<string, string>>;
  /** The body parsed as JSON, or null. */
  readonly json: unknown;
  /** For requests with Cko-Idempotency-Key: processed anew, or the original answer replayed. */
  readonly idempotency: 'new' | 'replayed' | 'replayed_different_body' | null;
}

/** One attempt to deliver an event (signature: the Cko-Signature sent). */
export type FakeEventDelivery = WebhookDelivery;

export type FakeEventState = WebhookEventState;

/** Its signature is the Cko-Signature of its last delivery. */
export interface FakeEvent extends WebhookEventView {
  readonly payment_id: string;
  /** The action the event reports; for a dispute event, the dispute's id (Checkout.com's dispute id is its action id). */
  readonly action_id: string;
  readonly json: {
    readonly id: string;
    readonly type: string;
    readonly created_on: string;
    readonly data: Readonly<Record<string, unknown>>;
    readonly _links: unknown;
  };
}

export interface FakeAction {
  readonly id: string;
  readonly type: 'Authorization' | 'Card Verification' | 'Capture' | 'Void' | 'Refund' | 'Payout';
  readonly amount: number;
  readonly approved: boolean;
  readonly response_code: string;
  readonly reference: string | null;
  /** What the request that made it attached (a refund's our trace_id); null for none (a dashboard refund). */
  readonly metadata: Readonly<Record<string, unknown>> | null;
}

/** Where a dispute is (Dispute.status of the description). */
export type FakeDisputeStatus =
  | 'evidence_required'
  | 'evidence_under_review'
  | 'won'
  | 'lost'
  | 'accepted'
  | 'canceled'
  | 'expired'
  | 'resolved'
  | 'arbitration_won'
  | 'arbitration_lost';

/** What moveDispute sends: the event `dispute_<move>`. */
export type FakeDisputeMove =
  | 'evidence_submitted'
  | 'evidence_acknowledged_by_scheme'
  | 'won'
  | 'lost'
  | 'accepted'
  | 'canceled'
  | 'expired'
  | 'resolved'
  | 'arbitration_won'
  | 'arbitration_lost';

export interface FakeDisputeOptions {
  /** Disputed, in minor units; default what was captured less what was refunded. */
  readonly amount?: number;
  /** Dispute.category; default 'fraudulent'. */
  readonly category?: string;
  /** The scheme's reason code; default '10.4'. */
  readonly reason_code?: string;
  /** evidence_required_by, from now; default 7 days. */
  readonly evidence_due_in_ms?: number;
  /** Send dispute_evidence_required after dispute_received (default true). */
  readonly evidence_required?: boolean;
}

export interface FakeDisputeView {
  readonly id: string;
  readonly payment_id: string;
  readonly amount: number;
  readonly currency: string;
  readonly category: string;
  readonly reason_code: string;
  readonly status: FakeDisputeStatus;
  /** ISO 8601, as the events carry it. */
  readonly evidence_required_by: string;
  /** The types of the events sent for it, oldest first. */
  readonly events: readonly string[];
}

export interface FakePaymentView {
  readonly id: string;
  readonly session_id: string | null;
  readonly kind: 'payment' | 'payout';
  readonly reference: string | null;
  readonly amount: number;
  readonly currency: string;
  /**
   * PaymentDetails/PayoutDetails status: Pending, Authorized, Card Verified, Captured, Partially
   * Captured, Voided, Partially Refunded, Refunded, Declined, Paid.
   */
  readonly status: string;
  readonly approved: boolean;
  readonly response_code: string | null;
  readonly captured_amount: number;
  /** Of an authorization: what a partial capture or a void released. */
  readonly released_amount: number;
  readonly refunded_amount: number;
  readonly refunds: readonly FakeAction[];
  /** Oldest first. */
  readonly actions: readonly FakeAction[];
  readonly idempotency_keys: readonly string[];
  readonly card_last4: string;
  /** The request's metadata (payments and payouts), or null. */
  readonly metadata: Readonly<Record<string, unknown>> | null;
  readonly three_ds: 'none' | 'pending' | 'authenticated' | 'failed' | 'frictionless' | 'downgraded' | 'not_enrolled';
  readonly disputes: readonly FakeDisputeView[];
}

export interface FakeCheckout extends FakeProcessorControls<FakeCheckoutRoute, FakeEvent, RecordedRequest> {
  /** http://127.0.0.1:PORT, without a trailing slash: the connector's base_url. */
  readonly url: string;
  readonly secret_key: string;
  /** A fresh snapshot of every payment and payout, oldest first. */
  readonly payments: readonly FakePaymentView[];
  payment(id_or_session_id: string): FakePaymentView | undefined;
  paymentsWithReference(reference: string): FakePaymentView[];
  /** Where events go; null stops sending (events are then recorded as 'no_endpoint'). */
  setWebhookEndpoint(url: string | null, secret?: string, headers?: Readonly<Record<string, string>>): void;
  /** Settles every pending payout now; resolves when their events are delivered. */
  settlePayouts(): Promise<void>;
  /** The customer never finishes a pending 3-D Secure challenge: Declined 20152 and payment_authentication_failed. */
  abandonChallenge(payment_id: string): Promise<void>;
  /**
   * The cardholder disputes a captured payment: dispute_received, then (by default)
   * dispute_evidence_required, sent and delivered before this resolves. Throws for a payment
   * that is not captured.
   */
  openDispute(payment_id: string, options?: FakeDisputeOptions): Promise<FakeDisputeView>;
  /** Moves a dispute on and sends `dispute_<to>`; throws for a dispute already closed (but lost → arbitration_*). */
  moveDispute(dispute_id: string, to: FakeDisputeMove): Promise<FakeDisputeView>;
  dispute(dispute_id: string): FakeDisputeView | undefined;
  /**
   * A refund made in Checkout.com's dashboard, not through the API: all that remains of the
   * capture unless `amount` says less; payment_refunded carries no reference and the action no
   * metadata of ours. Throws when nothing is left to refund.
   */
  refundFromDashboard(payment_id: string, amount?: number): Promise<FakeAction>;
  /** The next capture is processed but never answered (the client times out), once. */
  hangNextCapture(): void;
  /** The next capture (or void) is answered 202 and then declined (its *_declined event); the authorization stays open. */
  declineNext(action: 'capture' | 'void', response_code?: string): void;
}

/** Cko-Signature of a webhook body: lowercase hex HMAC-SHA256 keyed with the webhook secret. */
export function checkoutSignature(raw_body: string, secret: string): string {
  return createHmac('sha256', secret).update(raw_body).digest('hex');
}

type JsonObject = Record<string, unknown>;
type ActionType = FakeAction['type'];

interface ActionState {
  readonly id: string;
  readonly type: ActionType;
  readonly processed_on: string;
  readonly amount: number;
  readonly approved: boolean;
  readonly response_code: string;
  readonly auth_code: string | null;
  readonly reference: string | null;
  readonly metadata: JsonObject | null;
}

interface CardState {
  readonly number: string;
  readonly expiry_month: number;
  readonly expiry_year: number;
  readonly name: string | null;
  readonly billing_address: unknown;
  readonly phone: unknown;
  readonly source_id: string;
}

interface ThreeDsState {
  readonly behaviour: rules.ThreeDsBehaviour;
  phase: FakePaymentView['three_ds'];
  readonly success_url: string | null;
  readonly failure_url: string | null;
  redirect_to: string | null;
}

interface DisputeState {
  readonly id: string;
  readonly payment: PaymentState;
  readonly amount: number;
  readonly category: string;
  readonly reason_code: string;
  readonly action_id: string;
  readonly received_on: string;
  readonly evidence_required_by: string;
  status: FakeDisputeStatus;
  readonly events: string[];
}

interface PaymentState {
  readonly seq: number;
  readonly id: string;
  readonly kind: 'payment' | 'payout';
  readonly requested_on: string;
  readonly request: JsonObject;
  readonly amount: number;
  readonly currency: string;
  readonly reference: string | null;
  readonly card: CardState;
  readonly capture: boolean;
  readonly customer_id: string | null;
  readonly scheme_id: string;
  readonly retrieval_reference_number: string;
  readonly acquirer_transaction_id: string;
  session_id: string | null;
  /** The id the Authorization action will have: named already by payment_pending. */
  pending_action_id: string | null;
  status: string;
  approved: boolean;
  response_code: string | null;
  three_ds: ThreeDsState | null;
  captured: number;
  released: number;
  refunded: number;
  readonly actions: ActionState[];
  readonly disputes: DisputeState[];
  readonly idempotency_keys: string[];
  payout_timer: NodeJS.Timeout | null;
}

interface EventState extends OutboxEvent {
  readonly payment_id: string;
  readonly action_id: string;
  readonly json: FakeEvent['json'];
}

type RecordedState = Writable<RecordedRequest>;

type Answer = FakeAnswer<EventState>;

interface StoredAnswer {
  readonly status: number;
  readonly text: string;
  readonly body_hash: string;
  readonly at_ms: number;
}

const BODY_MAX_BYTES = 64 * 1024;
const HELD_RESPONSES_MAX = 100;
const FAILURES_QUEUED_MAX = 100;
const WAIT_MAX_MS = 60_000;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const ROUTES: readonly FakeCheckoutRoute[] = [
  'POST /payments',
  'GET /payments',
  'GET /payments/{id}',
  'POST /payments/{id}/captures',
  'POST /payments/{id}/voids',
  'POST /payments/{id}/refunds',
  'GET /payments/{id}/actions',
];
/** Dispute statuses after which nothing more happens (but arbitration after a loss). */
const CLOSED_DISPUTE: ReadonlySet<FakeDisputeStatus> = new Set<FakeDisputeStatus>([
  'won',
  'lost',
  'accepted',
  'canceled',
  'expired',
  'resolved',
  'arbitration_won',
  'arbitration_lost',
]);
const DISPUTE_STATUS_AFTER: Readonly<Record<FakeDisputeMove, FakeDisputeStatus>> = {
  evidence_submitted: 'evidence_under_review',
  evidence_acknowledged_by_scheme: 'evidence_under_review',
  won: 'won',
  lost: 'lost',
  accepted: 'accepted',
  canceled: 'canceled',
  expired: 'expired',
  resolved: 'resolved',
  arbitration_won: 'arbitration_won',
  arbitration_lost: 'arbitration_lost',
};
const DISPUTE_EVIDENCE_DAYS_MS = 7 * 24 * 60 * 60 * 1000;

export async function startFakeCheckout(options: FakeCheckoutOptions = {}): Promise<FakeCheckout> {
  const secret_key = options.secret_key ?? FAKE_CHECKOUT_SECRET_KEY;
  const payout_settle_ms = options.payout_settle_ms === undefined ? 20 : options.payout_settle_ms;
  const idempotency_window_ms = options.idempotency_window_ms ?? 24 * 60 * 60 * 1000;
  const amount_triggers = options.amount_triggers ?? true;
  const max_payments = options.max_payments ?? 10_000;
  const max_recorded = options.max_recorded ?? 10_000;
  const validator = options.validator ?? checkoutValidator();
  // Before the first request, not during it: the gateway's time-out would count the compiling.
  validator.compileAll(ROUTES);
  const answer_delay_ms = options.answer_delay_ms ?? 0;

  const violations = createViolationLog(max_recorded);
  const requests: RecordedState[] = [];
  const events: EventState[] = [];
  const payments = new Map<string, PaymentState>();
  const sessions = new Map<string, PaymentState>();
  const idempotency = new Map<string, StoredAnswer>();
  const failures = createFailureQueue<FakeCheckoutRoute>('fake checkout', FAILURES_QUEUED_MAX);
  const held_answers = createHeldAnswers(HELD_RESPONSES_MAX);
  const webhooks = createWebhookOutbox<EventState>({
    name: 'fake checkout',
    events,
    settings: options,
    sign: checkoutSignature,
    signature_header: 'cko-signature',
    headers: { 'content-type': 'application/json', 'user-agent': 'paygate-fake-checkout' },
    wait_max_ms: WAIT_MAX_MS,
  });
  let request_seq = 0;
  let payment_seq = 0;
  let base_url = '';
  const disputes = new Map<string, DisputeState>();
  /** declineNext: the response codes the next captures / voids are declined with, in order. */
  const declines: Record<'capture' | 'void', string[]> = { capture: [], void: [] };

  // ---------------------------------------------------------------- payments

  function newPayment(
    kind: 'payment' | 'payout',
    body: JsonObject,
    card_source: JsonObject,
    amount: number = typeof body.amount === 'number' ? body.amount : 0,
  ): PaymentState {
    payment_seq += 1;
    const customer = asRecord(body.customer);
    const payment: PaymentState = {
      seq: payment_seq,
      id: newId('pay'),
      kind,
      requested_on: new Date().toISOString(),
      request: body,
      amount,
      currency: String(body.currency),
      reference: typeof body.reference === 'string' ? body.reference : null,
      card: {
        number: String(card_source.number),
        expiry_month: Number(card_source.expiry_month),
        expiry_year: Number(card_source.expiry_year),
        name: typeof card_source.name === 'string' ? card_source.name : null,
        billing_address: card_source.billing_address,
        phone: card_source.phone,
        source_id: newId('src'),
      },
      capture: body.capture !== false || body.capture_on !== undefined,
      customer_id: customer ? (typeof customer.id === 'string' ? customer.id : newId('cus')) : null,
      scheme_id: randomDigits(15),
      retrieval_reference_number: randomDigits(12),
      acquirer_transaction_id: randomDigits(21),
      session_id: null,
      pending_action_id: null,
      status: 'Pending',
      approved: false,
      response_code: null,
      three_ds: null,
      captured: 0,
      released: 0,
      refunded: 0,
      actions: [],
      disputes: [],
      idempotency_keys: [],
      payout_timer: null,
    };
    payments.set(payment.id, payment);
    return payment;
  }

  function addAction(
    payment: PaymentState,
    type: ActionType,
    amount: number,
    code: string,
    extra: { reference?: string | null; metadata?: JsonObject | null } = {},
  ): ActionState {
    const approved = code === rules.APPROVED;
    const action: ActionState = {
      id: type === 'Authorization' && payment.pending_action_id !== null ? payment.pending_action_id : newId('act'),
      type,
      processed_on: new Date().toISOString(),
      amount,
      approved,
      response_code: code,
      auth_code: approved && (type === 'Authorization' || type === 'Card Verification') ? randomDigits(6) : null,
      reference: extra.reference === undefined ? payment.reference : extra.reference,
      metadata: extra.metadata ?? null,
    };
    payment.actions.push(action);
    return action;
  }

  /** Authorizes (and captures when asked); returns the 201 body and the events. */
  function authorize(payment: PaymentState, three_ds_done: boolean): { body: JsonObject; events: EventState[] } {
    const code = rules.authorizationCode(payment.card.number, payment.amount, { amount_triggers, three_ds_done });
    const action = addAction(payment, 'Authorization', payment.amount, code);
    payment.approved = action.approved;
    payment.response_code = code;
    payment.status = action.approved ? 'Authorized' : 'Declined';
    const body = paymentResponse(payment, action);
    if (!action.approved) return { body, events: [makeEvent('payment_declined', payment, action)] };
    const created = [makeEvent('payment_approved', payment, action)];
    if (payment.capture) {
      const capture = addAction(payment, 'Capture', payment.amount, rules.APPROVED);
      payment.captured = payment.amount;
      payment.status = 'Captured';
      created.push(makeEvent('payment_captured', payment, capture));
    }
    return { body, events: created };
  }

  function processPaymentRequest(body: JsonObject): Answer {
    if (payments.size >= max_payments) {
      violations.add('fake', 'POST /payments', [`the fake holds ${max_payments} payments already (max_payments)`]);
      return invalid(['fake_capacity_exceeded']);
    }
    const is_payout = body.destination !== undefined || asRecord(body.source)?.type === 'currency_account';
    return is_payout ? processPayout(body) : processCardPayment(body);
  }

  function processCardPayment(body: JsonObject): Answer {
    const source = asRecord(body.source);
    if (!source) return invalid(['payment_source_required']);
    // CHOSEN: the fake takes full card details only (no token, id or network token sources).
    if (source.type !== 'card') return invalid(['payment_source_type_not_supported']);
    const card_problems = cardProblems(source);
    if (card_problems.length > 0) return invalid(card_problems);
    const payment = newPayment('payment', body, source);
    const three_ds = asRecord(body['3ds']);
    const requested_3ds = three_ds?.enabled === true;
    const behaviour = rules.threeDsBehaviour(payment.card.number);

    if (payment.amount === 0) {
      // Card verification: the decline cards still decline; the amount table needs an amount.
      const code = rules.DECLINE_CARDS[payment.card.number] ?? rules.APPROVED;
      const action = addAction(payment, 'Card Verification', 0, code);
      payment.approved = action.approved;
      payment.response_code = code;
      payment.status = action.approved ? 'Card Verified' : 'Declined';
      return {
        status: 201,
        json: paymentResponse(payment, action),
        events: [makeEvent(action.approved ? 'card_verified' : 'card_verification_declined', payment, action)],
      };
    }
    if ((requested_3ds && (behaviour === 'challenge' || behaviour === 'challenge_rejected')) || behaviour === 'challenge_forced') {
      payment.session_id = newId('sid');
      payment.pending_action_id = newId('act');
      sessions.set(payment.session_id, payment);
      payment.three_ds = {
        behaviour,
        phase: 'pending',
        success_url: typeof body.success_url === 'string' ? body.success_url : null,
        failure_url: typeof body.failure_url === 'string' ? body.failure_url : null,
        redirect_to: null,
      };
      return { status: 202, json: acceptedResponse(payment), events: [makeEvent('payment_pending', payment, null)] };
    }
    if (requested_3ds && behaviour === 'not_enrolled') {
      const downgrade = three_ds?.attempt_n3d === true;
      payment.three_ds = {
        behaviour,
        phase: downgrade ? 'downgraded' : 'not_enrolled',
        success_url: null,
        failure_url: null,
        redirect_to: null,
      };
      if (!downgrade) {
        const action = addAction(payment, 'Authorization', payment.amount, '20150');
        payment.response_code = action.response_code;
        payment.status = 'Declined';
        return { status: 201, json: paymentResponse(payment, action), events: [makeEvent('payment_declined', payment, action)] };
      }
      const { body: answer, events: created } = authorize(payment, false);
      return { status: 201, json: answer, events: created };
    }
    if (requested_3ds && behaviour === 'frictionless') {
      payment.three_ds = { behaviour, phase: 'frictionless', success_url: null, failure_url: null, redirect_to: null };
      const { body: answer, events: created } = authorize(payment, true);
      return { status: 201, json: answer, events: created };
    }
    const { body: answer, events: created } = authorize(payment, false);
    return { status: 201, json: answer, events: created };
  }

  function processPayout(body: JsonObject): Answer {
    const source = asRecord(body.source);
    const destination = asRecord(body.destination);
    if (source?.type !== 'currency_account') return invalid(['payment_source_type_not_supported']);
    // CHOSEN: the fake pays out to cards given in full only (no instrument ids or bank accounts).
    if (destination?.type !== 'card') return invalid(['destination_type_not_supported']);
    const card_problems = cardProblems(destination);
    if (card_problems.length > 0) return invalid(card_problems);
    // CardPayoutRequest asks for `amount` or `source.amount` in words (its schema requires neither).
    const amount = typeof body.amount === 'number' ? body.amount : source.amount;
    if (typeof amount !== 'number') return invalid(['amount_required']);
    const payment = newPayment('payout', body, destination, amount);
    if (payout_settle_ms !== null) {
      payment.payout_timer = setTimeout(() => {
        payment.payout_timer = null;
        void webhooks.publish(settlePayout(payment));
      }, payout_settle_ms);
    }
    const json: JsonObject = { id: payment.id, status: 'Pending' };
    if (payment.reference !== null) json.reference = payment.reference;
    json._links = { self: { href: `${base_url}/payments/${payment.id}` } };
    return { status: 202, json, events: [] };
  }

  function settlePayout(payment: PaymentState): EventState[] {
    if (payment.kind !== 'payout' || payment.status !== 'Pending') return [];
    if (payment.payout_timer) clearTimeout(payment.payout_timer);
    payment.payout_timer = null;
    const code = rules.payoutCode(payment.card.number, payment.amount, { amount_triggers });
    const action = addAction(payment, 'Payout', payment.amount, code);
    payment.approved = action.approved;
    payment.response_code = code;
    payment.status = action.approved ? 'Paid' : 'Declined';
    return [makeEvent(action.approved ? 'payment_paid' : 'payment_declined', payment, action)];
  }

  /** What a capture or void answers (CaptureAcceptedResponse, VoidAcceptedResponse). */
  function actionAccepted(payment: PaymentState, action: ActionState): JsonObject {
    const json: JsonObject = { action_id: action.id };
    if (action.reference !== null) json.reference = action.reference;
    json._links = { payment: { href: `${base_url}/payments/${payment.id}` } };
    return json;
  }

  /** One capture per authorization: what is not captured is released (see the file comment). */
  function processCapture(payment: PaymentState | undefined, body: JsonObject): Answer {
    if (!payment) return { status: 404, events: [] };
    if (payment.kind !== 'payment' || payment.status !== 'Authorized') return { status: 403, events: [] };
    const amount = typeof body.amount === 'number' ? body.amount : payment.amount;
    // CHOSEN error codes, modelled on the documented amount_invalid / amount_exceeds_balance.
    if (amount <= 0) return invalid(['amount_invalid']);
    if (amount > payment.amount) return invalid(['capture_amount_exceeds_balance']);
    const reference = typeof body.reference === 'string' ? body.reference : null;
    const declined = declines.capture.shift();
    const action = addAction(payment, 'Capture', amount, declined ?? rules.APPROVED, { reference, metadata: asRecord(body.metadata) });
    if (!action.approved)
      return { status: 202, json: actionAccepted(payment, action), events: [makeEvent('payment_capture_declined', payment, action)] };
    payment.captured = amount;
    payment.released = payment.amount - amount;
    payment.status = amount < payment.amount ? 'Partially Captured' : 'Captured';
    return { status: 202, json: actionAccepted(payment, action), events: [makeEvent('payment_captured', payment, action)] };
  }

  function processVoid(payment: PaymentState | undefined, body: JsonObject): Answer {
    if (!payment) return { status: 404, events: [] };
    if (payment.kind !== 'payment' || payment.status !== 'Authorized') return { status: 403, events: [] };
    const reference = typeof body.reference === 'string' ? body.reference : null;
    const declined = declines.void.shift();
    const action = addAction(payment, 'Void', payment.amount, declined ?? rules.APPROVED, { reference, metadata: asRecord(body.metadata) });
    if (!action.approved)
      return { status: 202, json: actionAccepted(payment, action), events: [makeEvent('payment_void_declined', payment, action)] };
    payment.released = payment.amount;
    payment.status = 'Voided';
    return { status: 202, json: actionAccepted(payment, action), events: [makeEvent('payment_voided', payment, action)] };
  }

  /** Statuses a refund (through the API or the dashboard) takes. */
  function refundable(payment: PaymentState): boolean {
    return (
      payment.kind === 'payment' &&
      ['Captured', 'Partially Captured', 'Partially Refunded'].includes(payment.status) &&
      payment.captured - payment.refunded > 0
    );
  }

  function processRefund(payment: PaymentState | undefined, body: JsonObject): Answer {
    if (!payment) return { status: 404, events: [] };
    const remaining = payment.captured - payment.refunded;
    if (!refundable(payment)) return { status: 403, events: [] };
    const amount = typeof body.amount === 'number' ? body.amount : remaining;
    if (amount <= 0) return invalid(['amount_invalid']);
    // CHOSEN error code: modelled on the documented amount_exceeds_balance.
    if (amount > remaining) return invalid(['refund_amount_exceeds_balance']);
    const reference = typeof body.reference === 'string' ? body.reference : null;
    const action = addAction(payment, 'Refund', amount, rules.refundCode(amount), { reference, metadata: asRecord(body.metadata) });
    if (action.approved) {
      payment.refunded += amount;
      payment.status = payment.refunded >= payment.captured ? 'Refunded' : 'Partially Refunded';
    }
    const json: JsonObject = { action_id: action.id };
    if (reference !== null) json.reference = reference;
    json._links = { payment: { href: `${base_url}/payments/${payment.id}` } };
    return { status: 202, json, events: [makeEvent(action.approved ? 'payment_refunded' : 'payment_refund_declined', payment, action)] };
  }

  function cardProblems(card: JsonObject): string[] {
    const problems: string[] = [];
    const number = String(card.number ?? '');
    const month = Number(card.expiry_month);
    const year = Number(card.expiry_year);
    if (!rules.luhnValid(number)) problems.push('card_number_invalid');
    // The description only says "integer" (its minLength/maxLength do not apply to numbers).
    if (!Number.isInteger(month) || month < 1 || month > 12) problems.push('card_expiry_month_invalid');
    if (!Number.isInteger(year) || year < 1000 || year > 9999) problems.push('card_expiry_year_invalid');
    const now = new Date();
    if (problems.length === 0 && (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)))
      problems.push('card_expired');
    return problems;
  }

  // ---------------------------------------------------------------- bodies of answers

  function cardSource(payment: PaymentState, with_id: boolean): JsonObject {
    const card = payment.card;
    const source: JsonObject = { type: 'card' };
    if (with_id) source.id = card.source_id;
    if (card.billing_address !== undefined) source.billing_address = card.billing_address;
    if (card.phone !== undefined) source.phone = card.phone;
    source.expiry_month = card.expiry_month;
    source.expiry_year = card.expiry_year;
    if (card.name !== null) source.name = card.name;
    source.scheme = rules.schemeOf(card.number);
    source.last4 = card.number.slice(-4);
    source.fingerprint = rules.fingerprintOf(card.number);
    source.bin = card.number.slice(0, 6);
    source.card_type = 'Credit';
    source.card_category = 'Consumer';
    return source;
  }

  function customerOf(payment: PaymentState): JsonObject | null {
    const customer = asRecord(payment.request.customer);
    if (!customer || payment.customer_id === null) return null;
    const out: JsonObject = { id: payment.customer_id };
    if (typeof customer.email === 'string') out.email = customer.email;
    if (typeof customer.name === 'string') out.name = customer.name;
    return out;
  }

  function links(payment: PaymentState): JsonObject {
    const self = `${base_url}/payments/${payment.id}`;
    const out: JsonObject = { self: { href: self }, actions: { href: `${self}/actions` } };
    if (payment.status === 'Authorized') {
      out.capture = { href: `${self}/captures` };
      out.void = { href: `${self}/voids` };
    }
    if (payment.kind === 'payment' && payment.captured > payment.refunded) out.refund = { href: `${self}/refunds` };
    return out;
  }

  /** PaymentResponse (201) for the authorization or verification just made. */
  function paymentResponse(payment: PaymentState, action: ActionState): JsonObject {
    const json: JsonObject = {
      id: payment.id,
      action_id: action.id,
      amount: payment.amount,
      currency: payment.currency,
      approved: action.approved,
      status: action.approved ? (action.type === 'Card Verification' ? 'Card Verified' : 'Authorized') : 'Declined',
    };
    if (action.auth_code !== null) json.auth_code = action.auth_code;
    json.response_code = action.response_code;
    json.response_summary = rules.summaryOf(action.response_code);
    const three_ds = payment.three_ds;
    if (three_ds && three_ds.phase !== 'pending')
      json['3ds'] = { downgraded: three_ds.phase === 'downgraded', enrolled: three_ds.behaviour === 'not_enrolled' ? 'N' : 'Y' };
    json.risk = { flagged: false };
    json.source = cardSource(payment, action.approved);
    const customer = customerOf(payment);
    if (customer) json.customer = customer;
    json.processed_on = action.processed_on;
    if (payment.reference !== null) json.reference = payment.reference;
    json.processing = {
      retrieval_reference_number: payment.retrieval_reference_number,
      acquirer_transaction_id: payment.acquirer_transaction_id,
    };
    if (three_ds && (three_ds.phase === 'authenticated' || three_ds.phase === 'frictionless')) json.eci = '05';
    if (action.approved) json.scheme_id = payment.scheme_id;
    const self = `${base_url}/payments/${payment.id}`;
    const answer_links: JsonObject = { self: { href: self }, actions: { href: `${self}/actions` } };
    if (action.approved && action.type === 'Authorization') {
      if (!payment.capture) {
        answer_links.capture = { href: `${self}/captures` };
        answer_links.void = { href: `${self}/voids` };
      }
    }
    json._links = answer_links;
    return json;
  }

  /** PaymentAcceptedResponse (202) of a payment waiting for its 3-D Secure challenge. */
  function acceptedResponse(payment: PaymentState): JsonObject {
    const json: JsonObject = { id: payment.id, status: 'Pending' };
    if (payment.reference !== null) json.reference = payment.reference;
    const customer = customerOf(payment);
    if (customer) json.customer = customer;
    json['3ds'] = { downgraded: false, enrolled: 'Y' };
    json._links = {
      self: { href: `${base_url}/payments/${payment.id}` },
      redirect: { href: `${base_url}/3ds/${payment.session_id ?? ''}` },
    };
    return json;
  }

  /** PaymentDetails or PayoutDetails (GET /payments/{id} and the list). */
  function details(payment: PaymentState, by_session: boolean): JsonObject {
    if (payment.kind === 'payout') return payoutDetails(payment);
    const request = payment.request;
    const json: JsonObject = { id: payment.id, requested_on: payment.requested_on, source: cardSource(payment, payment.approved) };
    json.amount = payment.amount;
    json.currency = payment.currency;
    json.payment_type = typeof request.payment_type === 'string' ? request.payment_type : 'Regular';
    if (payment.reference !== null) json.reference = payment.reference;
    if (typeof request.description === 'string') json.description = request.description;
    json.approved = payment.approved;
    json.status = payment.status;
    const three_ds = payment.three_ds;
    if (three_ds) {
      const data: JsonObject = { downgraded: three_ds.phase === 'downgraded', enrolled: three_ds.behaviour === 'not_enrolled' ? 'N' : 'Y' };
      if (three_ds.phase === 'authenticated' || three_ds.phase === 'frictionless') data.authentication_response = 'Y';
      if (three_ds.phase === 'failed') data.authentication_response = 'N';
      if (three_ds.behaviour !== 'not_enrolled') data.version = '2.2.0';
      json['3ds'] = data;
    }
    json.risk = { flagged: false };
    const customer = customerOf(payment);
    if (customer) json.customer = customer;
    for (const echoed of ['billing_descriptor', 'shipping', 'payment_ip', 'metadata'] as const) {
      if (request[echoed] !== undefined) json[echoed] = request[echoed];
    }
    if (three_ds && (three_ds.phase === 'authenticated' || three_ds.phase === 'frictionless')) json.eci = '05';
    if (payment.approved) json.scheme_id = payment.scheme_id;
    if (by_session) {
      json.actions = [...payment.actions]
        .reverse()
        .filter((a) => a.type !== 'Payout')
        .map((a) => ({ id: a.id, type: a.type, response_code: a.response_code, response_summary: rules.summaryOf(a.response_code) }));
    }
    json._links = links(payment);
    return json;
  }

  function payoutDetails(payment: PaymentState): JsonObject {
    const request = payment.request;
    const json: JsonObject = {
      id: payment.id,
      requested_on: payment.requested_on,
      source: { type: 'currency_account', id: String(asRecord(request.source)?.id ?? '') },
      destination: { type: 'card', id: payment.card.source_id },
      amount: payment.amount,
      currency: payment.currency,
    };
    if (payment.reference !== null) json.reference = payment.reference;
    const descriptor = asRecord(request.billing_descriptor);
    if (descriptor) json.billing_descriptor = { reference: descriptor.reference };
    json.status = payment.status;
    if (payment.status !== 'Pending') json.approved = payment.approved;
    // PayoutDetails has no metadata; PaygateSupplementCardPayoutDetails is PayoutDetails with it.
    const metadata = asRecord(request.metadata);
    if (metadata) json.metadata = metadata;
    json._links = { self: { href: `${base_url}/payments/${payment.id}` }, actions: { href: `${base_url}/payments/${payment.id}/actions` } };
    return json;
  }

  function actionsResponse(payment: PaymentState): JsonObject[] {
    return [...payment.actions].reverse().map((action) => {
      const json: JsonObject = {
        id: action.id,
        type: action.type,
        processed_on: action.processed_on,
        amount: action.amount,
        approved: action.approved,
      };
      if (action.auth_code !== null) json.auth_code = action.auth_code;
      json.response_code = action.response_code;
      json.response_summary = rules.summaryOf(action.response_code);
      if (action.reference !== null) json.reference = action.reference;
      if (action.type === 'Authorization')
        json.processing = {
          retrieval_reference_number: payment.retrieval_reference_number,
          acquirer_transaction_id: payment.acquirer_transaction_id,
        };
      if (action.metadata !== null) json.metadata = action.metadata;
      return json;
    });
  }

  function invalid(error_codes: readonly string[]): Answer {
    return { status: 422, json: { request_id: randomUUID(), error_type: 'request_invalid', error_codes: [...error_codes] }, events: [] };
  }

  // ---------------------------------------------------------------- events

  function makeEvent(type: string, payment: PaymentState, action: ActionState | null, with_reference = true): EventState {
    const data: JsonObject = { id: payment.id };
    // payment_pending has no action yet: it names the Authorization to come. CHOSEN.
    const action_id = action?.id ?? payment.pending_action_id ?? newId('act');
    data.action_id = action_id;
    data.amount = action?.amount ?? payment.amount;
    data.currency = payment.currency;
    if (action) {
      data.approved = action.approved;
      if (action.auth_code !== null) data.auth_code = action.auth_code;
      data.response_code = action.response_code;
      data.response_summary = rules.summaryOf(action.response_code);
      data.processed_on = action.processed_on;
    }
    const reference = action?.type === 'Refund' ? (action.reference ?? payment.reference) : payment.reference;
    // A refund made in the dashboard carries no reference (CHOSEN: none was typed there).
    if (reference !== null && with_reference) data.reference = reference;
    const metadata = action?.metadata ?? asRecord(payment.request.metadata);
    if (metadata) data.metadata = metadata;
    return recordEvent(type, payment, action_id, data);
  }

  /** The event of a dispute (our supplement's PaygateSupplementDisputeEvent; SOURCE.md). */
  function makeDisputeEvent(type: string, dispute: DisputeState, with_deadline: boolean): EventState {
    const payment = dispute.payment;
    const data: JsonObject = {
      id: dispute.id,
      date: new Date().toISOString(),
      category: dispute.category,
      amount: dispute.amount,
      currency: payment.currency,
      reason_code: dispute.reason_code,
    };
    if (with_deadline) data.evidence_required_by = dispute.evidence_required_by;
    data.payment_id = payment.id;
    data.payment_action_id = dispute.action_id;
    if (payment.reference !== null) data.payment_reference = payment.reference;
    data.payment_method = rules.schemeOf(payment.card.number);
    dispute.events.push(type);
    return recordEvent(type, payment, dispute.id, data);
  }

  function recordEvent(type: string, payment: PaymentState, action_id: string, data: JsonObject): EventState {
    const id = newId('evt');
    const json = { id, type, created_on: new Date().toISOString(), data, _links: { self: { href: `${base_url}/events/${id}` } } };
    const body = JSON.stringify(json);
    violations.add('event', `event ${type} ${id}`, validator.validateEvent(json));
    const event: EventState = {
      id,
      type,
      payment_id: payment.id,
      action_id,
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

  // ---------------------------------------------------------------- 3-D Secure page

  function completeChallenge(payment: PaymentState, password: string): EventState[] {
    const three_ds = payment.three_ds;
    if (!three_ds || three_ds.phase !== 'pending') return [];
    const authenticated = password === rules.SANDBOX_3DS_PASSWORD && three_ds.behaviour !== 'challenge_rejected';
    if (!authenticated) {
      three_ds.phase = 'failed';
      const action = addAction(payment, 'Authorization', payment.amount, '20151');
      payment.response_code = action.response_code;
      payment.status = 'Declined';
      three_ds.redirect_to = withSession(three_ds.failure_url, payment);
      return [makeEvent('payment_authentication_failed', payment, action)];
    }
    three_ds.phase = 'authenticated';
    const { events: created } = authorize(payment, true);
    three_ds.redirect_to = withSession(payment.approved ? three_ds.success_url : three_ds.failure_url, payment);
    return created;
  }

  function withSession(target: string | null, payment: PaymentState): string | null {
    if (target === null) return null;
    return `${target}${target.includes('?') ? '&' : '?'}cko-session-id=${encodeURIComponent(payment.session_id ?? '')}`;
  }

  function handleChallenge(method: string, path: string, body: string, record: RecordedState, response: http.ServerResponse): void {
    const session_id = decodeURIComponent(path.slice('/3ds/'.length));
    const payment = sessions.get(session_id);
    const { page: html, redirect } = pageAnswers(response, (status) => {
      record.status = status;
    });
    if (!payment?.three_ds) return html(404, unknownSessionPage());
    const three_ds = payment.three_ds;
    if (three_ds.phase !== 'pending') {
      return three_ds.redirect_to
        ? redirect(three_ds.redirect_to)
        : html(200, finishedPage(three_ds.phase === 'authenticated' && payment.approved));
    }
    if (method === 'GET') return html(200, challengePage({ session_id, amount: payment.amount, currency: payment.currency }));
    if (method !== 'POST') return html(405, unknownSessionPage());
    const password = new URLSearchParams(body).get('password') ?? '';
    void webhooks.publish(completeChallenge(payment, password));
    // completeChallenge moved the phase on (TypeScript still narrows it to 'pending' here).
    const phase = three_ds.phase as FakePaymentView['three_ds'];
    return three_ds.redirect_to ? redirect(three_ds.redirect_to) : html(200, finishedPage(phase === 'authenticated' && payment.approved));
  }

  // ---------------------------------------------------------------- API routes

  function idempotent(route: FakeCheckoutRoute, path: string, record: RecordedState, work: () => Answer): Answer {
    const key = record.idempotency_key;
    if (key === null) return work();
    const scope = `${route}|${path}|${key}`;
    const body_hash = createHash('sha256').update(record.body).digest('hex');
    const stored = idempotency.get(scope);
    if (stored && Date.now() - stored.at_ms < idempotency_window_ms) {
      record.idempotency = stored.body_hash === body_hash ? 'replayed' : 'replayed_different_body';
      return { status: stored.status, text: stored.text, events: [] };
    }
    record.idempotency = 'new';
    const answer = work();
    if (answer.status >= 200 && answer.status < 300) {
      idempotency.set(scope, { status: answer.status, text: JSON.stringify(answer.json), body_hash, at_ms: Date.now() });
      if (idempotency.size > max_recorded) idempotency.delete(idempotency.keys().next().value ?? '');
      const id = asRecord(answer.json)?.id;
      const payment =
        typeof id === 'string' ? payments.get(id) : path.startsWith('/payments/') ? payments.get(path.split('/')[2] ?? '') : undefined;
      payment?.idempotency_keys.push(key);
    }
    return answer;
  }

  function findPayment(id: string): PaymentState | undefined {
    return id.startsWith('sid_') ? sessions.get(id) : payments.get(id);
  }

  function processRoute(route: FakeCheckoutRoute, match: MatchedOperation, url: URL, record: RecordedState): Answer {
    const body = asRecord(record.json) ?? {};
    const id = match.path_params.id ?? '';
    switch (route) {
      case 'POST /payments':
        return idempotent(route, url.pathname, record, () => processPaymentRequest(body));
      case 'POST /payments/{id}/refunds':
        return idempotent(route, url.pathname, record, () => processRefund(payments.get(id), body));
      case 'POST /payments/{id}/captures':
        return idempotent(route, url.pathname, record, () => processCapture(payments.get(id), body));
      case 'POST /payments/{id}/voids':
        return idempotent(route, url.pathname, record, () => processVoid(payments.get(id), body));
      case 'GET /payments/{id}': {
        const payment = findPayment(id);
        return payment ? { status: 200, json: details(payment, id.startsWith('sid_')), events: [] } : { status: 404, events: [] };
      }
      case 'GET /payments/{id}/actions': {
        const payment = payments.get(id);
        // CHOSEN: a payment with no action yet (3DS or payout pending) is answered 404, as the
        // description requires at least one action in a 200 answer.
        return payment && payment.actions.length > 0
          ? { status: 200, json: actionsResponse(payment), events: [] }
          : { status: 404, events: [] };
      }
      case 'GET /payments': {
        const reference = url.searchParams.get('reference') ?? '';
        const limit = Number(url.searchParams.get('limit') ?? 10);
        const skip = Number(url.searchParams.get('skip') ?? 0);
        const matching = [...payments.values()].filter((p) => p.reference === reference).sort((a, b) => b.seq - a.seq);
        return {
          status: 200,
          json: { limit, skip, total_count: matching.length, data: matching.slice(skip, skip + limit).map((p) => details(p, false)) },
          events: [],
        };
      }
    }
  }

  function invalidRequestAnswer(route: FakeCheckoutRoute, problems: readonly string[]): Answer {
    // The GET-by-id operations declare no 422: a malformed id is an unknown payment there.
    if (route === 'GET /payments/{id}' || route === 'GET /payments/{id}/actions') return { status: 404, events: [] };
    return invalid(errorCodesOf(problems, route));
  }

  function writeAnswer(
    response: http.ServerResponse,
    record: RecordedState,
    status: number,
    text: string | null,
    request_id: string,
  ): void {
    record.status = status;
    record.answer_body = text;
    const headers: Record<string, string> = { 'cko-request-id': request_id, 'cache-control': 'no-store' };
    if (text === null) response.writeHead(status, { ...headers, 'content-length': '0' }).end();
    else response.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' }).end(text);
  }

  async function handle(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    { text: body_text, too_large }: RequestBody,
  ): Promise<void> {
    if (options.hanging?.() === true) return;
    if (answer_delay_ms > 0) await new Promise((resolve) => setTimeout(resolve, answer_delay_ms));
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', base_url);
    let json: unknown;
    try {
      json = body_text === '' ? null : (JSON.parse(body_text) as unknown);
    } catch {
      json = null;
    }
    const key_header = request.headers['cko-idempotency-key'];
    request_seq += 1;
    const record: RecordedState = {
      seq: request_seq,
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      route: null,
      headers: request.headers,
      idempotency_key: typeof key_header === 'string' ? key_header : null,
      body: body_text,
      json,
      at_ms: Date.now(),
      status: null,
      answer_body: null,
      failure: null,
      idempotency: null,
    };
    requests.push(record);
    keepBounded(requests, max_recorded);

    if (url.pathname.startsWith('/3ds/')) return handleChallenge(method, url.pathname, body_text, record, response);
    if (answeredIconRequest(url.pathname, response, record)) return;
    const label = `${method} ${url.pathname}`;
    if (too_large) {
      violations.add('request', label, [`the body is larger than ${BODY_MAX_BYTES} bytes`]);
      return writeAnswer(response, record, 413, null, randomUUID());
    }
    const match = validator.matchOperation(method, url.pathname);
    const route =
      match && ROUTES.includes(`${match.method} ${match.template}` as FakeCheckoutRoute)
        ? (`${match.method} ${match.template}` as FakeCheckoutRoute)
        : null;
    record.route = route;
    const failure = route ? failures.take(route) : null;
    record.failure = failure;
    if (failure === 'reset_before_processing') {
      request.socket.destroy();
      return;
    }
    if (failure === 'http_500' || failure === 'http_503')
      return writeAnswer(response, record, failure === 'http_500' ? 500 : 503, null, randomUUID());

    const problems = validator.validateRequest({ method, path: url.pathname + url.search, headers: request.headers, raw_body: body_text });
    violations.add('request', label, problems);
    let answer: Answer;
    if (!match || !route) answer = { status: 404, events: [] };
    else if (request.headers.authorization !== `Bearer ${secret_key}`) answer = { status: 401, events: [] };
    else if (problems.length > 0) answer = invalidRequestAnswer(route, problems);
    else answer = processRoute(route, match, url, record);

    const text = answerText(answer);
    if (route) {
      violations.add(
        'response',
        `${label} → ${answer.status}`,
        validator.validateResponse({ method, path: url.pathname, status: answer.status, raw_body: text ?? '' }),
      );
    }
    const request_id = randomUUID();
    await sendProcessed(
      failure,
      {
        request,
        response,
        record,
        text,
        garbage_start: '{"id":"pay_',
        write: (body) => writeAnswer(response, record, answer.status, body, request_id),
        publish: () => webhooks.publish(answer.events),
      },
      held_answers,
    );
  }

  const server = await startLocalServer({
    body_max_bytes: BODY_MAX_BYTES,
    handle: failuresAsViolations(violations, handle),
    keep_alive_timeout_ms: options.keep_alive_timeout_ms,
  });
  base_url = server.url;

  // ---------------------------------------------------------------- views and controls

  function actionView(a: ActionState): FakeAction {
    return {
      id: a.id,
      type: a.type,
      amount: a.amount,
      approved: a.approved,
      response_code: a.response_code,
      reference: a.reference,
      metadata: a.metadata,
    };
  }

  function disputeView(dispute: DisputeState): FakeDisputeView {
    return {
      id: dispute.id,
      payment_id: dispute.payment.id,
      amount: dispute.amount,
      currency: dispute.payment.currency,
      category: dispute.category,
      reason_code: dispute.reason_code,
      status: dispute.status,
      evidence_required_by: dispute.evidence_required_by,
      events: [...dispute.events],
    };
  }

  function view(payment: PaymentState): FakePaymentView {
    const actions = payment.actions.map(actionView);
    return {
      id: payment.id,
      session_id: payment.session_id,
      kind: payment.kind,
      reference: payment.reference,
      amount: payment.amount,
      currency: payment.currency,
      status: payment.status,
      approved: payment.approved,
      response_code: payment.response_code,
      captured_amount: payment.captured,
      released_amount: payment.released,
      refunded_amount: payment.refunded,
      refunds: actions.filter((a) => a.type === 'Refund'),
      actions,
      idempotency_keys: [...payment.idempotency_keys],
      card_last4: payment.card.number.slice(-4),
      metadata: asRecord(payment.request.metadata),
      three_ds: payment.three_ds?.phase ?? 'none',
      disputes: payment.disputes.map(disputeView),
    };
  }

  /** Pending payouts settle no more. */
  function stopTimers(): void {
    for (const payment of payments.values()) if (payment.payout_timer) clearTimeout(payment.payout_timer);
  }

  return {
    ...createProcessorControls({ violations, requests, events, failures, webhooks, held_answers, server, stopTimers }),
    url: base_url,
    secret_key,
    get payments() {
      return [...payments.values()].map(view);
    },
    payment(id) {
      const payment = findPayment(id);
      return payment ? view(payment) : undefined;
    },
    paymentsWithReference(reference) {
      return [...payments.values()].filter((p) => p.reference === reference).map(view);
    },
    setWebhookEndpoint(url, secret = '', headers = {}) {
      webhooks.setEndpoint(url === null ? null : { url, secret, headers: { ...headers } });
    },
    async settlePayouts() {
      const created = [...payments.values()].filter((p) => p.kind === 'payout' && p.status === 'Pending').flatMap(settlePayout);
      await webhooks.publish(created);
    },
    async abandonChallenge(payment_id) {
      const payment = payments.get(payment_id);
      if (!payment?.three_ds || payment.three_ds.phase !== 'pending')
        throw new Error(`fake checkout: ${payment_id} has no pending challenge`);
      payment.three_ds.phase = 'failed';
      const action = addAction(payment, 'Authorization', payment.amount, '20152');
      payment.response_code = action.response_code;
      payment.status = 'Declined';
      payment.three_ds.redirect_to = withSession(payment.three_ds.failure_url, payment);
      await webhooks.publish([makeEvent('payment_authentication_failed', payment, action)]);
    },
    async openDispute(payment_id, options = {}) {
      const payment = payments.get(payment_id);
      const capture = payment?.actions.find((a) => a.type === 'Capture' && a.approved);
      if (!payment || !capture) throw new Error(`fake checkout: ${payment_id} is no captured payment to dispute`);
      const amount = options.amount ?? payment.captured - payment.refunded;
      if (!Number.isSafeInteger(amount) || amount <= 0) throw new Error(`fake checkout: a dispute of ${amount}`);
      const dispute: DisputeState = {
        // Dispute.id: "^(dsp)_(\w{22})$" in the description (its own examples have 20 characters).
        id: newId('dsp', 22),
        payment,
        amount,
        category: options.category ?? 'fraudulent',
        reason_code: options.reason_code ?? '10.4',
        action_id: capture.id,
        received_on: new Date().toISOString(),
        evidence_required_by: new Date(Date.now() + (options.evidence_due_in_ms ?? DISPUTE_EVIDENCE_DAYS_MS)).toISOString(),
        status: 'evidence_required',
        events: [],
      };
      disputes.set(dispute.id, dispute);
      payment.disputes.push(dispute);
      const created = [makeDisputeEvent('dispute_received', dispute, true)];
      if (options.evidence_required !== false) created.push(makeDisputeEvent('dispute_evidence_required', dispute, true));
      await webhooks.publish(created);
      return disputeView(dispute);
    },
    async moveDispute(dispute_id, to) {
      const dispute = disputes.get(dispute_id);
      if (!dispute) throw new Error(`fake checkout: no dispute ${dispute_id}`);
      const arbitration = to === 'arbitration_won' || to === 'arbitration_lost';
      if (CLOSED_DISPUTE.has(dispute.status) && !(arbitration && dispute.status === 'lost'))
        throw new Error(`fake checkout: dispute ${dispute_id} is ${dispute.status} already`);
      dispute.status = DISPUTE_STATUS_AFTER[to];
      await webhooks.publish([makeDisputeEvent(`dispute_${to}`, dispute, false)]);
      return disputeView(dispute);
    },
    dispute(dispute_id) {
      const dispute = disputes.get(dispute_id);
      return dispute ? disputeView(dispute) : undefined;
    },
    async refundFromDashboard(payment_id, amount) {
      const payment = payments.get(payment_id);
      if (!payment || !refundable(payment)) throw new Error(`fake checkout: ${payment_id} has nothing to refund`);
      const remaining = payment.captured - payment.refunded;
      const refunded = amount ?? remaining;
      if (!Number.isSafeInteger(refunded) || refunded <= 0 || refunded > remaining)
        throw new Error(`fake checkout: a refund of ${refunded} when ${remaining} remains`);
      const action = addAction(payment, 'Refund', refunded, rules.APPROVED, { reference: null, metadata: null });
      payment.refunded += refunded;
      payment.status = payment.refunded >= payment.captured ? 'Refunded' : 'Partially Refunded';
      await webhooks.publish([makeEvent('payment_refunded', payment, action, false)]);
      return actionView(action);
    },
    hangNextCapture() {
      failures.failNext('POST /payments/{id}/captures', 'timeout');
    },
    declineNext(action, response_code = '20012') {
      if (declines[action].length >= FAILURES_QUEUED_MAX) throw new Error('fake checkout: too many declines queued');
      declines[action].push(response_code);
    },
  };
}

/** 422 error codes from the validator's problems, after Checkout.com's `<field>_required` / `<field>_invalid` naming. */
function errorCodesOf(problems: readonly string[], route: FakeCheckoutRoute): string[] {
  const names: Record<string, string> = {
    source: 'payment_source',
    'source.type': 'payment_source_type',
    'source.number': 'card_number',
    'source.expiry_month': 'card_expiry_month',
    'source.expiry_year': 'card_expiry_year',
    'source.cvv': 'cvv',
  };
  const field = (path: string): string => {
    const dotted = path
      .replace(/^\//, '')
      .split('/')
      .filter((s) => !/^\d+$/.test(s))
      .join('.');
    return names[dotted] ?? dotted.replace(/\./g, '_');
  };
  const codes = new Set<string>();
  for (const problem of problems) {
    const missing = /body( \/\S+)? is missing required property "([^"]+)"/.exec(problem);
    const query = /query parameter (\w+) (is required|.*)/.exec(problem);
    const wrong = /body (\/\S+) /.exec(problem);
    if (missing) codes.add(`${field(`${missing[1]?.trim() ?? ''}/${missing[2] ?? ''}`)}_required`);
    else if (query) {
      const name = query[1] ?? '';
      const paging = route === 'GET /payments' && (name === 'limit' || name === 'skip');
      codes.add(`${paging ? 'paging_' : ''}${name}_${query[2] === 'is required' ? 'required' : 'invalid'}`);
    } else if (wrong) codes.add(`${field(wrong[1] ?? '')}_invalid`);
  }
  return codes.size > 0 ? [...codes] : ['request_invalid'];
}

function asRecord(value: unknown): JsonObject | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : null;
}

function newId(prefix: string, length = 26): string {
  let text = '';
  for (const byte of randomBytes(length)) text += ID_ALPHABET[byte & 31];
  return `${prefix}_${text}`;
}

function randomDigits(count: number): string {
  let text = '';
  for (const byte of randomBytes(count)) text += String(byte % 10);
  return text;
}
