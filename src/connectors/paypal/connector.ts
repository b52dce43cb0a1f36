// The PayPal connector (`paypal`, decisions §17): e-wallet deposits (an order with intent CAPTURE,
// the buyer's approval at PayPal by redirect, the capture once they are back: completeReturn),
// refunds of those captures, direct payouts to a PayPal account (Payouts v1, one item per batch),
// lookups of each, and webhooks verified by PayPal's verify call with the gateway's webhook_id.
// PayPal takes no card details here: its capabilities say card_sale false, so routing never picks it
// for a card, and `sale` answers an error saying so should anything ask.
//
// Ids: a deposit's psp_transaction_id is the order's id from creation to capture (the capture's
// id is read from the order when refunding); a refund's is the refund's id; a payout's is the
// payout batch's id (PayPal answers a batch, not its item). Ours at PayPal: custom_id
// `paygate-<trace_id>` on orders and refunds, sender_item_id likewise on payout items,
// sender_batch_id `paygate-<gateway>-<trace_id>`.
//
// Idempotency: PayPal-Request-Id on every POST that makes something, derived from the gateway and
// the transaction (the capture's is the key the gateway gives), so a retry replays the first
// answer; a payout batch's sender_batch_id is refused a second time by PayPal.
import { Type } from '@sinclair/typebox';
import type {
  CardSaleRequest,
  Connector,
  ConnectorContext,
  ConnectorDefinition,
  DataFieldSpec,
  DirectPayoutCheck,
  DirectPayoutRequest,
  LookupRequest,
  LookupResult,
  ProcessorResult,
  RefundRequest,
  ReturnRequest,
  ReturnResult,
  WalletDepositRequest,
  WebhookReading,
} from '../connector.js';
import { baseUrlProblem } from '../base-url.js';
import { checkDataFields } from '../connector.js';
import { PAYPAL_CASHIER_TEXTS } from './cashier-texts.js';
import { type PayPalAnswer, PayPalClient } from './client.js';
import {
  captureResult,
  customId,
  orderResult,
  payoutResult,
  paypalValue,
  readErrorCodes,
  readOrder,
  readPayoutItem,
  readRefund,
  refundResult,
  type PayPalOrder,
  traceIdOf,
} from './status-map.js';
import { readPayPalWebhook } from './webhooks.js';
import type { CashierPayee, PayeeMapping } from '../../domain/payee.js';

export const PAYPAL_LIVE_URL = 'https://api-m.paypal.com';

export interface PayPalSettings {
  readonly client_id: string;
  readonly client_secret: string;
  readonly webhook_id: string;
  readonly base_url: string;
}

/** data_ fields of a payout to a PayPal account (docs/payouts.md). */
export const PAYPAL_PAYOUT_FIELDS: readonly DataFieldSpec[] = [
  {
    name: 'data_recipient_type',
    required: true,
    max_length: 9,
    values: ['EMAIL', 'PHONE', 'PAYPAL_ID'],
    rule: 'EMAIL, PHONE or PAYPAL_ID',
  },
  { name: 'data_receiver', required: true, max_length: 127, rule: 'the e-mail, phone number or PayPal payer id of the receiver' },
];
const RECEIVER_PATTERNS: Readonly<Record<string, { pattern: RegExp; rule: string }>> = {
  EMAIL: { pattern: /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,}$/, rule: 'an e-mail address' },
  PHONE: { pattern: /^\+?[0-9]{6,15}$/, rule: 'a phone number, digits only (up to 15), a leading + allowed' },
  PAYPAL_ID: { pattern: /^[A-Z0-9]{13}$/, rule: 'a PayPal payer id (13 letters and digits)' },
};

type Exchanged = Extract<PayPalAnswer, { kind: 'answer' }>;

export class PayPalConnector implements Connector {
  readonly name = 'paypal';
  readonly details_prefix = '';
  readonly cashier_texts = PAYPAL_CASHIER_TEXTS;
  private readonly client: PayPalClient;
  readonly direct = {
    fields: PAYPAL_PAYOUT_FIELDS,
    check: (data: Readonly<Record<string, string>>): DirectPayoutCheck => checkPayout(data),
    payout: (request: DirectPayoutRequest): Promise<ProcessorResult> => this.payout(request),
    // A PayPal account, by the e-mail its owner logs in with.
    payee: {
      methods: ['paypal'],
      data: (payee: CashierPayee): Record<string, string> =>
        payee.method === 'paypal' ? { data_recipient_type: 'EMAIL', data_receiver: payee.email } : {},
    } satisfies PayeeMapping,
  };

