// The Stripe connector (`stripe`), on its PaymentIntents API through the official `stripe`
// package pointed at the gateway's base_url (decisions.md §13, docs/connectors.md): a card sale
// with the card's data as the payment method's data, confirmed at once; 3-D Secure on Stripe's
// page (next_action.redirect_to_url) with the customer coming back to the gateway; full and
// partial refunds; a lookup of either by our trace_id (Stripe's search by metadata); webhooks
// verified by the package's own event construction with the gateway's whsec_ secret and its
// default tolerance. Stripe pays out only to the account's own bank: no card payouts.
//
// Every request that moves money carries an Idempotency-Key derived from the gateway, the
// transaction and the operation, so the package's own retry and any later one never charge twice.
// The package's time-out is an inactivity time-out, so each call also has the processor deadline
// of its own: past it the outcome is unknown and the gateway asks Stripe before deciding anything.
import http from 'node:http';
import https from 'node:https';
import type dns from 'node:dns';
import { Type } from '@sinclair/typebox';
import Stripe from 'stripe';
import type { Environment } from '../../domain/environment.js';
import { checkedLookup, precheckUrl } from '../../outbound/post.js';
import type {
  CardSaleRequest,
  Connector,
  ConnectorContext,
  ConnectorDefinition,
  Customer,
  LookupRequest,
  LookupResult,
  ProcessorResult,
  RefundRequest,
  WebhookReading,
} from '../connector.js';
import {
  declineKind,
  eventMeaning,
  INTENT_MEANING,
  INTENT_STATUSES,
  type IntentStatus,
  REFUND_MEANING,
  REFUND_STATUSES,
  type RefundStatus,
} from './status-map.js';

export const STRIPE_LIVE_URL = 'https://api.stripe.com';

export interface StripeSettings {
  readonly secret_key: string;
  readonly webhook_secret: string;
  readonly base_url: string;
}

/** Error codes raised before a connection existed: the request never left the gateway. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EDESTINATIONNOTALLOWED',
]);

/** Payments and refunds found by our trace_id, at most (one transaction: a handful at most). */
const SEARCH_LIMIT = 10;
const REFUND_LIST_LIMIT = 100;

function idempotencyKey(gateway_id: string, trace_id: number, operation: 'sale' | 'refund'): string {
  return `paygate-${gateway_id}-${trace_id}-${operation}`;
}

/** The parts of a PaymentIntent this connector reads. */
interface Intent {
  readonly id: string;
  readonly status: IntentStatus;
  readonly amount: number | null;
  readonly currency: string | null;
  readonly trace_id: number | null;
  readonly redirect_url: string | null;
  readonly error_code: string | null;
  readonly error_message: string | null;
}

interface Refund {
  readonly id: string;
  readonly status: RefundStatus;
  readonly amount: number | null;
  /** ISO 4217 in upper case (Stripe writes it in lower case). */
  readonly currency: string | null;
  readonly trace_id: number | null;
  readonly reason: string | null;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const whole = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) ? value : null);

function traceIdOf(metadata: unknown): number | null {
  const value = isObject(metadata) ? metadata.paygate_trace_id : undefined;
  return typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : null;
}

export function readIntent(value: unknown): Intent | null {
  if (!isObject(value) || value.object !== 'payment_intent') return null;
  const id = text(value.id);
  const status = text(value.status);
  if (id === null || status === null || !(INTENT_STATUSES as readonly string[]).includes(status)) return null;
  const action = isObject(value.next_action) ? value.next_action : null;
  const redirect =
    action && action.type === 'redirect_to_url' && isObject(action.redirect_to_url) ? text(action.redirect_to_url.url) : null;
  const error = isObject(value.last_payment_error) ? value.last_payment_error : null;
  return {
    id,
    status: status as IntentStatus,
    amount: whole(value.amount),
    currency: text(value.currency),
    trace_id: traceIdOf(value.metadata),
    redirect_url: redirect,
    error_code: error ? (text(error.decline_code) ?? text(error.code)) : null,
    error_message: error ? text(error.message) : null,
  };
}

