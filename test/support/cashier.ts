// Cashier session bodies a merchant would send (spec §4.3-4.7, docs/cashier.md), the gateway and
// shop a test block runs against, and a customer driven with plain HTTP (cookie and CSRF token
// handled as a browser would), for API tests.
import { afterAll, beforeAll } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { orderId } from './bodies.js';
import { nowSeconds, postSigned, type Answer } from './client.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from './merchant-receiver.js';
import { signedReply } from './notification-merchant.js';
import type { StoreKind } from './stores.js';

export const CUSTOMER_FIELDS = {
  first_name: 'Jane',
  last_name: 'Doe',
  dob: '1990-04-12',
  email: 'jane@example.com',
  phone: 441234567890,
  address: '1 Main Street',
  city: 'London',
  zip: 'SW1A 1AA',
  requester_ip: '203.0.113.7',
};

/** The gateway's own clock, in seconds: tests that move the sandbox clock sign with it. */
export function gatewayNow(gw: TestGateway): number {
  return Math.floor(gw.gateway.clock.now_ms() / 1000);
}

export interface GatewayAndShop {
  readonly gw: TestGateway;
  readonly shop: MerchantReceiver;
}

/**
 * For the enclosing describe block: a gateway on `kind` and the merchant's shop, started before
 * its tests and closed after them; `started` hands both to the block's variables. The shop
 * accepts, signed with status 0, the validation requests and notifications `accepts` names.
 */
export function withGatewayAndShop(
  kind: StoreKind,
  accepts: readonly ('validation' | 'notification')[],
  started: (both: GatewayAndShop) => void,
): void {
  let both: Partial<GatewayAndShop> = {};
  beforeAll(async () => {
    const [gw, shop] = await Promise.all([startTestGateway(kind), startMerchantReceiver()]);
    both = { gw, shop };
    started({ gw, shop });
    if (accepts.includes('validation')) shop.setReply('/validate', () => signedReply(gw.merchant.secret, 0, 'Accepted'));
    if (accepts.includes('notification')) shop.setReply('/notify', () => signedReply(gw.merchant.secret, 0));
  });
  afterAll(async () => {
    await Promise.all([both.gw?.close(), both.shop?.close()]);
  });
}

/** How every session body ends: the shop's URLs (validation_url if the call validates), the customer, a fresh timestamp. */
function shopAndCustomer(receiver_url: string, validates: boolean, version: '1.1' | '1.2'): Record<string, unknown> {
  return {
    return_url: `${receiver_url}/return`,
    ...(validates ? { validation_url: `${receiver_url}/validate` } : {}),
    notification_url: `${receiver_url}/notify`,
    ...CUSTOMER_FIELDS,
    timestamp: nowSeconds(),
    version,
  };
}

/**
 * Pay-in and checkout bodies preselect the card (payment_method), so the cashier opens on the card
 * form; a test of the choice of method passes `payment_method: undefined`.
 */
export function initPayIn(
  merchant: CreatedMerchant,
  receiver_url: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    application_key: merchant.application_key,
    currency: 'USD',
    pin: `cust-${orderId('p')}`,
    country: 'GB',
    payment_method: 'card',
    ...shopAndCustomer(receiver_url, true, '1.2'),
    ...overrides,
  };
}

export function initCheckout(
  merchant: CreatedMerchant,
  receiver_url: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    frontend: merchant.frontend,
    order_id: orderId('checkout'),
    amount: 1999,
    currency: 'USD',
    pin: `cust-${orderId('c')}`,
    country: 'GB',
    payment_method: 'card',
    ...shopAndCustomer(receiver_url, false, '1.1'),
    ...overrides,
  };
}

export function initPayOut(
  merchant: CreatedMerchant,
  receiver_url: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    frontend: merchant.frontend,
    currency: 'USD',
    pin: `cust-${orderId('o')}`,
    country: 'GB',
    balance: 10_000,
    ...shopAndCustomer(receiver_url, true, '1.1'),
    ...overrides,
  };
}

export function initPayOutOrder(
  merchant: CreatedMerchant,
  receiver_url: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    frontend: merchant.frontend,
    order_id: orderId('payout-order'),
    amount: 2500,
    currency: 'USD',
    pin: `cust-${orderId('q')}`,
    country: 'GB',
    ...shopAndCustomer(receiver_url, false, '1.1'),
    ...overrides,
  };
}

export function findOrderBody(
  merchant: CreatedMerchant,
  order_id: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    frontend: merchant.frontend,
    order_id,
    timestamp: nowSeconds(),
    version: '1.1',
    ...overrides,
  };
}

export async function openSession(gw: TestGateway, path: string, body: Record<string, unknown>, merchant = gw.merchant): Promise<Answer> {
  return postSigned(gw.url, path, body, merchant.secret);
}

export interface PageAnswer {
  readonly status: number;
  readonly location: string | null;
  readonly text: string;
  readonly headers: Headers;
}

/** A customer in a browser without JavaScript: follows redirects on the gateway, keeps the cookie, posts forms with their CSRF token. */
export class CashierCustomer {
  cookie: string | null = null;
  constructor(private readonly base_url: string) {}

  private async request(url: string, init: RequestInit = {}): Promise<PageAnswer> {
    const headers = new Headers(init.headers);
    if (this.cookie) headers.set('cookie', this.cookie);
    const response = await fetch(url.startsWith('http') ? url : `${this.base_url}${url}`, { ...init, headers, redirect: 'manual' });
    const set_cookie = response.headers.get('set-cookie');
    if (set_cookie) this.cookie = set_cookie.split(';')[0]!;
    return { status: response.status, location: response.headers.get('location'), text: await response.text(), headers: response.headers };
  }

  /** GET, following redirects that stay on the gateway (at most 5). */
  async get(url: string): Promise<PageAnswer> {
    let answer = await this.request(url);
    for (let i = 0; i < 5 && answer.status === 303 && answer.location; i += 1) answer = await this.request(answer.location);
    return answer;
  }

  csrfOf(page: string): string {
    const match = /name="csrf" value="([^"]+)"/.exec(page);
    if (!match) throw new Error(`no CSRF token in the page: ${page.slice(0, 500)}`);
    return match[1]!;
  }

  /** Posts a form (with the CSRF token of `page`) and follows the redirect unless told not to. */
  async post(url: string, fields: Record<string, string>, page: string | null, follow = true): Promise<PageAnswer> {
    const body = new URLSearchParams({ ...(page ? { csrf: this.csrfOf(page) } : {}), ...fields });
    const answer = await this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
    if (!follow || answer.status !== 303 || !answer.location) return answer;
    return this.get(answer.location);
  }

  /** Logs in with the redirect_url and returns the cashier page. */
  async login(redirect_url: string): Promise<PageAnswer> {
    return this.get(redirect_url);
  }

  /** A card payment from the cashier page (`page` holds the form). */
  async payByCard(
    page: string,
    card: { card_number?: string; card_exp?: string; cvv?: string; amount?: string } = {},
  ): Promise<PageAnswer> {
    const fields: Record<string, string> = {
      method: 'card',
      card_number: card.card_number ?? '4111111111111111',
      card_exp: card.card_exp ?? '12/35',
      cvv: card.cvv ?? '568',
    };
    if (card.amount !== undefined) fields.amount = card.amount;
    return this.post('/cashier/pay', fields, page, false);
  }
}

/** Visible text of an HTML page (tags dropped, entities for & < > " ' decoded), for assertions. */
export function textOf(page: string): string {
  return page
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
