// Hosted cashier sessions (spec §4.3-4.6, docs/cashier.md): opening one (init-pay-in,
// init-checkout, init-pay-out, init-pay-out-order), and the customer's ways in: the one-time
// login token of redirect_url, the auth_token, and the browser session (an HttpOnly cookie)
// with its CSRF token. Every token is kept as a sha256 hash only; the auth_token is derived from
// the session id with the gateway's fingerprint key, so the gateway can recompute it (for
// validation requests) without storing it.
import { createHash, randomBytes } from 'node:crypto';
import type { Connector } from '../connectors/connector.js';
import { type GatewayRefusal, type Merchant, selectGateway } from '../domain/merchants.js';
import { CASHIER_PAYOUT_METHODS } from '../domain/payee.js';
import { routePayment } from './gateway-choice.js';
import { signaturesEqual } from '../domain/signing.js';
import type { CashierSessionRow, CashierTokenRow, SessionKind } from '../domain/cashier-record.js';
import type { NewCashierSessionRow } from '../store/schema.js';
import type { OperationDeps } from './deps.js';
import type { Identity } from './sale.js';

/** The domain's (domain/cashier-record.ts), beside the session's record. */
export type { SessionKind };

// The customer's fields are the domain's (domain/customer.ts): the cashier's pages read them too.
import { CUSTOMER_FIELDS, type CustomerData, type CustomerField, REQUIRED_CUSTOMER_FIELDS } from '../domain/customer.js';
export { CUSTOMER_FIELDS, type CustomerData, type CustomerField, REQUIRED_CUSTOMER_FIELDS };

/** A result page stays readable this long after the session ended (a customer back from 3-D Secure late). */
export const RESULT_GRACE_MS = 60 * 60 * 1000;

/**
 * The field that identifies the merchant's side in each session call: application_key for
 * init-pay-in (spec §4.3), frontend for init-checkout, init-pay-out and init-pay-out-order
 * (§4.4-4.6) and for find-order (§4.7). The other field, when a body also carries it, is signed
 * but ignored: it never changes who the session belongs to, nor the notification variant.
 */
export function identityFieldOf(kind: SessionKind): Identity['kind'] {
  return kind === 'pay_in' ? 'application_key' : 'frontend';
}

/** The identity named by `field` in the body, if it is the merchant's; null otherwise. */
export function identityByField(merchant: Merchant, field: Identity['kind'], value: unknown): Identity | null {
  if (typeof value !== 'string' || value === '') return null;
  const known = field === 'application_key' ? merchant.applications.includes(value) : merchant.frontends.some((f) => f.name === value);
  return known ? { kind: field, value } : null;
}

/**
 * Origins allowed to frame a session's pages (CSP frame-ancestors): the application's configured
 * origins, for an init-pay-in session only; null means nobody. The sandbox 3-D Secure and wallet
 * pages of a payment made in such a session follow the same rule (they open inside its iframe).
 */
export async function sessionFrameOrigins(deps: OperationDeps, session: CashierSessionRow | null): Promise<readonly string[] | null> {
  if (!session || session.kind !== 'pay_in' || session.identity_kind !== 'application_key') return null;
  const origins = await deps.store.merchants.getFrameOrigins(session.merchant_id, session.identity_value);
  return origins && origins.length > 0 ? origins : null;
}

export function isPayout(kind: string): boolean {
  return kind === 'pay_out' || kind === 'pay_out_order';
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * The session's auth_token: 32 characters (it fits spec §2.3's varchar(75) and §6.2's varchar(32)),
 * a keyed function of the random session id. Only its hash is stored.
 */
export function authTokenOf(deps: Pick<OperationDeps, 'sealer'>, session_id: string): string {
  return Buffer.from(deps.sealer.fingerprint(session_id, 'cashier-auth-token'), 'hex').toString('base64url').slice(0, 32);
}

/** The CSRF token of a browser session: a keyed function of its cookie, so nothing more is stored. */
export function csrfTokenOf(deps: Pick<OperationDeps, 'sealer'>, browser_token: string): string {
  return Buffer.from(deps.sealer.fingerprint(browser_token, 'cashier-csrf'), 'hex').toString('base64url');
}

export function csrfValid(deps: Pick<OperationDeps, 'sealer'>, browser_token: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length === 0 || given.length > 64) return false;
  // Compared as SHA-384 digests so the constant-time comparison sees equal lengths.
  const digest = (text: string) => createHash('sha384').update(text).digest('hex');
  return signaturesEqual(digest(csrfTokenOf(deps, browser_token)), digest(given));
}

