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
  LookupRequest,
  LookupResult,
  ProcessorResult,
  RefundRequest,
  WebhookReading,
} from '../connector.js';
import { idempotencyKey, saleParams } from './requests.js';
import { failureResult, intentResult, lookupFailure, refundResult } from './results.js';
import { readStripeWebhook } from './webhooks.js';
import { type Call, readIntent, readRefund } from './wire.js';

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

  private get recheck_after_ms(): number {
    return this.context.options.challenge_timeout_ms + 60_000;
  }

  async sale(request: CardSaleRequest): Promise<ProcessorResult> {
    const params = saleParams(request);
    const call = await this.call(() =>
      this.stripe.paymentIntents.create(params, { idempotencyKey: idempotencyKey(this.gateway_id, request.trace_id, 'sale') }),
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

  async lookup(request: LookupRequest): Promise<LookupResult> {
    if (request.transaction_type === 'refund') return this.lookupRefund(request);
    if (request.psp_transaction_id !== null) {
      const call = await this.call(() => this.stripe.paymentIntents.retrieve(request.psp_transaction_id!));
      if (call.kind === 'value') {
        const intent = readIntent(call.value);
        return intent
          ? { kind: 'found', result: intentResult(intent, request, this.recheck_after_ms) }
          : { kind: 'unavailable', reason: 'an answer of an unexpected shape' };
      }
      return lookupFailure(call);
    }
    // Our trace_id is in the payment's metadata: Stripe's search finds it (its index follows
    // within about a minute; a lookup that finds nothing is taken as final only later: due-work.ts).
    const call = await this.call(() =>
      this.stripe.paymentIntents.search({ query: `metadata['paygate_trace_id']:'${request.trace_id}'`, limit: SEARCH_LIMIT }),
    );
    if (call.kind !== 'value') return lookupFailure(call);
    const intent = (call.value.data as unknown[]).map(readIntent).find((i) => i !== null && i.trace_id === request.trace_id);
    return intent ? { kind: 'found', result: intentResult(intent, request, this.recheck_after_ms) } : { kind: 'not_found' };
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
    authorize_capture: false,
    disputes: false,
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
