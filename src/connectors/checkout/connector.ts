// The Checkout.com connector (`checkout`), on its Unified Payments API (decisions.md §13,
// docs/connectors.md): card sales with the card as the payment source, 3-D Secure on Checkout.com's
// own page when it asks for it, authorizations captured (in full or in part) or voided later
// (decisions §16), full and partial refunds, payouts to a card, a lookup of any of them by our
// reference (with an authorization's hold and the refunds Checkout.com holds of a payment), and
// its webhooks (results, captures, voids, refunds ours or not, disputes) verified with the
// gateway's webhook secret.
//
// Every request that moves money carries a Cko-Idempotency-Key derived from the gateway, the
// transaction and the operation, so a retry (ours after a fault, or a crash recovery) finds the
// first attempt's payment instead of making a second one. An answer the connector did not get
// (a time-out, a connection lost after sending, a body that does not parse, a 5xx) is an unknown
// outcome: the gateway then asks Checkout.com before deciding anything (operations/processor-lookup.ts).
// Captures and voids carry the key the gateway gives, and Checkout.com answers them 202: taken,
// confirmed later by payment_captured / payment_voided or by a lookup of the authorization.
import { Type } from '@sinclair/typebox';
import type {
  AuthorizationActionResult,
  CaptureRequest,
  CardPayoutRequest,
  CardSaleRequest,
  Connector,
  ConnectorContext,
  ConnectorDefinition,
  LookupRequest,
  LookupResult,
  ProcessorResult,
  RefundRequest,
  VoidRequest,
  WebhookReading,
} from '../connector.js';
import { baseUrlProblem } from '../base-url.js';
import { type CheckoutAnswer, CheckoutClient } from './client.js';
import { refusedAction, refusedResult, unknownAction, unknownResult, unreachedAction, unreachedResult } from './failures.js';
import { captureBody, idempotencyKey, payoutBody, saleBody, voidBody } from './requests.js';
import { type Asked, declineKind, type PaymentKind, paymentResult, paymentState, refundResult } from './status-map.js';
import { readCheckoutWebhook } from './webhooks.js';
import { type CkoAction, type CkoPayment, readActionAccepted, readActions, readErrorCodes, readPayment, readPaymentList } from './wire.js';

export const CHECKOUT_LIVE_URL = 'https://api.checkout.com';

export interface CheckoutSettings {
  readonly secret_key: string;
  readonly processing_channel_id: string;
  readonly webhook_secret: string;
  readonly base_url: string;
  /** The payout source; without it the gateway makes no payouts. */
  readonly currency_account_id: string | null;
  /** The card payout's funds transfer type, the code Checkout.com assigned to the account (FD by default). */
  readonly funds_transfer_type: string;
  readonly three_ds: 'never' | 'always';
}

/** Payments found by reference, at most (a reference is one order: a handful of attempts at most). */
const LIST_LIMIT = 100;

export class CheckoutConnector implements Connector {
  readonly name = 'checkout';
  readonly details_prefix = '';
  private readonly client: CheckoutClient;
  /** Payouts to a card, from the gateway's currency account; absent without one (refused with status 15 before anything is stored). */
  readonly cardPayout?: (request: CardPayoutRequest) => Promise<ProcessorResult>;
  /** An authorization's capture and void (decisions §16): POST /payments/{id}/captures and /voids. */
  readonly authorizations = {
    capture: (request: CaptureRequest): Promise<AuthorizationActionResult> => this.capture(request),
    void: (request: VoidRequest): Promise<AuthorizationActionResult> => this.voidAuthorization(request),
  };

  constructor(
    private readonly settings: CheckoutSettings,
    private readonly context: ConnectorContext,
    private readonly gateway_id: string,
  ) {
    this.client = new CheckoutClient(context.http, settings.base_url, settings.secret_key);
    if (settings.currency_account_id !== null) this.cardPayout = (request) => this.payout(request, settings.currency_account_id!);
  }

  /** How long after sending the customer to 3-D Secure (or accepting for later) the processor is asked, if nothing came back. */
  private get recheck_after_ms(): number {
    return this.context.options.challenge_timeout_ms + 60_000;
  }

  /** A sale, or with `capture: false` an authorization: answered alike (its approval is the authorization's). */
  async sale(request: CardSaleRequest): Promise<ProcessorResult> {
    const body = saleBody(request, this.settings);
    const operation = request.capture ? 'sale' : 'authorize';
    const answer = await this.client.post('/payments', body, idempotencyKey(this.gateway_id, request.trace_id, operation));
    return this.paymentAnswer(answer, 'sale', request);
  }

