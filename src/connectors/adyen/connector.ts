// The Adyen connector (`adyen`, decisions §17): card sales and authorizations with the card's
// details on Checkout API v71 (3-D Secure by Adyen's redirect, completed by /payments/details with
// the redirectResult the customer comes back with), captures, cancels (voids) and refunds, bank
// payouts on Payout API v68 (storeDetailAndSubmitThirdParty with the submitter's key, then
// confirmThirdParty with the reviewer's key), and Adyen's notifications verified by their HMAC.
//
// Adyen settles by notifications: captures, cancels and refunds are answered 201 "received" and
// decided by a CAPTURE / CANCELLATION / REFUND notification; payouts by PAYOUT_THIRDPARTY,
// PAYOUT_DECLINE or PAYOUT_EXPIRE. Adyen has no call that reads a payment or a payout back, so
// `lookup` answers `unavailable` (ask again later) and the notification decides: a payment whose
// answer was lost stays pending until its AUTHORISATION notification (Adyen sends one for every
// payment), never guessed. Every request that moves money carries an Idempotency-Key derived from
// the gateway, the transaction and the operation, so a retry returns the first answer instead of
// paying twice. The HTTP client is our own small one (client.ts says why not @adyen/api-library).
import { Type } from '@sinclair/typebox';
import type {
  AuthorizationActionResult,
  CaptureRequest,
  CardSaleRequest,
  Connector,
  ConnectorContext,
  ConnectorDefinition,
  DirectPayoutRequest,
  LookupResult,
  ProcessorResult,
  RefundRequest,
  ReturnRequest,
  ReturnResult,
  VoidRequest,
  WebhookReading,
} from '../connector.js';
import { baseUrlProblem } from '../base-url.js';
import { type AdyenAnswer, AdyenClient } from './client.js';
import {
  BANK_PAYOUT_FIELDS,
  cancelBody,
  captureBody,
  BANK_PAYEE,
  checkBankPayout,
  confirmPayoutBody,
  idempotencyKey,
  refundBody,
  saleBody,
  submitPayoutBody,
} from './requests.js';
import { type Asked, paymentResult } from './status-map.js';
import { readAdyenNotification } from './webhooks.js';
import { readModification, readModify, readPayment, readServiceError, readSubmit } from './wire.js';

export interface AdyenSettings {
  readonly api_key: string;
  readonly merchant_account: string;
  readonly hmac_key: string;
  readonly payout_api_key: string;
  readonly payout_reviewer_api_key: string;
  readonly base_url: string;
}

const CHECKOUT = '/checkout/v71';
const PAYOUT = '/pal/servlet/Payout/v68';

type Answered = Extract<AdyenAnswer, { kind: 'answer' }>;

export class AdyenConnector implements Connector {
  readonly name = 'adyen';
  readonly details_prefix = '';
  private readonly client: AdyenClient;
  readonly authorizations = {
    capture: (request: CaptureRequest): Promise<AuthorizationActionResult> => this.capture(request),
    void: (request: VoidRequest): Promise<AuthorizationActionResult> => this.cancel(request),
  };
  readonly direct = {
    fields: BANK_PAYOUT_FIELDS,
    check: checkBankPayout,
    payout: (request: DirectPayoutRequest): Promise<ProcessorResult> => this.bankPayout(request),
    payee: BANK_PAYEE,
  };

  constructor(
    private readonly settings: AdyenSettings,
    private readonly context: ConnectorContext,
    private readonly gateway_id: string,
  ) {
    this.client = new AdyenClient(context.http, settings.base_url);
  }

  /** How long after a redirect (or a taken request) the gateway asks again, if no notification came. */
  private get recheck_after_ms(): number {
    return this.context.options.challenge_timeout_ms + 60_000;
  }

  private get ids() {
    return { merchant_account: this.settings.merchant_account };
  }

  async sale(request: CardSaleRequest): Promise<ProcessorResult> {
    const body = saleBody(request, this.ids, `${this.context.public_url()}/`);
    const key = idempotencyKey(this.gateway_id, request.trace_id, request.capture ? 'sale' : 'authorize');
    return this.paymentAnswer(await this.client.post(`${CHECKOUT}/payments`, this.settings.api_key, body, key), request, 'Payment');
  }