/** The connector of the gateway a session pays through, or null when none is usable now. */
export function sessionConnector(
  deps: OperationDeps,
  merchant: Merchant,
  session: Pick<CashierSessionRow, 'currency' | 'gateway_id'>,
): Connector | null {
  const choice = selectGateway(merchant, session.currency, session.gateway_id, (c) => deps.connectors.runsHere(c));
  return choice.kind === 'chosen' ? deps.connectors.forGateway(choice.gateway) : null;
}

/**
 * The payment methods a session offers, in a fixed order: card, then e-wallet (deposits: a
 * connector that takes wallet deposits, PayPal's among them; payouts: the sandbox's wallet),
 * PayPal account and bank account (payouts, by the payees the connectors pay). Each is offered
 * when one of the gateways the session may use can take it: the session's own gateway when the
 * merchant named one, else every enabled gateway of the merchant here in the session's currency,
 * so that a merchant with a card processor and PayPal shows both.
 */
export function methodsFor(
  deps: OperationDeps,
  merchant: Merchant,
  session: Pick<CashierSessionRow, 'kind' | 'currency' | 'gateway_id'> & { readonly transaction_type?: 'sale' | 'authorize' },
): string[] {
  const connectors = sessionConnectors(deps, merchant, session);
  // An order to authorize takes cards only: a wallet payment cannot be held for a later capture.
  if (connectors.length === 0 || session.transaction_type === 'authorize') return ['card'];
  const payout = isPayout(session.kind);
  const offered = new Set<string>();
  for (const connector of connectors) {
    if (payout) {
      if (connector.cardPayout) offered.add('card');
      for (const method of connector.direct?.payee.methods ?? []) offered.add(method);
    } else {
      if (deps.connectors.definition(connector.name)?.capabilities.card_sale === true) offered.add('card');
      if (connector.walletDeposit !== undefined) offered.add('ewallet');
    }
  }
  return ['card', 'ewallet', ...CASHIER_PAYOUT_METHODS.filter((m) => m !== 'ewallet')].filter((method) => offered.has(method));
}

/** The connectors of the gateways a session may pay through: its own, or each usable one of the merchant in its currency. */
export function sessionConnectors(
  deps: OperationDeps,
  merchant: Merchant,
  session: Pick<CashierSessionRow, 'currency' | 'gateway_id'>,
): Connector[] {
  if (session.gateway_id !== null && session.gateway_id !== '') {
    const own = sessionConnector(deps, merchant, session);
    return own ? [own] : [];
  }
  const usable = merchant.gateways.filter(
    (g) => g.enabled && g.currencies.includes(session.currency) && deps.connectors.runsHere(g.connector),
  );
  return usable.map((g) => deps.connectors.forGateway(g)).filter((c): c is Connector => c !== null);
}

/**
 * The texts a session's pages take from a connector (its e-wallet's name, its test hints): the
 * first connector of the session's that has any, preferring one that takes e-wallet deposits.
 */
export function sessionTexts(deps: OperationDeps, merchant: Merchant, session: Pick<CashierSessionRow, 'currency' | 'gateway_id'>) {
  const connectors = sessionConnectors(deps, merchant, session).filter((c) => c.cashier_texts !== undefined);
  return (connectors.find((c) => c.walletDeposit !== undefined) ?? connectors[0])?.cashier_texts ?? null;
}