  /**
   * Captures an authorization, all of it or part (the rest is released: capture_type Final).
   * Checkout.com answers 202 with the capture's action id and captures it afterwards.
   */
  private async capture(request: CaptureRequest): Promise<AuthorizationActionResult> {
    const path = `/payments/${encodeURIComponent(request.psp_transaction_id)}/captures`;
    return this.actionAnswer(await this.client.post(path, captureBody(request), request.idempotency_key), 'Capture');
  }

  /** Voids an authorization: the whole hold released. Answered 202 likewise. */
  private async voidAuthorization(request: VoidRequest): Promise<AuthorizationActionResult> {
    const path = `/payments/${encodeURIComponent(request.psp_transaction_id)}/voids`;
    return this.actionAnswer(await this.client.post(path, voidBody(request), request.idempotency_key), 'Void');
  }

  /** The answer to a capture or a void, in our terms. */
  private actionAnswer(answer: CheckoutAnswer, what: 'Capture' | 'Void'): AuthorizationActionResult {
    if (answer.kind === 'not_sent') return unreachedAction(answer.reason, what);
    if (answer.kind === 'lost') return unknownAction(answer);
    if (answer.http_status === 202 || answer.http_status === 201 || answer.http_status === 200) {
      const accepted = readActionAccepted(answer.json);
      return accepted ? { kind: 'accepted', psp_action_id: accepted.action_id } : unknownAction(answer);
    }
    // 429 (a duplicate still being processed) and 5xx: processed or not, unknown.
    if (answer.http_status === 429 || answer.http_status >= 500) return unknownAction(answer);
    if (answer.http_status >= 400) return refusedAction(answer, what);
    return unknownAction(answer);
  }

  /** Checkout.com makes payouts to a card from a currency account (the gateway's currency_account_id). */
  private async payout(request: CardPayoutRequest, currency_account_id: string): Promise<ProcessorResult> {
    const body = payoutBody(request, this.settings, currency_account_id);
    const answer = await this.client.post('/payments', body, idempotencyKey(this.gateway_id, request.trace_id, 'payout'));
    return this.paymentAnswer(answer, 'payout', request);
  }

  /** The answer to POST /payments (a sale or a payout), in our terms. */
  private paymentAnswer(answer: CheckoutAnswer, kind: 'sale' | 'payout', asked: Asked): ProcessorResult {
    if (answer.kind === 'not_sent') return unreachedResult(answer.reason);
    if (answer.kind === 'lost') return unknownResult(answer);
    if (answer.http_status === 201 || answer.http_status === 202) {
      const payment = readPayment(answer.json);
      return payment ? paymentResult(payment, kind, asked, this.recheck_after_ms) : unknownResult(answer);
    }
    // 429 ("too many requests or duplicate request detected") and 5xx: processed or not, unknown.
    if (answer.http_status === 429 || answer.http_status >= 500) return unknownResult(answer);
    if (answer.http_status >= 400) return refusedResult(answer, kind === 'sale' ? 'Payment' : 'Payout');
    return unknownResult(answer);
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
    const answer = await this.client.post(
      `/payments/${encodeURIComponent(request.sale_psp_transaction_id)}/refunds`,
      {
        amount: request.amount_minor,
        reference: request.reference,
        metadata: { paygate_trace_id: request.trace_id },
      },
      idempotencyKey(this.gateway_id, request.trace_id, 'refund'),
    );
    if (answer.kind === 'not_sent') return unreachedResult(answer.reason);
    if (answer.kind === 'lost') return unknownResult(answer);
    if (answer.http_status === 202 || answer.http_status === 201) {
      const accepted = readActionAccepted(answer.json);
      if (!accepted) return unknownResult(answer);
      // Refunds are processed after the answer: the payment_refunded webhook (or a lookup) settles it.
      return {
        kind: 'pending',
        psp_transaction_id: accepted.action_id,
        error_code: '0',
        later: null,
        recheck_after_ms: this.recheck_after_ms,
        error_details: 'Refund accepted by the processor; the final status will be notified',
      };
    }
    if (answer.http_status === 429 || answer.http_status >= 500) return unknownResult(answer);
    // 403 (not refundable now: not captured, fully refunded) and 422 (an amount over what remains):
    // refused, and the reservation goes back to the sale.
    if (answer.http_status === 403 || answer.http_status === 422) {
      const codes = readErrorCodes(answer.json);
      return {
        kind: 'rejected',
        psp_transaction_id: null,
        error_code: String(answer.http_status),
        error_details: `Refund refused by the processor (HTTP ${answer.http_status}${codes ? `: ${codes}` : ''})`,
      };
    }
    return refusedResult(answer, 'Refund');
  }

