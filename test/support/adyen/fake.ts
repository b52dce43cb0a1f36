// A fake Adyen for the tests (test code only): Checkout API v71 and Payout API v68 under one
// base URL on 127.0.0.1, stateful, answering as Adyen's published descriptions say
// (test/psp-specs/adyen; every request received, answer given and notification sent is checked
// by spec.ts, and problems go to `fake.violations`), and sending standard notifications, each item
// signed with the HMAC key, to a registered URL, which must answer `[accepted]`.
//
// What it does:
// - POST /checkout/v71/payments (X-API-Key = api_key, card details in paymentMethod type scheme,
//   Idempotency-Key: the same key and body answer the first answer again, another body 422):
//   the card's holder name picks the outcome as Adyen's test environment does with its test
//   names (REFUSED_HOLDERS below: DECLINED, NOT_ENOUGH_BALANCE, STOLEN_CARD, ... → Refused with
//   that refusalReason; ERROR → Error), card 4917610000000000 asks for 3-D Secure
//   (RedirectShopper, action.url to the fake's page /threeds/{token} with Approve and Fail
//   buttons, which sends the browser to returnUrl?redirectResult=...); one of Adyen's test cards
//   (TEST_CARD_CVCS) sent with another CVC than its published one is Refused with the generic
//   DECLINED reason, as Adyen's result-code testing page says of "an incorrect CVC"; anything
//   else Authorised.
//   captureDelayHours > 0 or additionalData.manualCapture "true" makes an authorization to
//   capture later; otherwise the payment is captured at once. An AUTHORISATION notification
//   follows every final result.
// - POST /checkout/v71/payments/details (redirectResult) → the final resultCode.
// - POST /payments/{psp}/captures, /cancels, /refunds → 201 status "received"; the outcome follows
//   by notification CAPTURE, CANCELLATION, REFUND (success false when it cannot be done).
// - POST /pal/servlet/Payout/v68/storeDetailAndSubmitThirdParty (payout_api_key) →
//   [payout-submit-received]; confirmThirdParty (payout_reviewer_api_key) →
//   [payout-confirm-received]; declineThirdParty → [payout-decline-received] and PAYOUT_DECLINE.
//   A wrong key for the role is 401/403.
// Controls (beyond the shared ones of fake-processor/controls.ts: failNext, holdEvents,
// releaseHeldEvents, redeliver, sendRaw, waitForEvent, violations): settlePayout(psp, outcome),
// chargeback(psp, stage, options), customerAreaRefund(psp, amount_minor), payment(psp), paymentsWithReference(reference), payout(psp),
// setWebhookUrl(url).
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { createProcessorControls, type FakeProcessorControls } from '../fake-processor/controls.js';
import {
  createFailureQueue,
  createHeldAnswers,
  type FakeAnswer,
  type FakeFailureMode,
  sendProcessed,
} from '../fake-processor/failure-modes.js';
import { answeredIconRequest, escapeHtml, htmlPage, pageAnswers } from '../fake-processor/html.js';
import { failuresAsViolations, startLocalServer } from '../fake-processor/local-server.js';
import { keepBounded, type RecordedRequestBase, type Writable, createViolationLog } from '../fake-processor/recording.js';
import { createWebhookOutbox, type OutboxEvent } from '../fake-processor/webhook-outbox.js';
import { notificationHmac } from './hmac.js';
import { adyenValidator, CHECKOUT_PREFIX, PAYOUT_PREFIX } from './spec.js';

export type AdyenRoute =
  | 'payments'
  | 'payments/details'
  | 'captures'
  | 'cancels'
  | 'refunds'
  | 'storeDetailAndSubmitThirdParty'
  | 'confirmThirdParty'
  | 'declineThirdParty';

export type AdyenRecorded = RecordedRequestBase<AdyenRoute>;

export interface AdyenEvent extends OutboxEvent {
  readonly eventCode: string;
  readonly pspReference: string;
  readonly originalReference: string | null;
  readonly success: string;
}