/** What a merchant's session call (init-*) carries once its fields are checked. */
export interface OpenSessionInput {
  readonly merchant: Merchant;
  readonly identity: Identity;
  readonly kind: SessionKind;
  readonly api_version: string;
  readonly order_id: string | null;
  readonly amount_minor: number | null;
  readonly balance_minor: number | null;
  readonly currency: string;
  readonly pin: string;
  readonly country: string;
  readonly customer: CustomerData;
  readonly locale: string | null;
  readonly payment_method: string | null;
  readonly gateway: string | null;
  readonly profile: number | null;
  readonly return_url: string;
  readonly notification_url: string;
  readonly validation_url: string | null;
  readonly variables: Readonly<Record<string, string>>;
  readonly request_fingerprint: string;
  /** init-checkout's transaction_type (decisions §16): `authorize` for an order captured later; `sale` for every other session. */
  readonly transaction_type: 'sale' | 'authorize';
}

export type OpenSessionOutcome =
  | { readonly kind: 'opened'; readonly redirect_url: string; readonly auth_token: string; readonly replayed: boolean }
  /** The merchant already has an order with this order_id, opened with other content (decisions.md §6). */
  | { readonly kind: 'duplicate_order' }
  /**
   * The same call again for an order that can no longer be paid (approved, or past its time
   * limit): no login link, since none would work (docs/cashier.md §2.4).
   */
  | { readonly kind: 'order_closed'; readonly order_status: 'approved' | 'expired' }
  | { readonly kind: 'no_gateway'; readonly refusal: GatewayRefusal }
  | { readonly kind: 'unknown_method'; readonly allowed: readonly string[] };

/** What a cashier session's and a registered customer's sealed data are bound to (also for the master-key rotation). */
export const CASHIER_CUSTOMER_PURPOSE = 'cashier-customer';
const CUSTOMER_PURPOSE = CASHIER_CUSTOMER_PURPOSE;

export function sealCustomer(deps: Pick<OperationDeps, 'sealer'>, data: CustomerData): string {
  return deps.sealer.seal(JSON.stringify(data), CUSTOMER_PURPOSE);
}

export function openCustomer(deps: Pick<OperationDeps, 'sealer'>, sealed: string): CustomerData {
  return JSON.parse(deps.sealer.open(sealed, CUSTOMER_PURPOSE)) as CustomerData;
}

