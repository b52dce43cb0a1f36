// The Stripe connector (`stripe`), on its PaymentIntents API through the official `stripe`
// package pointed at the gateway's base_url (decisions.md §13, §16, docs/connectors.md): a card
// sale with the card's data as the payment method's data, confirmed at once; an authorization
// (capture_method manual) captured in full or in part, or canceled, later; 3-D Secure on Stripe's
// page (next_action.redirect_to_url) with the customer coming back to the gateway; full and
// partial refunds; a lookup of any of them by our trace_id (Stripe's search by metadata), with an
// authorization's hold and the refunds Stripe holds of the payment; webhooks verified by the
// package's own event construction with the gateway's whsec_ secret and its default tolerance,
// reporting captures, voids, refunds made outside the gateway and disputes too. Stripe pays out
// only to the account's own bank: no card payouts.
//
// Every request that moves money carries an Idempotency-Key: derived from the gateway, the
// transaction and the operation for sales and refunds, the gateway's own for a capture or a void,
// so the package's own retry and any later one never charge, capture or cancel twice.
// The package sends through the gateway's ProcessorHttp (http-client.ts), whose deadline bounds
// each attempt; the package may retry once, so each call also has the processor deadline of its
// own: past it the outcome is unknown and the gateway asks Stripe before deciding anything.
import { Type } from '@sinclair/typebox';
import Stripe from 'stripe';
import type { Environment } from '../../domain/environment.js';
import type {
  AuthorizationActionResult,
  CaptureRequest,
  CardSaleRequest,
  Connector,
  ConnectorContext,
  ConnectorDefinition,
  LookupRequest,
  LookupResult,
  ProcessorRefund,
  ProcessorResult,
  RefundRequest,
  VoidRequest,
  WebhookReading,
} from '../connector.js';
import { baseUrlProblem } from '../base-url.js';
import { ProcessorHttpClient, refusedHere } from './http-client.js';
import { idempotencyKey, saleParams } from './requests.js';
import {
  actionFailure,
  actionResult,
  authorizationFound,
  failureResult,
  intentResult,
  lookupFailure,
  processorRefunds,
  refundResult,
} from './results.js';
import { readStripeWebhook } from './webhooks.js';
import { type Call, type Intent, readIntent, readRefund } from './wire.js';

// The readers are wire.ts's; re-exported so that what imported them from here still does.
export { readIntent, readRefund } from './wire.js';

export const STRIPE_LIVE_URL = 'https://api.stripe.com';

export interface StripeSettings {
  readonly secret_key: string;
  readonly webhook_secret: string;
  readonly base_url: string;
}

/** Payments and refunds found by our trace_id, at most (one transaction: a handful at most). */
const SEARCH_LIMIT = 10;
const REFUND_LIST_LIMIT = 100;

export class StripeConnector implements Connector {
  readonly name = 'stripe';
  readonly details_prefix = '';
  private readonly stripe: Stripe;

  constructor(
    private readonly settings: StripeSettings,
    private readonly context: ConnectorContext,
    private readonly gateway_id: string,
  ) {
    const url = new URL(settings.base_url);
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    this.stripe = new Stripe(settings.secret_key, {
      host: url.hostname,
      port: url.port !== '' ? Number(url.port) : protocol === 'http' ? 80 : 443,
      protocol,
      // Every request goes through the gateway's ProcessorHttp (its address policy, deadline, size cap, metrics).
      httpClient: new ProcessorHttpClient(context.http),
      timeout: context.options.processor_timeout_ms,
      // One retry, with the same idempotency key, of what Stripe documents as safe to retry.
      maxNetworkRetries: 1,
      telemetry: false,
    });
  }

