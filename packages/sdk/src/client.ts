// PaygateClient: one method per call of the merchant API. Each method picks the endpoint, the
// variant and the version (sale → /api/process, transaction_type sale, application_key, 1.2;
// capture → /api/capture ...), fills in the merchant's identity and a fresh timestamp, signs,
// sends with the transport's limits and retries, verifies the answer, and returns a named outcome.
// Request and answer types come from generated/api.ts (the gateway's /openapi.json); what a
// method's caller supplies is that type without the fields the client fills in.
import { ENDPOINTS, type OperationId } from './generated/api.js';
import type {
  AuthorizeFrontendRequest,
  AuthorizeRequest,
  CaptureRequest,
  DirectPayoutAnswer,
  DirectPayoutRequest,
  FindOrderAnswer,
  FindOrderRequest,
  InitCheckoutRequest,
  InitPayInRequest,
  InitPayOutOrderRequest,
  InitPayOutRequest,
  PayoutEncryptedRequest,
  PayoutFrontendRequest,
  PayPalRefundRequest,
  PayPalSaleRequest,
  PlanAnswer,
  PlanCreateRequest,
  PlanListAnswer,
  PlanListRequest,
  PlanUpdateRequest,
  ProcessAnswer,
  RefundFrontendRequest,
  RefundRequest,
  SaleFrontendRequest,
  SaleRequest,
  SessionAnswer,
  SubscriptionActivateRequest,
  SubscriptionAnswer,
  SubscriptionCreateRequest,
  SubscriptionListAnswer,
  SubscriptionListRequest,
  TokenizeAnswer,
  TokenizeRequest,
  TransactionStatusAnswer,
  VoidRequest,
} from './generated/api.js';
import { AnswerSignatureError, ClockSkewError, GatewayHttpError, UnexpectedAnswerError } from './errors.js';
import {
  answerAuthentication,
  bodyHeaderSignature,
  encryptCardField,
  requestAuthentication,
  signaturesEqual,
  signBody,
  verifyBody,
} from './signing.js';
import { Connections, exchange, type HttpAnswer, type HttpRequest, type RetryNotice, type TransportLimits } from './transport.js';

// ---- what callers pass and get ----------------------------------------------------------------

/** Fields of a body-signed request the client fills in itself. */
type Filled = 'merchant_id' | 'application_key' | 'frontend' | 'timestamp' | 'signature' | 'version' | 'transaction_type';
/** Fields of a v1.3 request the client fills in itself. */
type V13Filled = 'merchant_id' | 'application_key' | 'timestamp' | 'version';

export type SaleInput = Omit<SaleRequest, Filled>;
export type SaleFrontendInput = Omit<SaleFrontendRequest, Filled>;
/** An authorization takes a sale's fields (decisions.md §16). */
export type AuthorizeInput = Omit<AuthorizeRequest, Filled>;
export type AuthorizeFrontendInput = Omit<AuthorizeFrontendRequest, Filled>;
/** `reference_id`: the authorization's trace_id; `amount`: less than authorized captures part of it (the rest is released), absent the whole. */
export type CaptureInput = Omit<CaptureRequest, Filled>;
/** `reference_id`: the authorization's trace_id. */
export type VoidInput = Omit<VoidRequest, Filled>;
export type RefundInput = Omit<RefundRequest, Filled>;
/** A sale paid from the buyer's PayPal account (docs/api.md §17): a sale's fields without the card's. */
export type PayPalSaleInput = Omit<PayPalSaleRequest, Filled | 'payment_method'>;
/** The refund of a PayPal sale (`reference_id` its trace_id): no card fields. */
export type PayPalRefundInput = Omit<PayPalRefundRequest, Filled | 'payment_method'>;
export type RefundFrontendInput = Omit<RefundFrontendRequest, Filled>;
/** The encrypted payout's card in clear: the client encrypts it (spec §5.3) with each attempt's timestamp. */
export type PayoutInput = Omit<PayoutEncryptedRequest, Filled | `${'card_number' | 'card_exp' | 'cvv'}${'' | '_encrypted'}`> &
  Pick<PayoutFrontendRequest, 'card_number' | 'card_exp' | 'cvv'>;