/** Opens a session (or, for an order_id seen before with the same content, answers the same session again). */
export async function openSession(deps: OperationDeps, public_url: string, input: OpenSessionInput): Promise<OpenSessionOutcome> {
  // The amount (when the merchant set one) is known; the card is not yet.
  const routing = await routePayment(
    deps,
    input.merchant,
    {
      currency: input.currency,
      ...(input.amount_minor !== null ? { amount_minor: input.amount_minor } : {}),
      // A payout session's method is chosen later by the customer.
      ...(isPayout(input.kind) ? { payout_method: 'unknown' as const } : {}),
    },
    input.gateway,
    input.transaction_type === 'authorize' ? 'authorize_capture' : null,
  );
  if (routing.kind === 'refused') return { kind: 'no_gateway', refusal: routing.refusal };
  // Spec §4.3 / §4.5: payment_method is ignored (overridden) when a gateway is given.
  const payment_method = input.gateway !== null ? null : input.payment_method;
  if (payment_method !== null) {
    const allowed = methodsFor(deps, input.merchant, {
      kind: input.kind,
      currency: input.currency,
      gateway_id: input.gateway,
      transaction_type: input.transaction_type,
    });
    if (!allowed.includes(payment_method)) return { kind: 'unknown_method', allowed };
  }
  const now_ms = deps.clock.now_ms();
  const session_id = randomBytes(16).toString('hex');
  const auth_token = authTokenOf(deps, session_id);
  const is_order = input.kind === 'checkout' || input.kind === 'pay_out_order';
  const row: NewCashierSessionRow = {
    session_id,
    merchant_id: input.merchant.merchant_id,
    kind: input.kind,
    identity_kind: input.identity.kind,
    identity_value: input.identity.value,
    api_version: input.api_version,
    order_id: is_order ? input.order_id : null,
    request_fingerprint: input.request_fingerprint,
    auth_token_hash: sha256Hex(auth_token),
    currency: input.currency,
    amount_minor: is_order ? input.amount_minor : null,
    balance_minor: input.kind === 'pay_out' ? input.balance_minor : null,
    pin: input.pin,
    country: input.country,
    customer_sealed: sealCustomer(deps, input.customer),
    locale: input.locale,
    payment_method,
    gateway_id: input.gateway,
    profile: input.profile,
    return_url: input.return_url,
    notification_url: input.notification_url,
    validation_url: input.validation_url,
    variables_json: Object.keys(input.variables).length > 0 ? JSON.stringify(input.variables) : null,
    order_status: is_order ? 'pending' : null,
    transaction_type: input.transaction_type,
    expires_at_ms: now_ms + deps.config.schedules.cashier_session_seconds * 1000,
    closed_at_ms: null,
    attempts: 0,
    claim_until_ms: null,
    created_at_ms: now_ms,
    updated_at_ms: now_ms,
  };
  const login_token = newToken();
  const outcome = await deps.store.transaction(async (tx) => {
    if ((await tx.cashier.insertSession(row)) === 'exists') return 'exists' as const;
    await tx.cashier.insertToken(loginTokenRow(login_token, session_id, row.expires_at_ms, now_ms));
    return 'created' as const;
  });
  if (outcome === 'created') {
    return { kind: 'opened', redirect_url: `${public_url}/cashier/login/${login_token}`, auth_token, replayed: false };
  }
  // The order_id is taken (idempotency on order_id): same content answers the same session again.
  const existing = input.order_id !== null ? await deps.store.cashier.findSessionByOrder(input.merchant.merchant_id, input.order_id) : null;
  if (!existing || existing.request_fingerprint !== input.request_fingerprint || existing.kind !== input.kind)
    return { kind: 'duplicate_order' };
  if (existing.order_status === 'approved') return { kind: 'order_closed', order_status: 'approved' };
  // Rejected (time limit), or past it and not yet closed by due work: a login would be refused.
  if (existing.order_status === 'rejected' || deps.clock.now_ms() >= existing.expires_at_ms)
    return { kind: 'order_closed', order_status: 'expired' };
  // Same session and auth_token; a new one-time login link (the first may have been used already).
  await deps.store.cashier.insertToken(loginTokenRow(login_token, existing.session_id, existing.expires_at_ms, now_ms));
  return {
    kind: 'opened',
    redirect_url: `${public_url}/cashier/login/${login_token}`,
    auth_token: authTokenOf(deps, existing.session_id),
    replayed: true,
  };
}

function loginTokenRow(token: string, session_id: string, expires_at_ms: number, now_ms: number): CashierTokenRow {
  return { token_hash: sha256Hex(token), session_id, kind: 'login', expires_at_ms, used_at_ms: null, created_at_ms: now_ms };
}

export type LoginOutcome =
  | { readonly kind: 'logged_in'; readonly session: CashierSessionRow; readonly browser_token: string; readonly expires_at_ms: number }
  /** Unknown, used or expired link or token; the session when it is known (its language and framing rules). */
  | { readonly kind: 'refused'; readonly session: CashierSessionRow | null };

async function startBrowserSession(deps: OperationDeps, session: CashierSessionRow, now_ms: number): Promise<LoginOutcome> {
  const browser_token = newToken();
  const expires_at_ms = session.expires_at_ms + RESULT_GRACE_MS;
  await deps.store.cashier.insertToken({
    token_hash: sha256Hex(browser_token),
    session_id: session.session_id,
    kind: 'browser',
    expires_at_ms,
    used_at_ms: null,
    created_at_ms: now_ms,
  });
  return { kind: 'logged_in', session, browser_token, expires_at_ms };
}