export interface FakeAdyenPayment {
  readonly psp: string;
  readonly reference: string;
  readonly amount_minor: number;
  readonly currency: string;
  status: 'redirect' | 'authorised' | 'refused' | 'error';
  readonly manual_capture: boolean;
  captured_minor: number;
  cancelled: boolean;
  refunded_minor: number;
  readonly return_url: string;
  readonly threeds_token: string | null;
  /** The request's metadata (the connector's trace_id), sent back with the AUTHORISATION notification. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface FakeAdyenPayout {
  readonly psp: string;
  readonly reference: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly iban: string;
  status: 'submitted' | 'confirmed' | 'declined' | 'paid' | 'failed' | 'expired';
}

export type ChargebackStage = 'NOTIFICATION_OF_CHARGEBACK' | 'CHARGEBACK' | 'CHARGEBACK_REVERSED' | 'SECOND_CHARGEBACK';

export interface FakeAdyen extends FakeProcessorControls<AdyenRoute, AdyenEvent, AdyenRecorded> {
  readonly url: string;
  readonly api_key: string;
  readonly payout_api_key: string;
  readonly payout_reviewer_api_key: string;
  readonly merchant_account: string;
  readonly hmac_key: string;
  setWebhookUrl(url: string | null): void;
  payment(psp: string): FakeAdyenPayment | null;
  /** The payments made with this merchant reference (an order_id): one, however often it was sent with its key. */
  paymentsWithReference(reference: string): readonly FakeAdyenPayment[];
  payout(psp: string): FakeAdyenPayout | null;
  /** A confirmed payout is paid (PAYOUT_THIRDPARTY success true), fails (success false), or expires (PAYOUT_EXPIRE). */
  settlePayout(psp: string, outcome: 'paid' | 'failed' | 'expired'): Promise<AdyenEvent>;
  /** A dispute notification about a payment; amount_minor defaults to the payment's. */
  chargeback(psp: string, stage: ChargebackStage, options?: { amount_minor?: number; reason?: string }): Promise<AdyenEvent>;
  /** A refund made in Adyen's Customer Area: REFUND with a refund pspReference the gateway never saw. */
  customerAreaRefund(psp: string, amount_minor: number): Promise<AdyenEvent>;
}

export interface FakeAdyenOptions {
  readonly webhook_url?: string;
  readonly hold_events?: boolean;
}

/** Holder names that make Adyen's test environment refuse, with the refusalReason and code it gives. */
export const REFUSED_HOLDERS: Readonly<Record<string, { readonly reason: string; readonly code: string }>> = {
  DECLINED: { reason: 'Refused', code: '2' },
  NOT_ENOUGH_BALANCE: { reason: 'Not enough balance', code: '12' },
  BLOCK_CARD: { reason: 'Blocked Card', code: '5' },
  CARD_EXPIRED: { reason: 'Expired Card', code: '6' },
  STOLEN_CARD: { reason: 'FRAUD', code: '22' },
  INVALID_CARD: { reason: 'Invalid Card Number', code: '8' },
};
export const THREEDS_CARD = '4917610000000000';
/**
 * Adyen's test cards as its test-card page lists them, with their one accepted CVC: any other CVC
 * is refused with the generic DECLINED reason (Adyen's "Testing with card holder name" page: "If
 * you specify an incorrect CVC ... the payment fails and the operation returns a generic DECLINED
 * refusal reason"). Cards not in this list are not checked.
 */
export const TEST_CARD_CVCS: Readonly<Record<string, string>> = {
  '4111111111111111': '737',
  '5555555555554444': '737',
  [THREEDS_CARD]: '737',
};

const BODY_MAX_BYTES = 256 * 1024;
const MAX_RECORDED = 500;
const MAX_EVENTS = 500;