  /** The customer is back from Adyen's 3-D Secure page: /payments/details with the redirectResult decides. */
  async completeReturn(request: ReturnRequest): Promise<ReturnResult> {
    const redirect_result = request.params.redirectResult;
    if (redirect_result === undefined || redirect_result === '') {
      // Without it Adyen cannot be asked; its AUTHORISATION notification will tell.
      return { kind: 'unknown', psp_transaction_id: request.psp_transaction_id, reason: 'back from 3-D Secure without a redirectResult' };
    }
    const body = { details: { redirectResult: redirect_result } };
    const answer = await this.client.post(`${CHECKOUT}/payments/details`, this.settings.api_key, body, request.idempotency_key);
    const result = this.paymentAnswer(answer, request, 'Payment details');
    // A details call that never left: the payment itself is still where it was, not failed.
    if (answer.kind === 'not_sent') return { kind: 'unknown', psp_transaction_id: request.psp_transaction_id, reason: answer.reason };
    if ((result.kind === 'rejected' || result.kind === 'error') && result.psp_transaction_id === null) {
      return { ...result, psp_transaction_id: request.psp_transaction_id };
    }
    return result;
  }

  /** The answer to /payments or /payments/details in our terms. */
  private paymentAnswer(answer: AdyenAnswer, asked: Asked, what: string): ProcessorResult {
    if (answer.kind === 'not_sent') return unreached(answer.reason, 'nothing was charged');
    if (answer.kind === 'lost') return { kind: 'unknown', psp_transaction_id: null, reason: answer.reason };
    if (answer.http_status === 200) {
      const payment = readPayment(answer.json);
      const result = payment ? paymentResult(payment, asked, this.recheck_after_ms) : null;
      return result ?? unknownOf(answer);
    }
    if (answer.http_status >= 500 || answer.http_status === 429) return unknownOf(answer);
    return refused(answer, what);
  }

  private async capture(request: CaptureRequest): Promise<AuthorizationActionResult> {
    const path = `${CHECKOUT}/payments/${encodeURIComponent(request.psp_transaction_id)}/captures`;
    return actionAnswer(
      await this.client.post(path, this.settings.api_key, captureBody(request, this.ids), request.idempotency_key),
      'Capture',
    );
  }

  private async cancel(request: VoidRequest): Promise<AuthorizationActionResult> {
    const path = `${CHECKOUT}/payments/${encodeURIComponent(request.psp_transaction_id)}/cancels`;
    return actionAnswer(
      await this.client.post(path, this.settings.api_key, cancelBody(request, this.ids), request.idempotency_key),
      'Void',
    );
  }

  /** A refund is taken (201 received) and decided by the REFUND notification: pending until then. */
  async refund(request: RefundRequest): Promise<ProcessorResult> {
    if (request.sale_psp_transaction_id === null) {
      return {
        kind: 'error',
        psp_transaction_id: null,
        error_code: 'no_payment',
        error_details: 'The sale has no payment at the processor to refund',
      };
    }
    const path = `${CHECKOUT}/payments/${encodeURIComponent(request.sale_psp_transaction_id)}/refunds`;
    const key = idempotencyKey(this.gateway_id, request.trace_id, 'refund');
    const answer = await this.client.post(path, this.settings.api_key, refundBody(request, this.ids), key);
    if (answer.kind === 'not_sent') return unreached(answer.reason, 'nothing was refunded');
    if (answer.kind === 'lost') return { kind: 'unknown', psp_transaction_id: null, reason: answer.reason };
    if (answer.http_status === 201 || answer.http_status === 200) {
      const taken = readModification(answer.json);
      return taken
        ? this.pending(taken.psp_reference, 'Refund received by the processor; the final status will be notified')
        : unknownOf(answer);
    }
    if (answer.http_status >= 500 || answer.http_status === 429) return unknownOf(answer);
    if (answer.http_status === 422) {
      return {
        kind: 'rejected',
        psp_transaction_id: null,
        error_code: '422',
        error_details: `Refund refused by the processor (${readServiceError(answer.json) ?? 'HTTP 422'})`,
      };
    }
    return refused(answer, 'Refund');
  }