  constructor(
    private readonly settings: PayPalSettings,
    private readonly context: ConnectorContext,
    private readonly gateway_id: string,
  ) {
    this.client = new PayPalClient(context.http, context.clock, settings.base_url, settings.client_id, settings.client_secret);
  }

  private get recheck_after_ms(): number {
    return this.context.options.challenge_timeout_ms + 60_000;
  }

  private requestId(operation: 'order' | 'refund' | 'payout', trace_id: number): string {
    return `paygate-${this.gateway_id}-${operation}-${trace_id}`;
  }

  sale(_request: CardSaleRequest): Promise<ProcessorResult> {
    return Promise.resolve({
      kind: 'error',
      psp_transaction_id: null,
      error_code: 'not_supported',
      error_details: 'PayPal takes no card details through this gateway: pay with PayPal (e-wallet) instead',
    });
  }

  async walletDeposit(request: WalletDepositRequest): Promise<ProcessorResult> {
    const body = {
      intent: 'CAPTURE',
      purchase_units: [
        {
          reference_id: request.reference.slice(0, 256),
          custom_id: customId(request.trace_id),
          amount: { currency_code: request.currency, value: paypalValue(request.amount_minor, request.currency) },
        },
      ],
      payment_source: {
        paypal: {
          experience_context: {
            return_url: request.return_to.success_url,
            cancel_url: request.return_to.failure_url,
            user_action: 'PAY_NOW',
            shipping_preference: 'NO_SHIPPING',
          },
        },
      },
    };
    const answer = await this.client.post('/v2/checkout/orders', body, this.requestId('order', request.trace_id));
    if (answer.kind === 'not_sent') return unreached(answer.reason);
    if (answer.kind === 'lost') return unknown(answer);
    if (answer.http_status === 200 || answer.http_status === 201) {
      const order = readOrder(answer.json);
      if (!order?.approve_url) return unknown(answer);
      return {
        kind: 'redirect',
        psp_transaction_id: order.id,
        redirect_url: order.approve_url,
        error_code: '0',
        error_details: 'Waiting for the buyer at PayPal',
        recheck_after_ms: this.recheck_after_ms,
      };
    }
    if (answer.http_status >= 500 || answer.http_status === 429) return unknown(answer);
    return refused(answer, 'Order');
  }

  async completeReturn(request: ReturnRequest): Promise<ReturnResult> {
    const found = await this.findOrder(request);
    if (found.kind === 'unavailable') return { kind: 'unknown', psp_transaction_id: request.psp_transaction_id, reason: found.reason };
    if (found.kind === 'not_found')
      return { kind: 'error', psp_transaction_id: null, error_code: 'not_found', error_details: 'PayPal has no such order' };
    const order = found.order;
    if (order.status === 'APPROVED') {
      const answer = await this.client.post(`/v2/checkout/orders/${encodeURIComponent(order.id)}/capture`, {}, request.idempotency_key);
      if (answer.kind === 'not_sent') return { kind: 'unknown', psp_transaction_id: order.id, reason: answer.reason };
      if (answer.kind === 'lost') return { ...unknown(answer), psp_transaction_id: order.id };
      if (answer.http_status === 200 || answer.http_status === 201) {
        const captured = readOrder(answer.json);
        const capture = captured?.captures.at(-1);
        return capture ? captureResult(capture, order.id, this.recheck_after_ms) : { ...unknown(answer), psp_transaction_id: order.id };
      }
      if (answer.http_status === 422 && readErrorCodes(answer.json)?.includes('ORDER_ALREADY_CAPTURED')) {
        const again = await this.findOrder({ ...request, psp_transaction_id: order.id });
        return again.kind === 'found'
          ? orderResult(again.order, this.recheck_after_ms)
          : { kind: 'unknown', psp_transaction_id: order.id, reason: 'order captured, not readable now' };
      }
      if (answer.http_status >= 500 || answer.http_status === 429) return { ...unknown(answer), psp_transaction_id: order.id };
      const codes = readErrorCodes(answer.json);
      return {
        kind: 'rejected',
        psp_transaction_id: order.id,
        error_code: String(answer.http_status),
        error_details: `Capture refused by PayPal${codes ? ` (${codes})` : ''}`,
      };
    }
    if (order.status === 'COMPLETED') return orderResult(order, this.recheck_after_ms);
    if (order.status === 'VOIDED' || request.outcome === 'failure')
      return { kind: 'cancelled', psp_transaction_id: order.id, error_code: 'cancelled', error_details: 'The buyer cancelled at PayPal' };
    return orderResult(order, this.recheck_after_ms);
  }