export async function startFakeAdyen(options: FakeAdyenOptions = {}): Promise<FakeAdyen> {
  const validator = adyenValidator();
  // Before the first request, not during it: the gateway's time-out would count the compiling.
  validator.precompile();
  const violations = createViolationLog(100);
  const requests: AdyenRecorded[] = [];
  const events: AdyenEvent[] = [];
  const failures = createFailureQueue<AdyenRoute>('fake adyen', 20);
  const held_answers = createHeldAnswers(20);
  const payments = new Map<string, FakeAdyenPayment>();
  const payouts = new Map<string, FakeAdyenPayout>();
  const by_threeds = new Map<string, string>();
  /** A payment's dispute keeps one pspReference through its stages, as Adyen's does. */
  const dispute_psps = new Map<string, string>();
  const idempotent = new Map<string, { readonly body: string; readonly status: number; readonly text: string }>();
  const keys = {
    api_key: `AQE_fake_${randomBytes(12).toString('hex')}`,
    payout_api_key: `AQE_payout_${randomBytes(12).toString('hex')}`,
    payout_reviewer_api_key: `AQE_review_${randomBytes(12).toString('hex')}`,
  };
  const merchant_account = 'PaygateFakeECOM';
  const hmac_key = randomBytes(32).toString('hex').toUpperCase();
  let seq = 0;
  let psp_seq = 0;

  const webhooks = createWebhookOutbox<AdyenEvent>({
    name: 'fake adyen',
    events,
    settings: { ...(options.webhook_url ? { webhook_url: options.webhook_url } : {}), hold_events: options.hold_events ?? false },
    // The signature travels in each item (additionalData.hmacSignature); this header only lets a
    // test see the last item's signature in the deliveries list. The connector does not read it.
    sign: (body) => {
      const parsed = JSON.parse(body) as {
        notificationItems?: { NotificationRequestItem?: { additionalData?: { hmacSignature?: string } } }[];
      };
      return parsed.notificationItems?.[0]?.NotificationRequestItem?.additionalData?.hmacSignature ?? '';
    },
    signature_header: 'x-fake-adyen-item-hmac',
    headers: { 'content-type': 'application/json', 'user-agent': 'Adyen HttpClient 1.0' },
    max_held_events: 200,
    max_released_ids: 100,
    wait_max_ms: 15_000,
  });

  function newPsp(): string {
    psp_seq += 1;
    // 16 characters, as Adyen's pspReference.
    return `F${String(Date.now() % 1e9).padStart(9, '0')}${String(psp_seq).padStart(6, '0')}`.slice(0, 16);
  }

  function makeEvent(
    eventCode: string,
    fields: { psp: string; original: string | null; reference: string; value: number; currency: string; success: boolean; reason?: string },
    extra: Record<string, unknown> = {},
  ): AdyenEvent {
    const item: Record<string, unknown> = {
      pspReference: fields.psp,
      ...(fields.original !== null ? { originalReference: fields.original } : {}),
      merchantAccountCode: merchant_account,
      merchantReference: fields.reference,
      amount: { value: fields.value, currency: fields.currency },
      eventCode,
      success: fields.success ? 'true' : 'false',
      eventDate: new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      ...(fields.reason !== undefined ? { reason: fields.reason } : {}),
    };
    const hmac = notificationHmac(
      {
        pspReference: fields.psp,
        originalReference: fields.original ?? '',
        merchantAccountCode: merchant_account,
        merchantReference: fields.reference,
        amount: { value: fields.value, currency: fields.currency },
        eventCode,
        success: item.success as string,
      },
      hmac_key,
    );
    item.additionalData = { ...extra, hmacSignature: hmac };
    const body = JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] });
    violations.add('event', `notification ${eventCode} ${fields.psp}`, validator.validateNotification(body));
    const event: AdyenEvent = {
      id: `${eventCode}:${fields.psp}:${events.length}`,
      type: eventCode,
      body,
      created_ms: Date.now(),
      state: 'queued',
      signature: null,
      status: null,
      deliveries: [],
      eventCode,
      pspReference: fields.psp,
      originalReference: fields.original,
      success: item.success as string,
    };
    events.push(event);
    keepBounded(events, MAX_EVENTS);
    return event;
  }

  function serviceError(status: number, errorCode: string, message: string, errorType = 'validation'): FakeAnswer<AdyenEvent> {
    return { status, json: { status, errorCode, message, errorType }, events: [] };
  }

  function authorisationEvent(p: FakeAdyenPayment, reason?: string): AdyenEvent {
    return makeEvent(
      'AUTHORISATION',
      {
        psp: p.psp,
        original: null,
        reference: p.reference,
        value: p.amount_minor,
        currency: p.currency,
        success: p.status === 'authorised',
        ...(reason !== undefined ? { reason } : {}),
      },
      // The payment request's metadata comes back with its AUTHORISATION (Webhooks v1:
      // NotificationAdditionalData.metadata, "a set of key-value pairs provided in the request").
      Object.keys(p.metadata).length > 0 ? { metadata: p.metadata } : {},
    );
  }

  function paymentAnswer(p: FakeAdyenPayment, refusal: { reason: string; code: string } | null): Record<string, unknown> {
    const base: Record<string, unknown> = {
      pspReference: p.psp,
      merchantReference: p.reference,
      amount: { value: p.amount_minor, currency: p.currency },
    };
    switch (p.status) {
      case 'authorised':
        return { ...base, resultCode: 'Authorised' };
      case 'refused':
        return { ...base, resultCode: 'Refused', refusalReason: refusal?.reason ?? 'Refused', refusalReasonCode: refusal?.code ?? '2' };
      case 'error':
        return { ...base, resultCode: 'Error', refusalReason: 'Acquirer Error', refusalReasonCode: '4' };
      case 'redirect':
        return {
          ...base,
          resultCode: 'RedirectShopper',
          action: { type: 'redirect', method: 'GET', paymentMethodType: 'scheme', url: `${server.url}/threeds/${p.threeds_token}` },
        };
    }
  }

  type Handler = (body: Record<string, unknown>, params: Record<string, string>) => FakeAnswer<AdyenEvent>;

  const handlers: Record<AdyenRoute, Handler> = {
    payments(body) {
      const amount = body.amount as { value: number; currency: string };
      const method = body.paymentMethod as Record<string, string>;
      const additional = (body.additionalData ?? {}) as Record<string, string>;
      const manual = (typeof body.captureDelayHours === 'number' && body.captureDelayHours > 0) || additional.manualCapture === 'true';
      const holder = String(method.holderName ?? '').toUpperCase();
      const expected_cvc = TEST_CARD_CVCS[String(method.number)];
      const wrong_cvc = expected_cvc !== undefined && method.cvc !== undefined && method.cvc !== expected_cvc;
      const refusal = REFUSED_HOLDERS[holder] ?? (wrong_cvc ? REFUSED_HOLDERS.DECLINED! : null);
      const psp = newPsp();
      const status: FakeAdyenPayment['status'] =
        holder === 'ERROR' ? 'error' : refusal ? 'refused' : method.number === THREEDS_CARD ? 'redirect' : 'authorised';
      const token = status === 'redirect' ? randomBytes(12).toString('hex') : null;
      const p: FakeAdyenPayment = {
        psp,
        reference: String(body.reference),
        amount_minor: amount.value,
        currency: amount.currency,
        status,
        manual_capture: manual,
        captured_minor: status === 'authorised' && !manual ? amount.value : 0,
        cancelled: false,
        refunded_minor: 0,
        return_url: String(body.returnUrl),
        threeds_token: token,
        metadata: (body.metadata ?? {}) as Record<string, string>,
      };
      payments.set(psp, p);
      if (token) by_threeds.set(token, psp);
      const created = status === 'redirect' ? [] : [authorisationEvent(p, refusal?.reason)];
      return { status: 200, json: paymentAnswer(p, refusal), events: created };
    },
    'payments/details'(body) {
      const details = (body.details ?? {}) as Record<string, string>;
      const decoded = decodeRedirectResult(details.redirectResult ?? '');
      const psp = decoded ? by_threeds.get(decoded.token) : undefined;
      const p = psp ? payments.get(psp) : undefined;
      if (!p || !decoded) return serviceError(422, '101', 'Invalid redirectResult');
      if (p.status === 'redirect') {
        p.status = decoded.outcome === 'approve' ? 'authorised' : 'refused';
        if (p.status === 'authorised' && !p.manual_capture) p.captured_minor = p.amount_minor;
        const refusal = p.status === 'refused' ? { reason: '3D Not Authenticated', code: '11' } : null;
        return { status: 200, json: paymentAnswer(p, refusal), events: [authorisationEvent(p, refusal?.reason)] };
      }
      // Asked again: the same final answer, nothing new.
      return {
        status: 200,
        json: paymentAnswer(p, p.status === 'refused' ? { reason: '3D Not Authenticated', code: '11' } : null),
        events: [],
      };
    },
    captures(body, params) {
      return modification('CAPTURE', body, params.paymentPspReference ?? '', (p, value) =>
        p.status === 'authorised' && p.manual_capture && !p.cancelled && p.captured_minor === 0 && value <= p.amount_minor
          ? ((p.captured_minor = value), null)
          : 'Insufficient balance on payment',
      );
    },
    cancels(body, params) {
      return modification('CANCELLATION', body, params.paymentPspReference ?? '', (p) =>
        p.status === 'authorised' && p.captured_minor === 0 && !p.cancelled
          ? ((p.cancelled = true), null)
          : 'Transaction already captured or cancelled',
      );
    },
    refunds(body, params) {
      return modification('REFUND', body, params.paymentPspReference ?? '', (p, value) =>
        p.captured_minor - p.refunded_minor >= value && value > 0
          ? ((p.refunded_minor += value), null)
          : 'Insufficient in-process funds on account to refund',
      );
    },
    storeDetailAndSubmitThirdParty(body) {
      const amount = body.amount as { value: number; currency: string };
      const bank = (body.bank ?? {}) as Record<string, string>;
      const psp = newPsp();
      payouts.set(psp, {
        psp,
        reference: String(body.reference),
        amount_minor: amount.value,
        currency: amount.currency,
        iban: bank.iban ?? '',
        status: 'submitted',
      });
      return { status: 200, json: { pspReference: psp, resultCode: '[payout-submit-received]' }, events: [] };
    },
    confirmThirdParty(body) {
      const payout = payouts.get(String(body.originalReference));
      if (!payout || payout.status !== 'submitted') return serviceError(422, '702', 'Payout not found or not awaiting confirmation');
      payout.status = 'confirmed';
      return { status: 200, json: { pspReference: newPsp(), response: '[payout-confirm-received]' }, events: [] };
    },
    declineThirdParty(body) {
      const payout = payouts.get(String(body.originalReference));
      if (!payout || payout.status !== 'submitted') return serviceError(422, '702', 'Payout not found or not awaiting confirmation');
      payout.status = 'declined';
      const event = makeEvent('PAYOUT_DECLINE', {
        psp: payout.psp,
        original: null,
        reference: payout.reference,
        value: payout.amount_minor,
        currency: payout.currency,
        success: true,
      });
      return { status: 200, json: { pspReference: newPsp(), response: '[payout-decline-received]' }, events: [event] };
    },
  };

  /** A capture, cancel or refund: 201 received now, the outcome by notification (success false with `apply`'s reason). */
  function modification(
    eventCode: 'CAPTURE' | 'CANCELLATION' | 'REFUND',
    body: Record<string, unknown>,
    payment_psp: string,
    apply: (p: FakeAdyenPayment, value: number) => string | null,
  ): FakeAnswer<AdyenEvent> {
    const p = payments.get(payment_psp);
    if (!p) return serviceError(422, '167', 'Original pspReference required for this operation');
    const amount = (body.amount as { value: number; currency: string } | undefined) ?? { value: p.amount_minor, currency: p.currency };
    if (amount.currency !== p.currency) return serviceError(422, '137', 'Invalid amount specified');
    const psp = newPsp();
    const refused = apply(p, amount.value);
    const reference = typeof body.reference === 'string' ? body.reference : p.reference;
    const event = makeEvent(eventCode, {
      psp,
      original: p.psp,
      reference,
      value: amount.value,
      currency: amount.currency,
      success: refused === null,
      ...(refused !== null ? { reason: refused } : {}),
    });
    const json: Record<string, unknown> = {
      merchantAccount: merchant_account,
      paymentPspReference: p.psp,
      pspReference: psp,
      status: 'received',
      ...(typeof body.reference === 'string' ? { reference: body.reference } : {}),
      ...(eventCode !== 'CANCELLATION' ? { amount } : {}),
    };
    return { status: 201, json, events: [event] };
  }

  function routeOf(method: string, path: string): { route: AdyenRoute; params: Record<string, string> } | null {
    if (method !== 'POST') return null;
    if (path.startsWith(`${CHECKOUT_PREFIX}/`)) {
      const sub = path.slice(CHECKOUT_PREFIX.length);
      if (sub === '/payments') return { route: 'payments', params: {} };
      if (sub === '/payments/details') return { route: 'payments/details', params: {} };
      const m = /^\/payments\/([^/]+)\/(captures|cancels|refunds)$/.exec(sub);
      if (m) return { route: m[2] as AdyenRoute, params: { paymentPspReference: decodeURIComponent(m[1]!) } };
    }
    if (path.startsWith(`${PAYOUT_PREFIX}/`)) {
      const sub = path.slice(PAYOUT_PREFIX.length + 1);
      if (sub === 'storeDetailAndSubmitThirdParty' || sub === 'confirmThirdParty' || sub === 'declineThirdParty')
        return { route: sub, params: {} };
    }
    return null;
  }

  function keyFor(route: AdyenRoute): string {
    if (route === 'storeDetailAndSubmitThirdParty') return keys.payout_api_key;
    if (route === 'confirmThirdParty' || route === 'declineThirdParty') return keys.payout_reviewer_api_key;
    return keys.api_key;
  }

  async function handle(request: http.IncomingMessage, response: http.ServerResponse, body: { text: string; too_large: boolean }) {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = request.method ?? 'GET';
    seq += 1;
    const record: Writable<AdyenRecorded> = {
      seq,
      method,
      path,
      route: null,
      headers: request.headers,
      idempotency_key: typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : null,
      body: body.text,
      at_ms: Date.now(),
      status: null,
      answer_body: null,
      failure: null,
    };
    requests.push(record);
    keepBounded(requests, MAX_RECORDED);
    if (answeredIconRequest(path, response, record)) return;
    if (path.startsWith('/threeds/')) return threedsPage(method, path, url, response, record);
    const found = routeOf(method, path);
    if (!found) {
      violations.add('request', `${method} ${path}`, ['no route of the fake (and none in the description) matches']);
      record.status = 404;
      response.writeHead(404).end();
      return;
    }
    record.route = found.route;
    violations.add('request', `${method} ${path}`, validator.validateRequest({ method, path, headers: request.headers, body: body.text }));
    const failure: FakeFailureMode | null = failures.take(found.route);
    record.failure = failure;
    if (failure === 'reset_before_processing') {
      request.socket.destroy();
      return;
    }
    const answerNow = (answer: FakeAnswer<AdyenEvent>) => {
      const text = answer.text ?? JSON.stringify(answer.json);
      record.status = answer.status;
      record.answer_body = text;
      violations.add(
        'response',
        `${method} ${path} → ${answer.status}`,
        validator.validateResponse({ method, path, status: answer.status, body: text }),
      );
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    };
    if (failure === 'http_500') {
      answerNow(serviceError(500, '905', 'Internal error', 'internal'));
      return;
    }
    if (failure === 'http_503') {
      // Not an answer of Adyen's API (its descriptions declare no 503): a load balancer's, in front
      // of it, without a body; so it is not checked against the description.
      record.status = 503;
      response.writeHead(503).end();
      return;
    }
    const given = request.headers['x-api-key'];
    if (given !== keyFor(found.route)) {
      const known = given === keys.api_key || given === keys.payout_api_key || given === keys.payout_reviewer_api_key;
      answerNow(
        serviceError(known ? 403 : 401, known ? '010' : '000', known ? 'Not allowed' : 'HTTP Status Response - Unauthorized', 'security'),
      );
      return;
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(body.text) as Record<string, unknown>;
    } catch {
      answerNow(serviceError(400, '702', 'Structure of the request is invalid'));
      return;
    }
    const idem_key = record.idempotency_key === null ? null : `${found.route}:${record.idempotency_key}`;
    const earlier = idem_key === null ? undefined : idempotent.get(idem_key);
    let answer: FakeAnswer<AdyenEvent>;
    if (earlier) {
      answer =
        earlier.body === body.text
          ? { status: earlier.status, text: earlier.text, events: [] }
          : serviceError(422, '704', 'request already processed or in progress with a different payload');
    } else {
      answer = handlers[found.route](parsed, found.params);
      if (idem_key !== null)
        idempotent.set(idem_key, { body: body.text, status: answer.status, text: answer.text ?? JSON.stringify(answer.json) });
    }
    const text = answer.text ?? JSON.stringify(answer.json);
    violations.add(
      'response',
      `${method} ${path} → ${answer.status}`,
      validator.validateResponse({ method, path, status: answer.status, body: text }),
    );
    await sendProcessed(
      failure,
      {
        request,
        response,
        record,
        text,
        garbage_start: '{"pspReference":"',
        write(t) {
          record.status = answer.status;
          record.answer_body = t;
          response.writeHead(answer.status, { 'content-type': 'application/json' }).end(t ?? '');
        },
        publish: () => webhooks.publish(answer.events),
      },
      held_answers,
    );
  }

  /** The 3-D Secure page: GET shows Approve and Fail; POST .../approve or .../fail sends the browser back to returnUrl. */
  function threedsPage(method: string, path: string, url: URL, response: http.ServerResponse, record: Writable<AdyenRecorded>): void {
    const pages = pageAnswers(response, (status) => (record.status = status));
    const m = /^\/threeds\/([0-9a-f]+)(?:\/(approve|fail))?$/.exec(path);
    const psp = m ? by_threeds.get(m[1]!) : undefined;
    const p = psp ? payments.get(psp) : undefined;
    if (!m || !p) return pages.page(404, htmlPage('Not found', '', '<p>No such authentication.</p>'));
    if (method === 'GET' && !m[2]) {
      const style = 'body{font-family:sans-serif}button{margin:.5em;padding:.5em 1em}';
      const form = (action: string, label: string, id: string) =>
        `<form method="post" action="/threeds/${m[1]}/${action}"><button id="${id}" type="submit">${label}</button></form>`;
      return pages.page(
        200,
        htmlPage(
          '3-D Secure',
          style,
          `<h1>3-D Secure (fake Adyen)</h1><p>${escapeHtml(`${(p.amount_minor / 100).toFixed(2)} ${p.currency}`)}</p>${form('approve', 'Approve', 'approve')}${form('fail', 'Fail', 'fail')}`,
        ),
      );
    }
    if (method === 'POST' && m[2]) {
      const target = new URL(p.return_url);
      target.searchParams.set('redirectResult', encodeRedirectResult(m[1]!, m[2] === 'approve' ? 'approve' : 'fail'));
      void url;
      return pages.redirect(target.toString());
    }
    return pages.page(405, htmlPage('Not allowed', '', '<p>Method not allowed.</p>'));
  }

  const server = await startLocalServer({ body_max_bytes: BODY_MAX_BYTES, handle: failuresAsViolations(violations, handle) });

  const controls = createProcessorControls({
    violations,
    requests,
    events,
    failures,
    webhooks,
    held_answers,
    server,
    stopTimers: () => undefined,
  });

  async function publishOne(event: AdyenEvent): Promise<AdyenEvent> {
    await webhooks.publish([event]);
    return event;
  }

  return {
    ...controls,
    url: server.url,
    ...keys,
    merchant_account,
    hmac_key,
    setWebhookUrl(url) {
      webhooks.setEndpoint(url === null ? null : { url, secret: hmac_key });
    },
    payment: (psp) => payments.get(psp) ?? null,
    paymentsWithReference: (reference) => [...payments.values()].filter((p) => p.reference === reference),
    payout: (psp) => payouts.get(psp) ?? null,
    settlePayout(psp, outcome) {
      const payout = payouts.get(psp);
      if (!payout || payout.status !== 'confirmed') throw new Error(`fake adyen: payout ${psp} is not confirmed`);
      payout.status = outcome;
      const code = outcome === 'expired' ? 'PAYOUT_EXPIRE' : 'PAYOUT_THIRDPARTY';
      const event = makeEvent(code, {
        psp,
        original: null,
        reference: payout.reference,
        value: payout.amount_minor,
        currency: payout.currency,
        success: outcome === 'paid' || outcome === 'expired',
        ...(outcome === 'failed' ? { reason: 'Account is closed' } : {}),
      });
      return publishOne(event);
    },
    chargeback(psp, stage, extra = {}) {
      const p = payments.get(psp);
      if (!p) throw new Error(`fake adyen: no payment ${psp}`);
      const event = makeEvent(
        stage,
        {
          psp: dispute_psps.get(p.psp) ?? dispute_psps.set(p.psp, newPsp()).get(p.psp)!,
          original: p.psp,
          reference: p.reference,
          value: extra.amount_minor ?? p.amount_minor,
          currency: p.currency,
          success: true,
          reason: extra.reason ?? 'Fraudulent transaction',
        },
        {
          chargebackReasonCode: '10.4',
          defensePeriodEndsAt: new Date(Date.now() + 14 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
        },
      );
      return publishOne(event);
    },
    customerAreaRefund(psp, amount_minor) {
      const p = payments.get(psp);
      if (!p) throw new Error(`fake adyen: no payment ${psp}`);
      p.refunded_minor += amount_minor;
      return publishOne(
        makeEvent('REFUND', {
          psp: newPsp(),
          original: p.psp,
          reference: p.reference,
          value: amount_minor,
          currency: p.currency,
          success: true,
        }),
      );
    },
  };
}

/** The redirectResult the fake's 3-D Secure page gives: opaque to the connector, as Adyen's is. */
function encodeRedirectResult(token: string, outcome: 'approve' | 'fail'): string {
  return Buffer.from(JSON.stringify({ t: token, o: outcome })).toString('base64url');
}

function decodeRedirectResult(text: string): { token: string; outcome: 'approve' | 'fail' } | null {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { t?: unknown; o?: unknown };
    if (typeof value.t !== 'string' || (value.o !== 'approve' && value.o !== 'fail')) return null;
    return { token: value.t, outcome: value.o };
  } catch {
    return null;
  }
}