  /**
   * A bank payout: submitted with the submitter's key, then confirmed with the reviewer's, and
   * pending until PAYOUT_THIRDPARTY (or PAYOUT_DECLINE, PAYOUT_EXPIRE) says what became of it.
   */
  private async bankPayout(request: DirectPayoutRequest): Promise<ProcessorResult> {
    const submit_key = idempotencyKey(this.gateway_id, request.trace_id, 'payout');
    const submitted = await this.client.post(
      `${PAYOUT}/storeDetailAndSubmitThirdParty`,
      this.settings.payout_api_key,
      submitPayoutBody(request, this.ids),
      submit_key,
    );
    if (submitted.kind === 'not_sent') return unreached(submitted.reason, 'nothing was paid out');
    if (submitted.kind === 'lost') return { kind: 'unknown', psp_transaction_id: null, reason: submitted.reason };
    if (submitted.http_status >= 500 || submitted.http_status === 429) return unknownOf(submitted);
    if (submitted.http_status !== 200) return refused(submitted, 'Payout');
    const submit = readSubmit(submitted.json);
    if (!submit) return unknownOf(submitted);
    if (submit.result_code !== '[payout-submit-received]') {
      return {
        kind: 'rejected',
        psp_transaction_id: submit.psp_reference,
        error_code: submit.result_code.slice(0, 40),
        error_details: `Payout refused by the processor${submit.refusal ? `: ${submit.refusal}` : ''}`,
      };
    }
    const psp = submit.psp_reference;
    const confirm_key = idempotencyKey(this.gateway_id, request.trace_id, 'confirm');
    const confirmed = await this.client.post(
      `${PAYOUT}/confirmThirdParty`,
      this.settings.payout_reviewer_api_key,
      confirmPayoutBody(psp, this.ids),
      confirm_key,
    );
    // Submitted but not (surely) confirmed: the payout exists at Adyen, unconfirmed or not; only
    // its notification can tell, so the outcome is unknown rather than failed.
    if (confirmed.kind !== 'answer') return { kind: 'unknown', psp_transaction_id: psp, reason: `confirmation: ${confirmed.reason}` };
    const modify = confirmed.http_status === 200 ? readModify(confirmed.json) : null;
    if (modify?.response === '[payout-confirm-received]')
      return this.pending(psp, 'Payout confirmed at the processor; the final status will be notified');
    if (confirmed.http_status >= 400 && confirmed.http_status < 500 && confirmed.http_status !== 429) {
      const why = readServiceError(confirmed.json) ?? `HTTP ${confirmed.http_status}`;
      return {
        kind: 'error',
        psp_transaction_id: psp,
        error_code: String(confirmed.http_status),
        error_details: `Payout submitted but its confirmation was refused (${why})`,
      };
    }
    return { kind: 'unknown', psp_transaction_id: psp, reason: `confirmation answered HTTP ${confirmed.http_status}` };
  }

  private pending(psp: string, words: string): ProcessorResult {
    return {
      kind: 'pending',
      psp_transaction_id: psp,
      error_code: '0',
      error_details: words,
      later: null,
      recheck_after_ms: this.recheck_after_ms,
    };
  }

  /** Adyen has no call that reads a payment or payout back: its notifications decide (header comment). */
  async lookup(): Promise<LookupResult> {
    return { kind: 'unavailable', reason: 'Adyen has no lookup of a payment or payout; its notification settles it' };
  }

  /** Adyen wants the text `[accepted]` back from every notification it should not send again. */
  readonly webhook_acknowledgement = { content_type: 'text/plain; charset=utf-8', body: '[accepted]' };

  readWebhook(raw_body: Buffer): WebhookReading {
    return readAdyenNotification(this.settings.hmac_key, raw_body);
  }
}

function unreached(reason: string, nothing: string): ProcessorResult {
  return {
    kind: 'error',
    psp_transaction_id: null,
    error_code: 'unreachable',
    error_details: `Processor unreachable (${reason}); ${nothing}`,
  };
}

function unknownOf(answer: Answered): ProcessorResult {
  return {
    kind: 'unknown',
    psp_transaction_id: null,
    reason: answer.parsed
      ? `an answer of an unexpected shape (HTTP ${answer.http_status})`
      : `an answer that does not parse (HTTP ${answer.http_status})`,
  };
}