  /** The deposit's order: by its id, or (answer lost) by asking to create it again with the same PayPal-Request-Id, which replays the first order and moves nothing. */
  private async findOrder(
    request: LookupRequest,
  ): Promise<{ kind: 'found'; order: PayPalOrder } | { kind: 'not_found' } | { kind: 'unavailable'; reason: string }> {
    if (request.psp_transaction_id === null)
      return { kind: 'unavailable', reason: 'no order id recorded; PayPal has no search by custom_id' };
    const answer = await this.client.get(`/v2/checkout/orders/${encodeURIComponent(request.psp_transaction_id)}`);
    if (answer.kind !== 'answer') return { kind: 'unavailable', reason: answer.reason };
    if (answer.http_status === 404) return { kind: 'not_found' };
    const order = answer.http_status === 200 ? readOrder(answer.json) : null;
    return order ? { kind: 'found', order } : { kind: 'unavailable', reason: `GET order answered HTTP ${answer.http_status}` };
  }

  async refund(request: RefundRequest): Promise<ProcessorResult> {
    if (request.sale_psp_transaction_id === null)
      return {
        kind: 'error',
        psp_transaction_id: null,
        error_code: 'no_payment',
        error_details: 'The deposit has no order at PayPal to refund',
      };
    const found = await this.findOrder({
      ...request,
      transaction_type: 'sale',
      psp_transaction_id: request.sale_psp_transaction_id,
      sale_psp_transaction_id: null,
    });
    if (found.kind === 'not_found')
      return { kind: 'error', psp_transaction_id: null, error_code: 'not_found', error_details: 'PayPal has no such order' };
    if (found.kind === 'unavailable') return unreached(found.reason);
    const capture = found.order.captures.at(-1);
    if (!capture)
      return {
        kind: 'rejected',
        psp_transaction_id: null,
        error_code: 'not_captured',
        error_details: 'The order was never captured at PayPal',
      };
    const answer = await this.client.post(
      `/v2/payments/captures/${encodeURIComponent(capture.id)}/refund`,
      {
        amount: { currency_code: request.currency, value: paypalValue(request.amount_minor, request.currency) },
        custom_id: customId(request.trace_id),
      },
      this.requestId('refund', request.trace_id),
    );
    if (answer.kind === 'not_sent') return unreached(answer.reason);
    if (answer.kind === 'lost') return unknown(answer);
    if (answer.http_status === 200 || answer.http_status === 201) {
      const refund = readRefund(answer.json);
      return refund ? refundResult(refund, this.recheck_after_ms) : unknown(answer);
    }
    if (answer.http_status >= 500 || answer.http_status === 429) return unknown(answer);
    if (answer.http_status === 422 || answer.http_status === 409) {
      const codes = readErrorCodes(answer.json);
      return {
        kind: 'rejected',
        psp_transaction_id: null,
        error_code: String(answer.http_status),
        error_details: `Refund refused by PayPal${codes ? ` (${codes})` : ''}`,
      };
    }
    return refused(answer, 'Refund');
  }