/** The one-time login token of redirect_url: works once, while the session is open. */
export async function loginWithLink(deps: OperationDeps, token: string): Promise<LoginOutcome> {
  if (token.length === 0 || token.length > 64) return { kind: 'refused', session: null };
  const hash = sha256Hex(token);
  const row = await deps.store.cashier.findToken(hash);
  if (!row || row.kind !== 'login') return { kind: 'refused', session: null };
  const session = await deps.store.cashier.getSession(row.session_id);
  if (!session) return { kind: 'refused', session: null };
  const now_ms = deps.clock.now_ms();
  if (now_ms >= session.expires_at_ms || !(await deps.store.cashier.useToken(hash, now_ms))) return { kind: 'refused', session };
  return startBrowserSession(deps, session, now_ms);
}

/**
 * The auth_token: logs the customer in for the session's 15 minutes, as often as needed, until
 * the session's first transaction. From then on the token is written in clear in that
 * transaction and its notifications (spec §6.2 carries it), so it no longer opens the session.
 */
export async function loginWithAuthToken(deps: OperationDeps, auth_token: string): Promise<LoginOutcome> {
  if (auth_token.length === 0 || auth_token.length > 75) return { kind: 'refused', session: null };
  const session = await deps.store.cashier.findSessionByAuthToken(sha256Hex(auth_token));
  if (!session) return { kind: 'refused', session: null };
  const now_ms = deps.clock.now_ms();
  if (now_ms >= session.expires_at_ms) return { kind: 'refused', session };
  if ((await deps.store.cashier.listTransactions(session.session_id)).length > 0) return { kind: 'refused', session };
  return startBrowserSession(deps, session, now_ms);
}

export interface BrowserSession {
  readonly session: CashierSessionRow;
  readonly browser_token: string;
  readonly csrf: string;
  /** False once the session's 15 minutes are over: only results can be read then. */
  readonly open: boolean;
}

/** The session behind a cookie, or null when the cookie is unknown or expired. */
export async function browserSession(deps: OperationDeps, browser_token: string | null): Promise<BrowserSession | null> {
  if (browser_token === null || browser_token.length === 0 || browser_token.length > 64) return null;
  const row = await deps.store.cashier.findToken(sha256Hex(browser_token));
  const now_ms = deps.clock.now_ms();
  if (!row || row.kind !== 'browser' || now_ms >= row.expires_at_ms) return null;
  const session = await deps.store.cashier.getSession(row.session_id);
  if (!session) return null;
  return { session, browser_token, csrf: csrfTokenOf(deps, browser_token), open: now_ms < session.expires_at_ms };
}

/** The customer fields known for the session: an earlier registration, overridden by what the merchant sent now. */
export async function knownCustomer(deps: OperationDeps, session: CashierSessionRow): Promise<CustomerData> {
  const registered = await deps.store.cashier.getCustomer(session.merchant_id, session.pin);
  const stored = registered ? openCustomer(deps, registered.profile_sealed) : {};
  const sent = openCustomer(deps, session.customer_sealed);
  const merged: CustomerData = { ...stored };
  for (const [key, value] of Object.entries(sent)) if (typeof value === 'string' && value !== '') merged[key as CustomerField] = value;
  return merged;
}

export function missingCustomerFields(customer: CustomerData): CustomerField[] {
  return REQUIRED_CUSTOMER_FIELDS.filter((field) => typeof customer[field] !== 'string' || customer[field] === '');
}

/** Keeps what the customer entered in the registration form, for this and later sessions of the same pin. */
export async function saveRegistration(deps: OperationDeps, session: CashierSessionRow, entered: CustomerData): Promise<void> {
  const now_ms = deps.clock.now_ms();
  const registered = await deps.store.cashier.getCustomer(session.merchant_id, session.pin);
  const previous = registered ? openCustomer(deps, registered.profile_sealed) : {};
  await deps.store.cashier.upsertCustomer({
    merchant_id: session.merchant_id,
    pin: session.pin,
    profile_sealed: sealCustomer(deps, { ...previous, ...entered }),
    created_at_ms: registered?.created_at_ms ?? now_ms,
    updated_at_ms: now_ms,
  });
}