/** A 4xx before processing: refused, nothing moved. */
function refused(answer: Answered, what: string): ProcessorResult {
  if (answer.http_status === 401 || answer.http_status === 403) {
    return {
      kind: 'error',
      psp_transaction_id: null,
      error_code: String(answer.http_status),
      error_details: `${what} refused by the processor: the gateway's credentials were not accepted (HTTP ${answer.http_status})`,
    };
  }
  const why = readServiceError(answer.json);
  return {
    kind: 'error',
    psp_transaction_id: null,
    error_code: String(answer.http_status),
    error_details: `${what} refused by the processor (HTTP ${answer.http_status}${why ? `: ${why}` : ''})`,
  };
}

/** A capture's or cancel's answer: 201 received is taken (the notification confirms it). */
function actionAnswer(answer: AdyenAnswer, what: 'Capture' | 'Void'): AuthorizationActionResult {
  if (answer.kind === 'not_sent') {
    return {
      kind: 'refused',
      error_code: 'unreachable',
      error_details: `Processor unreachable (${answer.reason}); nothing was ${what === 'Capture' ? 'captured' : 'voided'}`,
    };
  }
  if (answer.kind === 'lost') return { kind: 'unknown', reason: answer.reason };
  if (answer.http_status === 201 || answer.http_status === 200) {
    const taken = readModification(answer.json);
    return taken
      ? { kind: 'accepted', psp_action_id: taken.psp_reference }
      : { kind: 'unknown', reason: 'an answer of an unexpected shape' };
  }
  if (answer.http_status >= 500 || answer.http_status === 429) return { kind: 'unknown', reason: `HTTP ${answer.http_status}` };
  const why = readServiceError(answer.json);
  return {
    kind: 'refused',
    error_code: String(answer.http_status),
    error_details: `${what} refused by the processor (HTTP ${answer.http_status}${why ? `: ${why}` : ''})`,
  };
}

const KEY_SCHEMA = Type.String({ minLength: 8, maxLength: 500, pattern: '^[!-~]+$' });
const KEY_SHAPE = '8 to 500 printable characters without spaces';

export const adyenDefinition: ConnectorDefinition = {
  name: 'adyen',
  environments: ['sandbox', 'live'],
  capabilities: {
    card_sale: true,
    refund: true,
    card_payout: false,
    direct_payout: true,
    wallet_deposit: false,
    merchant_initiated: false,
    authorize_capture: true,
    disputes: true,
    three_d_secure: true,
    webhooks: true,
  },
  settings: [
    {
      name: 'api_key',
      required: true,
      secret: true,
      schema: KEY_SCHEMA,
      description: "the Checkout API's key, sent as X-API-Key",
      shape: KEY_SHAPE,
    },
    {
      name: 'merchant_account',
      required: true,
      secret: false,
      schema: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,80}$' }),
      description: 'the merchant account payments and payouts are made on',
      shape: '1 to 80 letters, digits, underscores, dots or hyphens',
    },
    {
      name: 'hmac_key',
      required: true,
      secret: true,
      schema: Type.String({ pattern: '^([0-9A-Fa-f]{2}){16,128}$' }),
      description: "the notifications' HMAC key, hex (Customer Area, webhook settings)",
      shape: '32 to 256 hexadecimal digits, an even number of them',
    },
    {
      name: 'payout_api_key',
      required: true,
      secret: true,
      schema: KEY_SCHEMA,
      description: 'the key of the payout submitter role (storeDetailAndSubmitThirdParty)',
      shape: KEY_SHAPE,
    },
    {
      name: 'payout_reviewer_api_key',
      required: true,
      secret: true,
      schema: KEY_SCHEMA,
      description: 'the key of the payout reviewer role (confirmThirdParty)',
      shape: KEY_SHAPE,
    },
    {
      name: 'base_url',
      required: true,
      secret: false,
      schema: Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', maxLength: 200 }),
      description: 'the address both APIs are under ({base_url}/checkout/v71/..., {base_url}/pal/servlet/Payout/v68/...)',
      shape: 'an http(s):// address of up to 200 characters without query or fragment',
    },
  ],
  default_currencies: null,
  check: baseUrlProblem,
  create(settings, context, gateway_id) {
    return new AdyenConnector(
      {
        api_key: settings.api_key!,
        merchant_account: settings.merchant_account!,
        hmac_key: settings.hmac_key!,
        payout_api_key: settings.payout_api_key!,
        payout_reviewer_api_key: settings.payout_reviewer_api_key!,
        base_url: settings.base_url!,
      },
      context,
      gateway_id,
    );
  },
};