  async lookup(request: LookupRequest): Promise<LookupResult> {
    if (request.transaction_type === 'refund') return this.lookupRefund(request);
    const kind: PaymentKind = request.transaction_type;
    const found = await this.findPayment(request);
    if (found.kind !== 'found') return found;
    const { payment } = found;
    const result = paymentResult(payment, kind, request, this.recheck_after_ms);
    // One GET of the payment's actions, when it tells something: a decline's code (PaymentDetails
    // has none), or of an approved payment its refunds (ours and any made outside the gateway)
    // and an authorization's captured amount.
    const decline_without_code = result.kind === 'rejected' && !/^[0-9]/.test(result.error_code);
    const state_kind = result.kind === 'approved' && kind !== 'payout' ? kind : null;
    const actions = decline_without_code || state_kind !== null ? await this.actionsOf(payment.id) : null;
    return {
      kind: 'found',
      result: withDeclineCode(result, actions),
      ...(state_kind !== null ? { payment: paymentState(payment, state_kind, actions) } : {}),
    };
  }

  /** The payment a lookup asks about: by its id when the gateway has it, else by our reference and trace_id. */
  private async findPayment(
    request: LookupRequest,
  ): Promise<{ readonly kind: 'found'; readonly payment: CkoPayment } | Exclude<LookupResult, { kind: 'found' }>> {
    if (request.psp_transaction_id !== null) {
      const answer = await this.client.get(`/payments/${encodeURIComponent(request.psp_transaction_id)}`);
      if (answer.kind !== 'answer') return { kind: 'unavailable', reason: answer.reason };
      if (answer.http_status === 404) return { kind: 'not_found' };
      const payment = answer.http_status === 200 ? readPayment(answer.json) : null;
      if (!payment) return { kind: 'unavailable', reason: `GET /payments/{id} answered HTTP ${answer.http_status}` };
      return { kind: 'found', payment };
    }
    const answer = await this.client.get(`/payments?reference=${encodeURIComponent(request.reference)}&limit=${LIST_LIMIT}&skip=0`);
    if (answer.kind !== 'answer') return { kind: 'unavailable', reason: answer.reason };
    if (answer.http_status === 404) return { kind: 'not_found' };
    const payments = answer.http_status === 200 ? readPaymentList(answer.json) : null;
    if (!payments) return { kind: 'unavailable', reason: `GET /payments?reference= answered HTTP ${answer.http_status}` };
    // The reference is the merchant's order_id, which another attempt (or another installation on
    // the same account) may share: only the payment carrying our trace_id is ours.
    const ours = payments.find((p) => p.trace_id === request.trace_id);
    return ours ? { kind: 'found', payment: ours } : { kind: 'not_found' };
  }

  /** GET /payments/{id}/actions, newest first; null when it cannot be read now (the lookup then says less). */
  private async actionsOf(payment_id: string): Promise<CkoAction[] | null> {
    const answer = await this.client.get(`/payments/${encodeURIComponent(payment_id)}/actions`);
    return answer.kind === 'answer' && answer.http_status === 200 ? readActions(answer.json) : null;
  }

  private async lookupRefund(request: LookupRequest): Promise<LookupResult> {
    if (request.sale_psp_transaction_id === null) return { kind: 'not_found' };
    const answer = await this.client.get(`/payments/${encodeURIComponent(request.sale_psp_transaction_id)}/actions`);
    if (answer.kind !== 'answer') return { kind: 'unavailable', reason: answer.reason };
    if (answer.http_status === 404) return { kind: 'not_found' };
    const actions = answer.http_status === 200 ? readActions(answer.json) : null;
    if (!actions) return { kind: 'unavailable', reason: `GET /payments/{id}/actions answered HTTP ${answer.http_status}` };
    const refund = actions.find((a) => a.type === 'Refund' && (a.id === request.psp_transaction_id || a.reference === request.reference));
    // A refund accepted but not processed yet has no action: still pending, if its id was answered.
    if (!refund)
      return request.psp_transaction_id !== null
        ? { kind: 'found', result: this.pendingRefund(request.psp_transaction_id) }
        : { kind: 'not_found' };
    return { kind: 'found', result: refundResult(refund, request) };
  }