export function readRefund(value: unknown): Refund | null {
  if (!isObject(value) || value.object !== 'refund') return null;
  const id = text(value.id);
  const status = text(value.status);
  if (id === null || status === null || !(REFUND_STATUSES as readonly string[]).includes(status)) return null;
  return {
    id,
    status: status as RefundStatus,
    amount: whole(value.amount),
    currency: text(value.currency)?.toUpperCase() ?? null,
    trace_id: traceIdOf(value.metadata),
    reason: text(value.failure_reason),
  };
}

/** What a call to Stripe came to: its value, an error Stripe (or the network) gave, or no answer in time. */
type Call<T> =
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'lost'; readonly reason: string };

interface StripeFailure {
  readonly type?: string;
  readonly statusCode?: number;
  readonly code?: string;
  readonly decline_code?: string;
  readonly message?: string;
  readonly detail?: { readonly code?: string };
  readonly raw?: { readonly payment_intent?: unknown };
}

export class StripeConnector implements Connector {
  readonly name = 'stripe';
  readonly details_prefix = '';
  private readonly stripe: Stripe;
  /** Set when base_url is an address the policy refuses (an IP literal never reaches the checked lookup). */
  private readonly refused: string | null;

  constructor(
    private readonly settings: StripeSettings,
    private readonly context: ConnectorContext,
    private readonly gateway_id: string,
  ) {
    const allow_private = context.options.environment === 'sandbox' || context.options.allow_private_urls;
    const checked = precheckUrl(settings.base_url, allow_private);
    this.refused = 'reason' in checked ? checked.reason : null;
    const url = new URL(settings.base_url);
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    // The package's connections go through the same address policy as every outbound request.
    const agent_options = { keepAlive: true, maxSockets: 32, lookup: checkedLookup(allow_private) as unknown as typeof dns.lookup };
    this.stripe = new Stripe(settings.secret_key, {
      host: url.hostname,
      port: url.port !== '' ? Number(url.port) : protocol === 'http' ? 80 : 443,
      protocol,
      httpAgent: protocol === 'http' ? new http.Agent(agent_options) : new https.Agent(agent_options),
      timeout: context.options.processor_timeout_ms,
      // One retry, with the same idempotency key, of what Stripe documents as safe to retry.
      maxNetworkRetries: 1,
      telemetry: false,
    });
  }