  /** The call, bounded by the processor deadline whatever the package does. */
  private async call<T>(operation: () => Promise<T>): Promise<Call<T>> {
    const deadline_ms = this.context.options.processor_timeout_ms;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Call<T>>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'lost', reason: `timed out after ${deadline_ms} ms` }), deadline_ms);
    });
    const done = operation().then(
      (value): Call<T> => ({ kind: 'value', value }),
      (error: unknown): Call<T> => ({ kind: 'failed', error: refusedHere(error) ?? error }),
    );
    try {
      return await Promise.race([done, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private get recheck_after_ms(): number {
    return this.context.options.challenge_timeout_ms + 60_000;
  }

  async sale(request: CardSaleRequest): Promise<ProcessorResult> {
    const params = saleParams(request);
    const operation = request.capture ? 'sale' : 'authorize';
    const call = await this.call(() =>
      this.stripe.paymentIntents.create(params, { idempotencyKey: idempotencyKey(this.gateway_id, request.trace_id, operation) }),
    );
    if (call.kind !== 'value') return failureResult(call, 'Payment');
    const intent = readIntent(call.value);
    return intent
      ? intentResult(intent, request, this.recheck_after_ms)
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
    if (call.kind !== 'value') return failureResult(call, 'Refund');
    const refund = readRefund(call.value);
    return refund
      ? refundResult(refund, request, this.recheck_after_ms)
      : { kind: 'unknown', psp_transaction_id: null, reason: 'an answer of an unexpected shape' };
  }

  /** Capture and void of an authorization (capture_method manual), each with the gateway's own idempotency key. */
  readonly authorizations = {
    capture: (request: CaptureRequest): Promise<AuthorizationActionResult> => this.capture(request),
    void: (request: VoidRequest): Promise<AuthorizationActionResult> => this.cancel(request),
  };

  /** POST /v1/payment_intents/{id}/capture: amount_to_capture (less than authorized: Stripe releases the rest). */
  private async capture(request: CaptureRequest): Promise<AuthorizationActionResult> {
    const call = await this.call(() =>
      this.stripe.paymentIntents.capture(
        request.psp_transaction_id,
        { amount_to_capture: request.amount_minor },
        { idempotencyKey: request.idempotency_key },
      ),
    );
    if (call.kind !== 'value') return actionFailure(call, 'Capture');
    const intent = readIntent(call.value);
    return intent ? actionResult(intent, 'capture') : { kind: 'unknown', reason: 'an answer of an unexpected shape' };
  }

  /** POST /v1/payment_intents/{id}/cancel: the hold is released. */
  private async cancel(request: VoidRequest): Promise<AuthorizationActionResult> {
    const call = await this.call(() =>
      this.stripe.paymentIntents.cancel(request.psp_transaction_id, {}, { idempotencyKey: request.idempotency_key }),
    );
    if (call.kind !== 'value') return actionFailure(call, 'Void');
    const intent = readIntent(call.value);
    return intent ? actionResult(intent, 'void') : { kind: 'unknown', reason: 'an answer of an unexpected shape' };
  }

  async lookup(request: LookupRequest): Promise<LookupResult> {
    if (request.transaction_type === 'refund') return this.lookupRefund(request);
    const authorization = request.transaction_type === 'authorize';
    let intent: Intent | null;
    if (request.psp_transaction_id !== null) {
      // An authorization's last charge says whether a canceled one had been authorized (a void) or never was.
      const call = await this.call(() =>
        this.stripe.paymentIntents.retrieve(request.psp_transaction_id!, authorization ? { expand: ['latest_charge'] } : {}),
      );
      if (call.kind !== 'value') return lookupFailure(call);
      intent = readIntent(call.value);
      if (!intent) return { kind: 'unavailable', reason: 'an answer of an unexpected shape' };
    } else {
      // Our trace_id is in the payment's metadata: Stripe's search finds it (its index follows
      // within about a minute; a lookup that finds nothing is taken as final only later: due-work.ts).
      const call = await this.call(() =>
        this.stripe.paymentIntents.search({
          query: `metadata['paygate_trace_id']:'${request.trace_id}'`,
          limit: SEARCH_LIMIT,
          ...(authorization ? { expand: ['data.latest_charge'] } : {}),
        }),
      );
      if (call.kind !== 'value') return lookupFailure(call);
      intent = (call.value.data as unknown[]).map(readIntent).find((i) => i !== null && i.trace_id === request.trace_id) ?? null;
      if (!intent) return { kind: 'not_found' };
    }
    const result = intentResult(intent, request, this.recheck_after_ms);
    // The refunds Stripe holds of a captured payment: one more call, only when there can be any.
    const refundable = authorization ? intent.status === 'succeeded' : result.kind === 'approved';
    const refunds = refundable ? await this.refundsOf(intent.id) : [];
    if (authorization) return authorizationFound(intent, request, this.recheck_after_ms, refunds);
    return result.kind === 'approved'
      ? { kind: 'found', result, payment: { hold: null, captured_minor: null, refunds } }
      : { kind: 'found', result };
  }

  /** The succeeded refunds of a PaymentIntent, ours (trace_id from their metadata) or not; null when Stripe cannot be asked now. */
  private async refundsOf(payment_intent: string): Promise<ProcessorRefund[] | null> {
    const call = await this.call(() => this.stripe.refunds.list({ payment_intent, limit: REFUND_LIST_LIMIT }));
    if (call.kind !== 'value') return null;
    // More than a page: the list would be incomplete (a payment with a hundred refunds is not one to guess about).
    if (call.value.has_more) return null;
    return processorRefunds((call.value.data as unknown[]).map(readRefund));
  }

  private async lookupRefund(request: LookupRequest): Promise<LookupResult> {
    if (request.psp_transaction_id !== null) {
      const call = await this.call(() => this.stripe.refunds.retrieve(request.psp_transaction_id!));
      if (call.kind === 'value') {
        const refund = readRefund(call.value);
        return refund
          ? { kind: 'found', result: refundResult(refund, request, this.recheck_after_ms) }
          : { kind: 'unavailable', reason: 'an answer of an unexpected shape' };
      }
      return lookupFailure(call);
    }
    if (request.sale_psp_transaction_id === null) return { kind: 'not_found' };
    const call = await this.call(() =>
      this.stripe.refunds.list({ payment_intent: request.sale_psp_transaction_id!, limit: REFUND_LIST_LIMIT }),
    );
    if (call.kind !== 'value') return lookupFailure(call);
    const refund = (call.value.data as unknown[]).map(readRefund).find((r) => r !== null && r.trace_id === request.trace_id);
    return refund ? { kind: 'found', result: refundResult(refund, request, this.recheck_after_ms) } : { kind: 'not_found' };
  }

  /** A webhook, verified and read by webhooks.ts with the gateway's whsec_ secret. */
  readWebhook(raw_body: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): WebhookReading {
    return readStripeWebhook(this.stripe.webhooks, this.settings.webhook_secret, this.recheck_after_ms, raw_body, headers);
  }
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
    authorize_capture: true,
    disputes: true,
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
      shape: 'sk_live_, sk_test_, rk_live_ or rk_test_ followed by 8 to 200 letters or digits',
    },
    {
      name: 'webhook_secret',
      required: true,
      secret: true,
      schema: Type.String({ pattern: '^whsec_[A-Za-z0-9+/=_-]{8,200}$' }),
      description: "the webhook endpoint's signing secret (whsec_...)",
      shape: 'whsec_ followed by 8 to 200 letters, digits or + / = _ -',
    },
    {
      name: 'base_url',
      required: false,
      secret: false,
      schema: Type.String({ pattern: '^https?://[^\\s/?#]+$', maxLength: 200 }),
      default: STRIPE_LIVE_URL,
      description: "the API's address, https://api.stripe.com by default (scheme, host and port only)",
      shape: 'an http(s):// address of scheme, host and port only, such as https://api.stripe.com',
    },
  ],
  default_currencies: null,
  check(settings, context: { readonly environment: Environment; readonly allow_private_urls: boolean }) {
    const base_url = baseUrlProblem(settings, context);
    if (base_url) return base_url;
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