  private pendingRefund(action_id: string): ProcessorResult {
    return {
      kind: 'pending',
      psp_transaction_id: action_id,
      error_code: '0',
      later: null,
      recheck_after_ms: this.recheck_after_ms,
      error_details: 'Refund accepted by the processor; the final status will be notified',
    };
  }

  /** A webhook, verified and read by webhooks.ts with the gateway's webhook secret. */
  readWebhook(raw_body: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): WebhookReading {
    return readCheckoutWebhook(this.settings.webhook_secret, raw_body, headers);
  }
}

/**
 * A payment's details carry its status but no response code (PaymentDetails has none): for a
 * decline found by lookup, its last authorisation or payout action gives the code and words the
 * merchant is shown. Without them (no action yet, the processor not answering) the status says it.
 */
function withDeclineCode(result: ProcessorResult, actions: readonly CkoAction[] | null): ProcessorResult {
  if (result.kind !== 'rejected' || /^[0-9]/.test(result.error_code)) return result;
  const decided = actions?.filter((a) => (a.type === 'Authorization' || a.type === 'Payout') && a.response_code !== null).at(0);
  if (!decided) return result;
  return {
    ...result,
    error_code: decided.response_code!,
    error_details: (decided.response_summary ?? result.error_details).slice(0, 200),
    decline: declineKind(decided.response_code),
  };
}

const KEY_PATTERN = '^sk_[!-~]{8,200}$';
/** Checkout.com's ids: a prefix and 26 base-32 characters (pc_..., ca_...), as its description gives them. */
const ID_PATTERN = (prefix: string) => `^${prefix}_[a-z0-9]{26}$`;

export const checkoutDefinition: ConnectorDefinition = {
  name: 'checkout',
  environments: ['sandbox', 'live'],
  capabilities: {
    card_sale: true,
    refund: true,
    card_payout: true,
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
      schema: Type.String({ pattern: KEY_PATTERN }),
      description: "the account's secret key (sk_...), sent as Authorization: Bearer",
      shape: 'sk_ followed by 8 to 200 printable characters without spaces',
    },
    {
      name: 'processing_channel_id',
      required: true,
      secret: false,
      schema: Type.String({ pattern: ID_PATTERN('pc') }),
      description: 'the processing channel (pc_...) payments and payouts go through',
      shape: 'pc_ followed by 26 lowercase letters or digits',
    },
    {
      name: 'webhook_secret',
      required: true,
      secret: true,
      schema: Type.String({ minLength: 16, maxLength: 256, pattern: '^[!-~]+$' }),
      description: 'the key of the Cko-Signature HMAC of the webhooks (16 to 256 printable characters)',
      shape: '16 to 256 printable characters without spaces',
    },
    {
      name: 'base_url',
      required: false,
      secret: false,
      schema: Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', maxLength: 200 }),
      default: CHECKOUT_LIVE_URL,
      description: "the API's address, https://api.checkout.com by default (https://api.sandbox.checkout.com for its test environment)",
      shape: 'an http(s):// address of up to 200 characters without query or fragment, such as https://api.checkout.com',
    },
    {
      name: 'currency_account_id',
      required: false,
      secret: false,
      schema: Type.String({ pattern: ID_PATTERN('ca') }),
      description: 'the currency account (ca_...) payouts are paid from; without it the gateway makes no payouts',
      shape: 'ca_ followed by 26 lowercase letters or digits',
    },
    {
      name: 'funds_transfer_type',
      required: false,
      secret: false,
      schema: Type.String({ pattern: '^[A-Za-z0-9_]{1,20}$' }),
      default: 'FD',
      description: 'the funds transfer type of card payouts Checkout.com assigned to the account (FD by default)',
      shape: '1 to 20 letters, digits or underscores, such as FD',
    },
    {
      name: 'three_ds',
      required: false,
      secret: false,
      schema: Type.Union([Type.Literal('never'), Type.Literal('always')]),
      default: 'never',
      description: 'never (3-D Secure only when Checkout.com asks for it) or always',
      shape: 'never or always',
    },
  ],
  default_currencies: null,
  check: baseUrlProblem,
  create(settings, context, gateway_id) {
    return new CheckoutConnector(
      {
        secret_key: settings.secret_key!,
        processing_channel_id: settings.processing_channel_id!,
        webhook_secret: settings.webhook_secret!,
        base_url: settings.base_url ?? CHECKOUT_LIVE_URL,
        currency_account_id: settings.currency_account_id ?? null,
        funds_transfer_type: settings.funds_transfer_type ?? 'FD',
        three_ds: settings.three_ds === 'always' ? 'always' : 'never',
      },
      context,
      gateway_id,
    );
  },
};