  private async payout(request: DirectPayoutRequest): Promise<ProcessorResult> {
    const body = {
      sender_batch_header: {
        sender_batch_id: `paygate-${this.gateway_id}-${request.trace_id}`,
        email_subject: 'You have a payment',
      },
      items: [
        {
          recipient_type: request.data.data_recipient_type,
          receiver: request.data.data_receiver,
          amount: { currency: request.currency, value: paypalValue(request.amount_minor, request.currency) },
          sender_item_id: customId(request.trace_id),
          note: request.reference.slice(0, 4000),
        },
      ],
    };
    const answer = await this.client.post('/v1/payments/payouts', body, this.requestId('payout', request.trace_id));
    if (answer.kind === 'not_sent') return unreached(answer.reason);
    if (answer.kind === 'lost') return unknown(answer);
    const header = (answer.json as { batch_header?: { payout_batch_id?: unknown } } | null)?.batch_header;
    if (answer.http_status === 201 && typeof header?.payout_batch_id === 'string')
      return {
        kind: 'pending',
        psp_transaction_id: header.payout_batch_id,
        error_code: '0',
        error_details: 'Payout accepted by PayPal; the final status will be notified',
        later: null,
        recheck_after_ms: this.recheck_after_ms,
      };
    if (answer.http_status >= 500 || answer.http_status === 429 || answer.http_status === 201) return unknown(answer);
    const codes = readErrorCodes(answer.json);
    // A sender_batch_id used before: the first attempt reached PayPal; a lookup finds it.
    if (codes?.includes('SENDER_BATCH_ID_ALREADY_EXISTS'))
      return { kind: 'unknown', psp_transaction_id: null, reason: 'the payout batch exists already at PayPal' };
    if (answer.http_status === 401 || answer.http_status === 403) return refused(answer, 'Payout');
    return {
      kind: 'rejected',
      psp_transaction_id: null,
      error_code: String(answer.http_status),
      error_details: `Payout refused by PayPal${codes ? ` (${codes})` : ''}`,
    };
  }

  async lookup(request: LookupRequest): Promise<LookupResult> {
    if (request.transaction_type === 'payout') return this.lookupPayout(request);
    if (request.transaction_type === 'refund') {
      if (request.psp_transaction_id !== null) {
        const answer = await this.client.get(`/v2/payments/refunds/${encodeURIComponent(request.psp_transaction_id)}`);
        if (answer.kind !== 'answer') return { kind: 'unavailable', reason: answer.reason };
        if (answer.http_status === 404) return { kind: 'not_found' };
        const refund = answer.http_status === 200 ? readRefund(answer.json) : null;
        return refund
          ? { kind: 'found', result: refundResult(refund, this.recheck_after_ms) }
          : { kind: 'unavailable', reason: `GET refund answered HTTP ${answer.http_status}` };
      }
      // No refund id recorded: the sale's order lists its refunds, ours by custom_id.
      if (request.sale_psp_transaction_id === null) return { kind: 'not_found' };
      const found = await this.findOrder({ ...request, psp_transaction_id: request.sale_psp_transaction_id });
      if (found.kind !== 'found') return found;
      const refund = found.order.refunds.find((r) => r.custom_id === customId(request.trace_id));
      return refund ? { kind: 'found', result: refundResult(refund, this.recheck_after_ms) } : { kind: 'not_found' };
    }
    const found = await this.findOrder(request);
    if (found.kind !== 'found') return found;
    const { order } = found;
    const result = orderResult(order, this.recheck_after_ms);
    return {
      kind: 'found',
      result,
      ...(result.kind === 'approved'
        ? {
            payment: {
              hold: null,
              captured_minor: null,
              refunds: order.refunds.map((r) => ({ psp_refund_id: r.id, amount_minor: r.amount_minor, trace_id: traceIdOf(r.custom_id) })),
            },
          }
        : {}),
    };
  }

  private async lookupPayout(request: LookupRequest): Promise<LookupResult> {
    if (request.psp_transaction_id === null)
      return { kind: 'unavailable', reason: 'no payout batch id recorded; PayPal has no search by sender_batch_id' };
    const answer = await this.client.get(`/v1/payments/payouts/${encodeURIComponent(request.psp_transaction_id)}`);
    if (answer.kind !== 'answer') return { kind: 'unavailable', reason: answer.reason };
    if (answer.http_status === 404) return { kind: 'not_found' };
    const items = (answer.json as { items?: unknown } | null)?.items;
    const item = answer.http_status === 200 && Array.isArray(items) ? readPayoutItem(items[0]) : null;
    if (!item) return { kind: 'unavailable', reason: `GET payout batch answered HTTP ${answer.http_status}` };
    return { kind: 'found', result: payoutResult(item, request.psp_transaction_id, request, this.recheck_after_ms) };
  }