export type PayoutFrontendInput = Omit<PayoutFrontendRequest, Filled>;
/** The processor's own `data_` fields (docs/payouts.md §3) go beside the others. */
export type DirectPayoutInput = Omit<DirectPayoutRequest, Filled> & { readonly [field: `data_${string}`]: string | undefined };
export type TokenizeInput = Omit<TokenizeRequest, Filled>;
export type InitPayInInput = Omit<InitPayInRequest, Filled>;
export type InitCheckoutInput = Omit<InitCheckoutRequest, Filled>;
export type InitPayOutInput = Omit<InitPayOutRequest, Filled>;
export type InitPayOutOrderInput = Omit<InitPayOutOrderRequest, Filled>;
export type PlanCreateInput = Omit<PlanCreateRequest, V13Filled>;
export type PlanUpdateInput = Omit<PlanUpdateRequest, V13Filled>;
export type PlanListInput = Omit<PlanListRequest, V13Filled>;
export type SubscriptionCreateInput = Omit<SubscriptionCreateRequest, V13Filled>;
export type SubscriptionListInput = Omit<SubscriptionListRequest, V13Filled>;
export type SubscriptionActivateInput = Omit<SubscriptionActivateRequest, V13Filled>;

/**
 * A v1.3 answer with status 0: the gateway's schema makes the call's fields optional because they
 * are absent from refusals ("present when status is 0"); here they are present.
 */
export type Complete<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> };

/** The gateway processed the call and said no, with a positive status (or -1 where spec §7 says so): docs/errors.md. */
export interface Refused {
  readonly kind: 'refused';
  readonly status: number;
  readonly description: string;
}

/** What a call came to: the answer (status 0), or the gateway's refusal. */
export type Outcome<A> = { readonly kind: 'ok'; readonly answer: A } | Refused;

/** find-order's own outcomes (spec §4.7): found (status 0), not found (1), still open (3), timed out with no transaction (4). */
export type FindOrderOutcome =
  | { readonly kind: 'found'; readonly answer: FindOrderAnswer }
  | { readonly kind: 'not_found' | 'open' | 'timed_out'; readonly description: string }
  | Refused;

export interface PaygateClientOptions {
  /** The gateway's address, e.g. http://127.0.0.1:8080 (sandbox and live share paths). */
  readonly base_url: string;
  readonly merchant_id: string;
  readonly secret: string;
  /**
   * For the application_key calls (version 1.2: sale, authorize, refund, payout, directPayout, tokenize, initPayIn) and v1.3;
   * capture, void and transactionStatus use it when given.
   */
  readonly application_key?: string;
  /**
   * For the frontend calls (version 1.1: saleFrontend, authorizeFrontend, refundFrontend, payoutFrontend, initCheckout,
   * initPayOut, initPayOutOrder, findOrder); capture, void and transactionStatus use it when there is no application_key.
   */
  readonly frontend?: string | undefined;
  /** One attempt, from connecting to the answer's last byte; default 30 000 (a processor may take 20 s). */
  readonly timeout_ms?: number;
  /** Attempts after the first for a request that got no answer (never for one that did); default 2, at most 10. */
  readonly retries?: number;
  /** Wait before the first retry, doubled for each further one (up to 5 s); default 250. */
  readonly retry_backoff_ms?: number;
  /** Largest answer read; default 1 MiB. */
  readonly max_answer_bytes?: number;
  /** Send Gt-Body-Signature with v1.3 calls (docs/security.md §3), binding the body to the header; default true. */
  readonly v13_body_signature?: boolean;
  /** Told of each retry, for the merchant's log. */
  readonly on_retry?: (notice: RetryNotice) => void;
  /** The clock timestamps are taken from (unix milliseconds); Date.now by default. */
  readonly now_ms?: () => number;
}

const DEFAULTS = { timeout_ms: 30_000, retries: 2, retry_backoff_ms: 250, max_answer_bytes: 1024 * 1024 } as const;

