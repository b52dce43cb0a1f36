// A merchant's client for the v1.3 subscription API as the merchant's own code would write it:
// Gt-Authentication on the request, checked on the answer (decisions.md §2).
import { createHash } from 'node:crypto';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { nowSeconds, postSigned } from './client.js';
import { VISA } from './bodies.js';

export function sha384(text: string): string {
  return createHash('sha384').update(text, 'utf8').digest('hex');
}

/** Request header, written from decisions.md §2, independent of the implementation. */
export function gtRequestHeader(merchant_id: string, application_key: string, timestamp: number | string, secret: string): string {
  return sha384(`${merchant_id}${application_key}${timestamp}${secret}`);
}

/**
 * The time requests are stamped with. The sandbox clock (POST /sandbox/clock) moves the
 * gateway's "now", and the 60-second window follows it: tests that move it stamp with it.
 */
let clockSeconds: () => number = () => nowSeconds();

export function useClock(seconds: (() => number) | null): void {
  clockSeconds = seconds ?? (() => nowSeconds());
}

export function stamp(): number {
  return clockSeconds();
}

export interface V13Answer {
  readonly http_status: number;
  readonly body: Record<string, unknown>;
  /** The answer's Gt-Authentication header, or null. */
  readonly header: string | null;
}

export interface V13Options {
  readonly secret?: string;
  readonly timestamp?: number;
  /** Replaces the computed header; null sends none. */
  readonly header?: string | null;
  /** Leave out merchant_id / application_key / timestamp / version fields the test wants absent. */
  readonly omit?: readonly string[];
  /** Also send Gt-Body-Signature = sha384hex(method + path + body + secret) (docs/security.md §3); a string sends that value. */
  readonly body_signature?: boolean | string;
}

/** Gt-Body-Signature, written from docs/security.md §3: the method, the path, the body (a GET: the query string) and the secret. */
export function gtBodySignature(method: string, path: string, body: string, secret: string): string {
  return sha384(`${method}${path}${body}${secret}`);
}

/**
 * Calls a v1.3 endpoint: JSON body for POST/PUT, query string for GET. The answer's header is
 * verified whenever one is present (sha384hex(status + timestamp + secret)).
 */
export async function v13(
  base_url: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  merchant: Pick<CreatedMerchant, 'merchant_id' | 'application_key' | 'secret'>,
  fields: Record<string, unknown> = {},
  options: V13Options = {},
): Promise<V13Answer> {
  const secret = options.secret ?? merchant.secret;
  const timestamp = options.timestamp ?? clockSeconds();
  const message: Record<string, unknown> = {
    merchant_id: merchant.merchant_id,
    application_key: merchant.application_key,
    timestamp,
    version: 'v1.3',
    ...fields,
  };
  for (const key of options.omit ?? []) delete message[key];
  const header =
    options.header === undefined
      ? gtRequestHeader(String(message.merchant_id ?? ''), String(message.application_key ?? ''), String(message.timestamp ?? ''), secret)
      : options.header;
  const headers: Record<string, string> = {};
  if (header !== null) headers['gt-authentication'] = header;
  let url = `${base_url}${path}`;
  let body: string | undefined;
  if (method === 'GET') {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(message)) if (value !== undefined && value !== null) query.set(key, String(value));
    url += `?${query.toString()}`;
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(message);
  }
  if (options.body_signature === true) {
    headers['gt-body-signature'] = gtBodySignature(method, path, method === 'GET' ? url.slice(url.indexOf('?') + 1) : (body ?? ''), secret);
  } else if (typeof options.body_signature === 'string') {
    headers['gt-body-signature'] = options.body_signature;
  }
  const response = await fetch(url, { method, headers, body: body ?? null });
  const text = await response.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  const answer_header = response.headers.get('gt-authentication');
  if (answer_header !== null && answer_header !== sha384(`${String(parsed.status)}${String(parsed.timestamp)}${secret}`)) {
    throw new Error(`answer Gt-Authentication does not verify: ${text}`);
  }
  return { http_status: response.status, body: parsed, header: answer_header };
}

/** A card_token of the merchant's, through POST /api/tokenize. */
export async function tokenize(
  base_url: string,
  merchant: CreatedMerchant,
  pin = 'cust-42',
  card_number = VISA,
  card_exp = '12/2035',
): Promise<string> {
  const answer = await postSigned(
    base_url,
    '/api/tokenize',
    {
      merchant_id: merchant.merchant_id,
      application_key: merchant.application_key,
      pin,
      card_number,
      card_exp,
      timestamp: clockSeconds(),
      version: '1.2',
    },
    merchant.secret,
  );
  if (answer.body.status !== 0) throw new Error(`tokenize failed: ${JSON.stringify(answer.body)}`);
  return answer.body.card_token as string;
}

export function planBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Gold monthly',
    description: 'Everything, every month',
    prices: [
      { amount: 1999, currency: 'USD' },
      { amount: 1799, currency: 'EUR' },
    ],
    billing_cycle: 'monthly',
    ...overrides,
  };
}

/** Creates a plan and returns its answer body (status 0 checked). */
export async function createPlanVia(
  base_url: string,
  merchant: CreatedMerchant,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const answer = await v13(base_url, 'POST', '/api/v1.3/subscription-plan', merchant, planBody(overrides));
  if (answer.body.status !== 0) throw new Error(`plan not created: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export function priceIdOf(plan: Record<string, unknown>, currency = 'USD'): string {
  const prices = plan.prices as { price_id: string; currency: string }[];
  const price = prices.find((p) => p.currency === currency);
  if (!price) throw new Error(`plan has no ${currency} price`);
  return price.price_id;
}

/** Creates a subscription and returns its answer body (status 0 checked). */
export async function subscribeVia(
  base_url: string,
  merchant: CreatedMerchant,
  plan: Record<string, unknown>,
  card_token: string,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const answer = await v13(base_url, 'POST', '/api/v1.3/subscription', merchant, {
    plan_id: plan.plan_id,
    price_id: priceIdOf(plan),
    cid: 'cust-42',
    card_token,
    notification_url: 'https://merchant.example/subs',
    ...overrides,
  });
  if (answer.body.status !== 0) throw new Error(`subscription not created: ${JSON.stringify(answer.body)}`);
  return answer.body;
}