  readWebhook(raw_body: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): Promise<WebhookReading> {
    return readPayPalWebhook(
      {
        post: (path, body, request_id) => this.client.post(path, body, request_id),
        get: (path) => this.client.get(path),
        webhook_id: this.settings.webhook_id,
        recheck_after_ms: this.recheck_after_ms,
      },
      raw_body,
      headers,
    );
  }
}

function checkPayout(data: Readonly<Record<string, string>>): DirectPayoutCheck {
  const problem = checkDataFields(PAYPAL_PAYOUT_FIELDS, data);
  if (problem) return { ok: false, problem };
  const receiver = RECEIVER_PATTERNS[data.data_recipient_type!]!;
  if (!receiver.pattern.test(data.data_receiver!))
    return { ok: false, problem: { field: 'data_receiver', kind: 'invalid', rule: receiver.rule } };
  return { ok: true, payment_method: 'paypal' };
}

function unreached(reason: string): ProcessorResult {
  return {
    kind: 'error',
    psp_transaction_id: null,
    error_code: 'unreachable',
    error_details: `Processor unreachable (${reason}); nothing was charged`,
  };
}

function unknown(answer: PayPalAnswer): Extract<ProcessorResult, { kind: 'unknown' }> {
  if (answer.kind !== 'answer') return { kind: 'unknown', psp_transaction_id: null, reason: answer.reason };
  return {
    kind: 'unknown',
    psp_transaction_id: null,
    reason: answer.parsed
      ? `an answer of an unexpected shape (HTTP ${answer.http_status})`
      : `an answer that does not parse (HTTP ${answer.http_status})`,
  };
}

function refused(answer: Exchanged, what: string): ProcessorResult {
  const codes = readErrorCodes(answer.json);
  const credentials = answer.http_status === 401 || answer.http_status === 403 ? ": the gateway's credentials were not accepted" : '';
  return {
    kind: 'error',
    psp_transaction_id: null,
    error_code: String(answer.http_status),
    error_details: `${what} refused by PayPal${credentials} (HTTP ${answer.http_status}${codes ? `: ${codes}` : ''})`,
  };
}

export const paypalDefinition: ConnectorDefinition = {
  name: 'paypal',
  environments: ['sandbox', 'live'],
  capabilities: {
    // No card details at PayPal here: routing never picks it for a card, and `sale` answers an error if asked.
    card_sale: false,
    refund: true,
    card_payout: false,
    direct_payout: true,
    wallet_deposit: true,
    merchant_initiated: false,
    authorize_capture: false,
    disputes: true,
    three_d_secure: false,
    webhooks: true,
  },
  settings: [
    {
      name: 'client_id',
      required: true,
      secret: false,
      schema: Type.String({ minLength: 8, maxLength: 200, pattern: '^[!-~]+$' }),
      description: "the REST app's client id",
      shape: '8 to 200 printable characters without spaces',
    },
    {
      name: 'client_secret',
      required: true,
      secret: true,
      schema: Type.String({ minLength: 8, maxLength: 200, pattern: '^[!-~]+$' }),
      description: "the REST app's secret, for the OAuth2 access token",
      shape: '8 to 200 printable characters without spaces',
    },
    {
      name: 'webhook_id',
      required: true,
      secret: false,
      schema: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9]+$' }),
      description: "the id PayPal gave the gateway's webhook, for verify-webhook-signature",
      shape: '1 to 50 letters or digits',
    },
    {
      name: 'base_url',
      required: false,
      secret: false,
      schema: Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', maxLength: 200 }),
      default: PAYPAL_LIVE_URL,
      description: "the API's address, https://api-m.paypal.com by default (https://api-m.sandbox.paypal.com for PayPal's sandbox)",
      shape: 'an http(s):// address of up to 200 characters without query or fragment, such as https://api-m.paypal.com',
    },
  ],
  default_currencies: null,
  check: baseUrlProblem,
  create(settings, context, gateway_id) {
    return new PayPalConnector(
      {
        client_id: settings.client_id!,
        client_secret: settings.client_secret!,
        webhook_id: settings.webhook_id!,
        base_url: settings.base_url ?? PAYPAL_LIVE_URL,
      },
      context,
      gateway_id,
    );
  },
};