  /** The call, bounded by the processor deadline whatever the package does. */
  private async call<T>(operation: () => Promise<T>): Promise<Call<T>> {
    if (this.refused !== null)
      return {
        kind: 'failed',
        error: { type: 'StripeConnectionError', detail: { code: 'EDESTINATIONNOTALLOWED' }, message: this.refused },
      };
    const deadline_ms = this.context.options.processor_timeout_ms;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Call<T>>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'lost', reason: `timed out after ${deadline_ms} ms` }), deadline_ms);
    });
    const done = operation().then(
      (value): Call<T> => ({ kind: 'value', value }),
      (error: unknown): Call<T> => ({ kind: 'failed', error }),
    );
    try {
      return await Promise.race([done, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A failure of Stripe's or of the network, in our terms; `what` names the operation for the merchant. */
  private failureResult(call: Exclude<Call<unknown>, { kind: 'value' }>, what: 'Payment' | 'Refund'): ProcessorResult {
    if (call.kind === 'lost') return { kind: 'unknown', psp_transaction_id: null, reason: call.reason };
    const error = (isObject(call.error) ? call.error : {}) as StripeFailure;
    const details = (error.message ?? '').slice(0, 180);
    switch (error.type) {
      case 'StripeCardError': {
        const intent = readIntent(error.raw?.payment_intent);
        // The package gives decline_code as '' when Stripe gave none (incorrect_cvc, expired_card).
        const code = text(error.decline_code) ?? text(error.code) ?? 'card_declined';
        return {
          kind: 'rejected',
          psp_transaction_id: intent?.id ?? null,
          error_code: code,
          error_details: details || 'Card declined',
          decline: declineKind(code),
        };
      }
      case 'StripeConnectionError': {
        const code = error.detail?.code ?? '';
        // A connection never made sent nothing; one lost after sending may have charged the card.
        if (NOT_SENT_CODES.has(code))
          return {
            kind: 'error',
            psp_transaction_id: null,
            error_code: 'unreachable',
            error_details: `Processor unreachable (${code}); nothing was charged`,
          };
        return { kind: 'unknown', psp_transaction_id: null, reason: `connection failed (${code || 'no answer'})` };
      }
      case 'StripeAPIError':
      case 'StripeRateLimitError':
        return { kind: 'unknown', psp_transaction_id: null, reason: `Stripe answered HTTP ${error.statusCode ?? '5xx'}` };
      case 'StripeAuthenticationError':
      case 'StripePermissionError':
        return {
          kind: 'error',
          psp_transaction_id: null,
          error_code: String(error.statusCode ?? 401),
          error_details: `${what} refused by the processor: the gateway's credentials were not accepted (HTTP ${error.statusCode ?? 401})`,
        };
      case 'StripeInvalidRequestError':
      case 'StripeIdempotencyError':
        return {
          kind: what === 'Refund' ? 'rejected' : 'error',
          psp_transaction_id: null,
          error_code: error.code ?? String(error.statusCode ?? 400),
          error_details: `${what} refused by the processor${details ? `: ${details}` : ''}`.slice(0, 200),
        } as ProcessorResult;
      default:
        if ((error.statusCode ?? 0) >= 500)
          return { kind: 'unknown', psp_transaction_id: null, reason: `Stripe answered HTTP ${error.statusCode}` };
        return { kind: 'unknown', psp_transaction_id: null, reason: 'an answer that could not be read' };
    }
  }

  private get recheck_after_ms(): number {
    return this.context.options.challenge_timeout_ms + 60_000;
  }

  /** A PaymentIntent as its status says, in our terms. */
  private intentResult(intent: Intent, asked: { readonly amount_minor: number; readonly currency: string }): ProcessorResult {
    switch (INTENT_MEANING[intent.status]) {
      case 'approved':
        return {
          kind: 'approved',
          psp_transaction_id: intent.id,
          charge_amount_minor: intent.amount ?? asked.amount_minor,
          charge_currency: intent.currency?.toUpperCase() ?? asked.currency,
          error_code: intent.status,
          error_details: 'Approved',
        };
      case 'rejected': {
        const code = intent.error_code ?? intent.status;
        return {
          kind: 'rejected',
          psp_transaction_id: intent.id,
          error_code: code,
          decline: declineKind(intent.error_code),
          error_details: (
            intent.error_message ?? (intent.status === 'canceled' ? 'Payment canceled at the processor' : 'Payment failed at the processor')
          ).slice(0, 200),
        };
      }
      case 'action':
        if (intent.redirect_url !== null) {
          return {
            kind: 'redirect',
            psp_transaction_id: intent.id,
            redirect_url: intent.redirect_url,
            error_code: '0',
            error_details: '3-D Secure authentication required',
            recheck_after_ms: this.recheck_after_ms,
          };
        }
        break;
      case 'pending':
        break;
    }
    return {
      kind: 'pending',
      psp_transaction_id: intent.id,
      error_code: '0',
      later: null,
      recheck_after_ms: this.recheck_after_ms,
      error_details: 'Payment pending at the processor',
    };
  }

  async sale(request: CardSaleRequest): Promise<ProcessorResult> {
    const { card, customer } = request;
    const merchant_initiated = request.initiated_by === 'merchant';
    const params = {
      amount: request.amount_minor,
      currency: request.currency.toLowerCase(),
      confirm: true,
      // Cards only: without a list Stripe applies the Dashboard's automatic payment methods, which
      // want a return_url even for a card (allowed_payment_method_types since API 2026-09-30.endive).
      allowed_payment_method_types: ['card'],
      payment_method_data: {
        type: 'card',
        card: {
          number: card.pan,
          exp_month: card.expiry.month,
          exp_year: card.expiry.year,
          ...(card.cvv !== null ? { cvc: card.cvv } : {}),
        },
        billing_details: billingDetails(customer),
      },
      ...(request.return_to !== null ? { return_url: request.return_to.success_url } : {}),
      // A stored card charged by the merchant (a renewal): nobody is there to authenticate, and
      // Stripe declines what would need it (authentication_required).
      ...(merchant_initiated ? { off_session: true } : {}),
      metadata: { paygate_trace_id: String(request.trace_id), paygate_reference: request.reference },
    } as unknown as Stripe.PaymentIntentCreateParams;
    const call = await this.call(() =>
      this.stripe.paymentIntents.create(params, { idempotencyKey: idempotencyKey(this.gateway_id, request.trace_id, 'sale') }),
    );
    if (call.kind !== 'value') return this.failureResult(call, 'Payment');
    const intent = readIntent(call.value);
    return intent
      ? this.intentResult(intent, request)
      : { kind: 'unknown', psp_transaction_id: null, reason: 'an answer of an unexpected shape' };
  }

  async refund(request: RefundRequest): Promise<ProcessorResult> {
    if (request.sale_psp_transaction_id === null) {
      return {
        kind: 'error',
        psp_transaction_id: null,
        error_code: 'no_payment',
        error_details: 'The sale has no payment id at the processor to refund',
      };
    }
    const params: Stripe.RefundCreateParams = {
      payment_intent: request.sale_psp_transaction_id,
      amount: request.amount_minor,
      metadata: { paygate_trace_id: String(request.trace_id), paygate_reference: request.reference },
    };
    const call = await this.call(() =>
      this.stripe.refunds.create(params, { idempotencyKey: idempotencyKey(this.gateway_id, request.trace_id, 'refund') }),
    );
    if (call.kind !== 'value') return this.failureResult(call, 'Refund');
    const refund = readRefund(call.value);
    return refund
      ? this.refundResult(refund, request)
      : { kind: 'unknown', psp_transaction_id: null, reason: 'an answer of an unexpected shape' };
  }

  private refundResult(refund: Refund, asked: { readonly amount_minor: number; readonly currency: string }): ProcessorResult {
    switch (REFUND_MEANING[refund.status]) {
      case 'approved':
        return {
          kind: 'approved',
          psp_transaction_id: refund.id,
          charge_amount_minor: refund.amount ?? asked.amount_minor,
          charge_currency: refund.currency ?? asked.currency,
          error_code: refund.status,
          error_details: 'Refund approved',
        };
      case 'rejected':
        return {
          kind: 'rejected',
          psp_transaction_id: refund.id,
          error_code: refund.reason ?? refund.status,
          error_details: `Refund ${refund.status} at the processor`,
        };
      case 'pending':
        return {
          kind: 'pending',
          psp_transaction_id: refund.id,
          error_code: '0',
          later: null,
          recheck_after_ms: this.recheck_after_ms,
          error_details: 'Refund accepted by the processor; the final status will be notified',
        };
    }
  }

  async lookup(request: LookupRequest): Promise<LookupResult> {
    if (request.transaction_type === 'refund') return this.lookupRefund(request);
    if (request.psp_transaction_id !== null) {
      const call = await this.call(() => this.stripe.paymentIntents.retrieve(request.psp_transaction_id!));
      if (call.kind === 'value') {
        const intent = readIntent(call.value);
        return intent
          ? { kind: 'found', result: this.intentResult(intent, request) }
          : { kind: 'unavailable', reason: 'an answer of an unexpected shape' };
      }
      return this.lookupFailure(call);
    }
    // Our trace_id is in the payment's metadata: Stripe's search finds it (its index follows
    // within about a minute; a lookup that finds nothing is taken as final only later: due-work.ts).
    const call = await this.call(() =>
      this.stripe.paymentIntents.search({ query: `metadata['paygate_trace_id']:'${request.trace_id}'`, limit: SEARCH_LIMIT }),
    );
    if (call.kind !== 'value') return this.lookupFailure(call);
    const intent = (call.value.data as unknown[]).map(readIntent).find((i) => i !== null && i.trace_id === request.trace_id);
    return intent ? { kind: 'found', result: this.intentResult(intent, request) } : { kind: 'not_found' };
  }

  private async lookupRefund(request: LookupRequest): Promise<LookupResult> {
    if (request.psp_transaction_id !== null) {
      const call = await this.call(() => this.stripe.refunds.retrieve(request.psp_transaction_id!));
      if (call.kind === 'value') {
        const refund = readRefund(call.value);
        return refund
          ? { kind: 'found', result: this.refundResult(refund, request) }
          : { kind: 'unavailable', reason: 'an answer of an unexpected shape' };
      }
      return this.lookupFailure(call);
    }
    if (request.sale_psp_transaction_id === null) return { kind: 'not_found' };
    const call = await this.call(() =>
      this.stripe.refunds.list({ payment_intent: request.sale_psp_transaction_id!, limit: REFUND_LIST_LIMIT }),
    );
    if (call.kind !== 'value') return this.lookupFailure(call);
    const refund = (call.value.data as unknown[]).map(readRefund).find((r) => r !== null && r.trace_id === request.trace_id);
    return refund ? { kind: 'found', result: this.refundResult(refund, request) } : { kind: 'not_found' };
  }

  private lookupFailure(call: Exclude<Call<unknown>, { kind: 'value' }>): LookupResult {
    if (call.kind === 'lost') return { kind: 'unavailable', reason: call.reason };
    const error = (isObject(call.error) ? call.error : {}) as StripeFailure;
    if (error.statusCode === 404 || error.code === 'resource_missing') return { kind: 'not_found' };
    return { kind: 'unavailable', reason: `${error.type ?? 'error'}${error.statusCode ? ` (HTTP ${error.statusCode})` : ''}` };
  }

  /**
   * A webhook, verified by the package's own event construction (the Stripe-Signature header's
   * HMAC over the timestamp and the exact body, with the gateway's whsec_ secret, within the
   * package's default tolerance of five minutes); nothing of it is read otherwise.
   */
  readWebhook(raw_body: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): WebhookReading {
    const header = headers['stripe-signature'];
    if (typeof header !== 'string' || header.length > 2048) return { kind: 'bad_signature' };
    let event: { id: string; type: string; data: { object: unknown } };
    try {
      event = this.stripe.webhooks.constructEvent(raw_body, header, this.settings.webhook_secret) as unknown as typeof event;
    } catch {
      return { kind: 'bad_signature' };
    }
    const meaning = eventMeaning(event.type);
    const object = event.data?.object;
    if (meaning?.about === 'refund') {
      const refund = readRefund(object);
      if (!refund) return { kind: 'ignored', reason: `${event.type} without a refund` };
      const result: ProcessorResult =
        meaning.outcome === 'rejected'
          ? {
              kind: 'rejected',
              psp_transaction_id: refund.id,
              error_code: refund.reason ?? 'failed',
              error_details: `Refund ${refund.status} at the processor`,
            }
          : this.refundResult(refund, { amount_minor: refund.amount ?? 0, currency: refund.currency ?? '' });
      return {
        kind: 'event',
        event: {
          event_id: event.id,
          event_type: event.type,
          result: result.kind === 'pending' ? null : result,
          match: { trace_id: refund.trace_id, psp_transaction_id: refund.id, transaction_type: 'refund', reference: null },
        },
      };
    }
    const intent = readIntent(object);
    if (!intent) return { kind: 'ignored', reason: `${event.type} without a payment intent` };
    let result: ProcessorResult | null = null;
    if (meaning?.outcome === 'approved' || meaning?.outcome === 'rejected') {
      const decided = this.intentResult(intent, { amount_minor: intent.amount ?? 0, currency: intent.currency?.toUpperCase() ?? '' });
      result =
        decided.kind === 'approved' || decided.kind === 'rejected'
          ? decided
          : meaning.outcome === 'rejected'
            ? {
                kind: 'rejected',
                psp_transaction_id: intent.id,
                error_code: intent.error_code ?? 'payment_failed',
                error_details: (intent.error_message ?? 'Payment failed at the processor').slice(0, 200),
                decline: declineKind(intent.error_code),
              }
            : null;
    }
    return {
      kind: 'event',
      event: {
        event_id: event.id,
        event_type: event.type,
        result,
        match: { trace_id: intent.trace_id, psp_transaction_id: intent.id, transaction_type: null, reference: null },
      },
    };
  }
}

function billingDetails(customer: Customer): Record<string, unknown> {
  const name = [customer.first_name, customer.last_name].filter((part) => part !== null && part !== '').join(' ');
  const address: Record<string, string> = {};
  if (customer.address) address.line1 = customer.address;
  if (customer.city) address.city = customer.city;
  if (customer.state) address.state = customer.state;
  if (customer.zip) address.postal_code = customer.zip;
  if (customer.country && /^[A-Z]{2}$/.test(customer.country)) address.country = customer.country;
  return {
    ...(name !== '' ? { name } : {}),
    ...(customer.email ? { email: customer.email } : {}),
    ...(Object.keys(address).length > 0 ? { address } : {}),
  };
}

export const stripeDefinition: ConnectorDefinition = {
  name: 'stripe',
  environments: ['sandbox', 'live'],
  capabilities: {
    card_sale: true,
    refund: true,
    card_payout: false,
    direct_payout: false,
    wallet_deposit: false,
    merchant_initiated: true,
    three_d_secure: true,
    webhooks: true,
  },
  settings: [
    {
      name: 'secret_key',
      required: true,
      secret: true,
      schema: Type.String({ pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9]{8,200}$' }),
      description: "the account's secret key (sk_live_... or sk_test_...)",
    },
    {
      name: 'webhook_secret',
      required: true,
      secret: true,
      schema: Type.String({ pattern: '^whsec_[A-Za-z0-9+/=_-]{8,200}$' }),
      description: "the webhook endpoint's signing secret (whsec_...)",
    },
    {
      name: 'base_url',
      required: false,
      secret: false,
      schema: Type.String({ pattern: '^https?://[^\\s/?#]+$', maxLength: 200 }),
      default: STRIPE_LIVE_URL,
      description: "the API's address, https://api.stripe.com by default (scheme, host and port only)",
    },
  ],
  default_currencies: null,
  check(settings, context: { readonly environment: Environment; readonly allow_private_urls: boolean }) {
    if (context.environment === 'live' && !settings.base_url!.startsWith('https://') && !context.allow_private_urls) {
      return { field: 'base_url', reason: 'must be an https:// address in live mode' };
    }
    if (context.environment === 'live' && settings.secret_key!.includes('_test_') && settings.base_url === STRIPE_LIVE_URL) {
      return { field: 'secret_key', reason: 'a test key (sk_test_) takes no live payments' };
    }
    return null;
  },
  create(settings, context, gateway_id) {
    return new StripeConnector(
      {
        secret_key: settings.secret_key!,
        webhook_secret: settings.webhook_secret!,
        base_url: settings.base_url ?? STRIPE_LIVE_URL,
      },
      context,
      gateway_id,
    );
  },
};