function bounded(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < min || chosen > max)
    throw new RangeError(`${name} must be a whole number from ${min} to ${max}`);
  return chosen;
}

/** A description to show: bounded and printable, for messages built from what the gateway sent. */
function shown(value: unknown): string | null {
  return typeof value === 'string' ? value.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 256) : null;
}

function jsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function definedOnly(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

type Identity = 'application_key' | 'frontend';

interface SignedCall {
  readonly operation: OperationId;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly identity: Identity;
  readonly version: '1.1' | '1.2';
  /** Whether sending it twice gives one outcome (keyed by order_id, a read, or the same card). */
  readonly idempotent: boolean;
  /** Fields sent encrypted under their `_encrypted` names (the encrypted payout). */
  readonly encrypt?: readonly string[];
}

interface HeaderCall {
  readonly operation: OperationId;
  readonly path_params?: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly idempotent: boolean;
}

export class PaygateClient {
  private readonly base_url: string;
  private readonly merchant_id: string;
  private readonly secret: string;
  private readonly application_key: string | undefined;
  private readonly frontend: string | undefined;
  private readonly limits: TransportLimits;
  private readonly v13_body_signature: boolean;
  private readonly now_ms: () => number;
  private readonly connections = new Connections();

  constructor(options: PaygateClientOptions) {
    let base: URL;
    try {
      base = new URL(options.base_url);
    } catch {
      throw new TypeError(`base_url is not a URL: ${options.base_url}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError('base_url must be an http or https URL');
    if (!options.merchant_id) throw new TypeError('merchant_id is required');
    if (!options.secret) throw new TypeError('secret is required');
    this.base_url = base.href.replace(/\/+$/, '');
    this.merchant_id = options.merchant_id;
    this.secret = options.secret;
    this.application_key = options.application_key;
    this.frontend = options.frontend;
    this.limits = {
      timeout_ms: bounded('timeout_ms', options.timeout_ms, DEFAULTS.timeout_ms, 100, 600_000),
      retries: bounded('retries', options.retries, DEFAULTS.retries, 0, 10),
      retry_backoff_ms: bounded('retry_backoff_ms', options.retry_backoff_ms, DEFAULTS.retry_backoff_ms, 0, 60_000),
      max_answer_bytes: bounded('max_answer_bytes', options.max_answer_bytes, DEFAULTS.max_answer_bytes, 1024, 64 * 1024 * 1024),
      ...(options.on_retry ? { on_retry: options.on_retry } : {}),
    };
    this.v13_body_signature = options.v13_body_signature ?? true;
    this.now_ms = options.now_ms ?? Date.now;
  }

  /** Closes the kept-alive connections (idle ones close by themselves after 2 s). */
  close(): void {
    this.connections.close();
  }

  // ---- /api/process: sale, refund, card payout --------------------------------------------------

  /** A card sale (spec §4.1 variant A: application_key, version 1.2). Keyed by order_id: safe to send again. */
  async sale(input: SaleInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'sale' },
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /** A card sale in the frontend form (variant B, version 1.1). */
  async saleFrontend(input: SaleFrontendInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'sale' },
        identity: 'frontend',
        version: '1.1',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /**
   * An authorization (decisions.md §16: the sale's fields, application_key, version 1.2): the funds are held, answered
   * `authorized` (or `pending_async` for 3-D Secure, `rejected` ...), until `capture` or `void`. Keyed by order_id: safe to send again.
   */
  async authorize(input: AuthorizeInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'authorize' },
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /** An authorization in the frontend form (version 1.1). */
  async authorizeFrontend(input: AuthorizeFrontendInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'authorize' },
        identity: 'frontend',
        version: '1.1',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /**
   * Captures an `authorized` authorization, whole or in part (decisions.md §16): answered with the
   * authorization, `approved` with the captured amount (`authorized` until a processor that confirms
   * later does, then notified). One capture per authorization; the same capture again answers the
   * same, so it is safe to send again. Refusals: status 37 (not an authorized authorization, an
   * amount above it, already captured or voided, the processor refused), 13 (unknown trace_id).
   */
  async capture(input: CaptureInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(await this.eitherForm({ operation: 'postApiCapture', fields: input, idempotent: true })) as Outcome<ProcessAnswer>;
  }

  /**
   * Voids an `authorized` authorization (decisions.md §16): the held funds are released, answered
   * with the authorization `cancelled`. Named after POST /api/void: call it as `client.void(...)`.
   * Safe to send again; refused like `capture`.
   */
  async void(input: VoidInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(await this.eitherForm({ operation: 'postApiVoid', fields: input, idempotent: true })) as Outcome<ProcessAnswer>;
  }

  /**
   * A sale paid with PayPal (docs/api.md §17): answered `pending_async`; send the buyer to
   * `redirect_url` (PayPal's approval page). They come back to your return_url, and the
   * notification tells `approved` or `cancelled`. Keyed by order_id: safe to send again.
   */
  async paypalSale(input: PayPalSaleInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'sale', payment_method: 'paypal' },
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /** The refund of a PayPal sale (`reference_id` its trace_id), without card fields (docs/api.md §17). */
  async paypalRefund(input: PayPalRefundInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'refund', payment_method: 'paypal' },
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /** A refund of an approved sale (`reference_id` its trace_id), application_key form, version 1.2 (docs/api.md). */
  async refund(input: RefundInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'refund' },
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /** A refund in the spec's frontend form (variant C, version 1.1). */
  async refundFrontend(input: RefundFrontendInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'refund' },
        identity: 'frontend',
        version: '1.1',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /**
   * A payout to a card with its data encrypted (variant D: application_key, version 1.2). Give the
   * card in clear: the client encrypts card_number, card_exp and cvv (spec §5.3) for each attempt.
   */
  async payout(input: PayoutInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'payout' },
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
        encrypt: ['card_number', 'card_exp', 'cvv'],
      }),
    ) as Outcome<ProcessAnswer>;
  }

  /** A payout to a card with plain card data (variant E: frontend, version 1.1). */
  async payoutFrontend(input: PayoutFrontendInput): Promise<Outcome<ProcessAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiProcess',
        fields: { ...input, transaction_type: 'payout' },
        identity: 'frontend',
        version: '1.1',
        idempotent: true,
      }),
    ) as Outcome<ProcessAnswer>;
  }

  // ---- other body-signed calls ------------------------------------------------------------------

  /** A payout to an e-wallet or bank account (spec §4.2, version 1.2); `data_` fields per processor. */
  async directPayout(input: DirectPayoutInput): Promise<Outcome<DirectPayoutAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiDirect',
        fields: { ...input, transaction_type: 'payout' },
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
      }),
    ) as Outcome<DirectPayoutAnswer>;
  }

  /** A card_token for later charges, without a charge (decisions.md §9); the same card gives the same token. */
  async tokenize(input: TokenizeInput): Promise<Outcome<TokenizeAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiTokenize',
        fields: input,
        identity: 'application_key',
        version: '1.2',
        idempotent: true,
      }),
    ) as Outcome<TokenizeAnswer>;
  }

  /** One of the merchant's transactions by trace_id (docs/api.md), with the application_key (1.2) or else the frontend (1.1). */
  async transactionStatus(trace_id: number): Promise<Outcome<TransactionStatusAnswer>> {
    return this.outcome(
      await this.eitherForm({ operation: 'postApiTransactionStatus', fields: { trace_id }, idempotent: true }),
    ) as Outcome<TransactionStatusAnswer>;
  }

  /** A cashier deposit session (spec §4.3: application_key, 1.2). Each call opens a new session, so a lost answer is not resent. */
  async initPayIn(input: InitPayInInput): Promise<Outcome<SessionAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiInitPayIn',
        fields: input,
        identity: 'application_key',
        version: '1.2',
        idempotent: false,
      }),
    ) as Outcome<SessionAnswer>;
  }

  /** A checkout for an exact amount and order_id (spec §4.4: frontend, 1.1); the same order_id answers the same session. */
  async initCheckout(input: InitCheckoutInput): Promise<Outcome<SessionAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiInitCheckout',
        fields: input,
        identity: 'frontend',
        version: '1.1',
        idempotent: true,
      }),
    ) as Outcome<SessionAnswer>;
  }

  /** The cashier's withdrawal section (spec §4.5: frontend, 1.1). Each call opens a new session. */
  async initPayOut(input: InitPayOutInput): Promise<Outcome<SessionAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiInitPayOut',
        fields: input,
        identity: 'frontend',
        version: '1.1',
        idempotent: false,
      }),
    ) as Outcome<SessionAnswer>;
  }

  /** A payout order for an exact amount and order_id (docs/cashier.md §3: frontend, 1.1). */
  async initPayOutOrder(input: InitPayOutOrderInput): Promise<Outcome<SessionAnswer>> {
    return this.outcome(
      await this.signed({
        operation: 'postApiInitPayOutOrder',
        fields: input,
        identity: 'frontend',
        version: '1.1',
        idempotent: true,
      }),
    ) as Outcome<SessionAnswer>;
  }

  /** Where an order opened by initCheckout or initPayOutOrder stands (spec §4.7: frontend, 1.1). */
  async findOrder(order_id: FindOrderRequest['order_id']): Promise<FindOrderOutcome> {
    const answer = await this.signed({
      operation: 'postApiFindOrder',
      fields: { order_id },
      identity: 'frontend',
      version: '1.1',
      idempotent: true,
    });
    const description = String(answer.description);
    switch (answer.status) {
      case 0:
        return { kind: 'found', answer: answer as unknown as FindOrderAnswer };
      case 1:
        return { kind: 'not_found', description };
      case 3:
        return { kind: 'open', description };
      case 4:
        return { kind: 'timed_out', description };
      default:
        return { kind: 'refused', status: Number(answer.status), description };
    }
  }

  // ---- v1.3 plans and subscriptions -------------------------------------------------------------

  /** A subscription plan (decisions.md §10). Not idempotent: a lost answer is not resent (list the plans to see). */
  async createPlan(input: PlanCreateInput): Promise<Outcome<Complete<PlanAnswer>>> {
    return this.outcome(await this.headerSigned({ operation: 'postApiV1V3SubscriptionPlan', fields: input, idempotent: false })) as Outcome<
      Complete<PlanAnswer>
    >;
  }

  /** Changes a plan's name, description or status (spec §4.9). */
  async updatePlan(plan_id: string, input: PlanUpdateInput): Promise<Outcome<Complete<PlanAnswer>>> {
    return this.outcome(
      await this.headerSigned({
        operation: 'putApiV1V3SubscriptionPlanPlanId',
        path_params: { planId: plan_id },
        fields: input,
        idempotent: true,
      }),
    ) as Outcome<Complete<PlanAnswer>>;
  }

  async getPlan(plan_id: string): Promise<Outcome<Complete<PlanAnswer>>> {
    return this.outcome(
      await this.headerSigned({
        operation: 'getApiV1V3SubscriptionPlanPlanId',
        path_params: { planId: plan_id },
        fields: {},
        idempotent: true,
      }),
    ) as Outcome<Complete<PlanAnswer>>;
  }

  async listPlans(input: PlanListInput = {}): Promise<Outcome<Complete<PlanListAnswer>>> {
    return this.outcome(await this.headerSigned({ operation: 'getApiV1V3SubscriptionPlan', fields: input, idempotent: true })) as Outcome<
      Complete<PlanListAnswer>
    >;
  }

  /** A customer's subscription (spec §4.8); the same request again answers the same subscription. */
  async createSubscription(input: SubscriptionCreateInput): Promise<Outcome<Complete<SubscriptionAnswer>>> {
    return this.outcome(await this.headerSigned({ operation: 'postApiV1V3Subscription', fields: input, idempotent: true })) as Outcome<
      Complete<SubscriptionAnswer>
    >;
  }

  async getSubscription(subscription_id: string): Promise<Outcome<Complete<SubscriptionAnswer>>> {
    return this.outcome(
      await this.headerSigned({
        operation: 'getApiV1V3SubscriptionSubscriptionId',
        path_params: { subscriptionId: subscription_id },
        fields: {},
        idempotent: true,
      }),
    ) as Outcome<Complete<SubscriptionAnswer>>;
  }

  async listSubscriptions(input: SubscriptionListInput = {}): Promise<Outcome<Complete<SubscriptionListAnswer>>> {
    return this.outcome(await this.headerSigned({ operation: 'getApiV1V3Subscription', fields: input, idempotent: true })) as Outcome<
      Complete<SubscriptionListAnswer>
    >;
  }

  /** No charge after this; cancelling again answers the same. */
  async cancelSubscription(subscription_id: string): Promise<Outcome<Complete<SubscriptionAnswer>>> {
    return this.outcome(
      await this.headerSigned({
        operation: 'postApiV1V3SubscriptionSubscriptionIdCancel',
        path_params: { subscriptionId: subscription_id },
        fields: {},
        idempotent: true,
      }),
    ) as Outcome<Complete<SubscriptionAnswer>>;
  }

  /** Activates an inactive subscription, optionally with another card_token. */
  async activateSubscription(
    subscription_id: string,
    input: SubscriptionActivateInput = {},
  ): Promise<Outcome<Complete<SubscriptionAnswer>>> {
    return this.outcome(
      await this.headerSigned({
        operation: 'postApiV1V3SubscriptionSubscriptionIdActivate',
        path_params: { subscriptionId: subscription_id },
        fields: input,
        idempotent: true,
      }),
    ) as Outcome<Complete<SubscriptionAnswer>>;
  }

  // ---- plumbing ---------------------------------------------------------------------------------

  /** A call that takes either form alike: with the application_key (1.2) when the client has one, else the frontend (1.1). */
  private eitherForm(call: Omit<SignedCall, 'identity' | 'version'>): Promise<Record<string, unknown>> {
    const identity: Identity = this.application_key !== undefined ? 'application_key' : 'frontend';
    return this.signed({ ...call, identity, version: identity === 'application_key' ? '1.2' : '1.1' });
  }

  private identityValue(identity: Identity): string {
    const value = identity === 'application_key' ? this.application_key : this.frontend;
    if (value === undefined || value === '')
      throw new TypeError(`this call is made with the merchant's ${identity}: give ${identity} in the client's options`);
    return value;
  }

  private outcome(answer: Readonly<Record<string, unknown>>): Outcome<unknown> {
    if (answer.status === 0) return { kind: 'ok', answer };
    return { kind: 'refused', status: Number(answer.status), description: String(answer.description ?? '') };
  }

  private now_s(): number {
    return Math.floor(this.now_ms() / 1000);
  }

  /** A body-signed call (decisions.md §1): its verified answer, whatever its status. */
  private async signed(call: SignedCall): Promise<Record<string, unknown>> {
    const endpoint = ENDPOINTS[call.operation];
    const identity = { [call.identity]: this.identityValue(call.identity) };
    const build = (): HttpRequest => {
      const timestamp = this.now_s();
      const body: Record<string, unknown> = definedOnly({
        ...call.fields,
        merchant_id: this.merchant_id,
        ...identity,
        version: call.version,
        timestamp,
      });
      for (const name of call.encrypt ?? []) {
        const plain = body[name];
        delete body[name];
        if (typeof plain === 'string') body[`${name}_encrypted`] = encryptCardField(plain, this.secret, timestamp);
      }
      body.signature = signBody(body, this.secret);
      return {
        method: endpoint.method,
        url: this.base_url + endpoint.path,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      };
    };
    const answer = await exchange(build, call.idempotent, this.connections, this.limits);
    const body = this.answerObject(answer);
    if (typeof body.signature !== 'string') {
      throw new AnswerSignatureError(
        `The gateway's answer is not signed (status ${String(body.status)}: ${shown(body.description)}). The gateway signs every answer once it knows ` +
          'the merchant: check merchant_id (an unknown or disabled merchant gets an unsigned answer).',
        typeof body.status === 'number' ? body.status : null,
        shown(body.description),
      );
    }
    if (!verifyBody(body, this.secret)) {
      throw new AnswerSignatureError(
        "The answer's signature does not verify with this secret: the secret is wrong (or was rolled), or the answer was changed on the way.",
        typeof body.status === 'number' ? body.status : null,
        shown(body.description),
      );
    }
    this.checkClock(body);
    return body;
  }

  /** A v1.3 call (decisions.md §2): Gt-Authentication (and Gt-Body-Signature); the answer's header verified. */
  private async headerSigned(call: HeaderCall): Promise<Record<string, unknown>> {
    const endpoint = ENDPOINTS[call.operation];
    const application_key = this.identityValue('application_key');
    let path: string = endpoint.path;
    for (const [name, value] of Object.entries(call.path_params ?? {})) path = path.replace(`{${name}}`, encodeURIComponent(value));
    const build = (): HttpRequest => {
      const timestamp = this.now_s();
      // The client's own fields last: nothing in the input can replace what the header signs.
      const fields = definedOnly({ ...call.fields, merchant_id: this.merchant_id, application_key, timestamp, version: 'v1.3' });
      const headers: Record<string, string> = {
        accept: 'application/json',
        'gt-authentication': requestAuthentication(this.merchant_id, application_key, timestamp, this.secret),
      };
      let url = this.base_url + path;
      let body: string | null = null;
      let signed_content: string;
      if (endpoint.method === 'GET') {
        signed_content = new URLSearchParams(Object.entries(fields).map(([name, value]) => [name, String(value)])).toString();
        url += `?${signed_content}`;
      } else {
        body = JSON.stringify(fields);
        signed_content = body;
        headers['content-type'] = 'application/json';
      }
      if (this.v13_body_signature) headers['gt-body-signature'] = bodyHeaderSignature(endpoint.method, path, signed_content, this.secret);
      return { method: endpoint.method, url, headers, body };
    };
    const answer = await exchange(build, call.idempotent, this.connections, this.limits);
    const body = this.answerObject(answer);
    const header = answer.headers['gt-authentication'];
    const status = body.status;
    const timestamp = body.timestamp;
    if (typeof header !== 'string') {
      throw new AnswerSignatureError(
        `The gateway's answer carries no Gt-Authentication header (status ${String(status)}: ${shown(body.description)}): check merchant_id ` +
          '(an unknown or disabled merchant gets an unsigned answer).',
        typeof status === 'number' ? status : null,
        shown(body.description),
      );
    }
    if (
      !Number.isSafeInteger(status) ||
      !Number.isSafeInteger(timestamp) ||
      !signaturesEqual(answerAuthentication(status as number, timestamp as number, this.secret), header)
    ) {
      throw new AnswerSignatureError(
        "The answer's Gt-Authentication header does not verify with this secret: the secret is wrong (or was rolled), or the answer was changed on the way.",
        typeof status === 'number' ? status : null,
        shown(body.description),
      );
    }
    this.checkClock(body);
    return body;
  }

  /** A 200 answer's JSON object; any other HTTP status is an error, never an outcome. */
  private answerObject(answer: HttpAnswer): Record<string, unknown> {
    const body = jsonObject(answer.text);
    if (answer.http_status !== 200) {
      const retry_after = Number(answer.headers['retry-after']);
      throw new GatewayHttpError(
        answer.http_status,
        typeof body?.status === 'number' ? body.status : null,
        shown(body?.description),
        Number.isSafeInteger(retry_after) && retry_after >= 0 ? retry_after : null,
      );
    }
    if (body === null) throw new UnexpectedAnswerError(`The gateway's answer is not a JSON object: ${shown(answer.text.slice(0, 120))}`);
    return body;
  }

  /** Status 1 about the timestamp (decisions.md §4, §15): this clock is off; measured against the answer's own timestamp. */
  private checkClock(body: Readonly<Record<string, unknown>>): void {
    const description = body.description;
    if (body.status !== 1 || typeof description !== 'string' || !description.startsWith('Timestamp')) return;
    const gateway_s = typeof body.timestamp === 'number' ? body.timestamp : this.now_s();
    throw new ClockSkewError(this.now_s() - gateway_s, description);
  }
}
