// The example shop: what a merchant's site does to take a payment through paygate's hosted checkout
// with @paygate/sdk, and nothing more. "Buy" creates an order and opens a checkout for it
// (initCheckout), the customer pays on paygate's page, and the order becomes paid when paygate's
// signed notification says so: never because the customer came back to the return URL, which
// anyone can open. Orders live in memory (a real shop has a database); the server is plain
// node:http so that every step stays visible.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookHandler, GatewayUnreachableError, PaygateClient, type TransactionNotification } from '@paygate/sdk';
import { catalogPage, orderPage, ordersPage, problemPage } from './pages.js';

export interface Product {
  readonly id: string;
  readonly name: string;
  readonly amount_minor: number;
  readonly currency: string;
}

export interface Order {
  readonly order_id: string;
  readonly product: Product;
  readonly amount_minor: number;
  readonly currency: string;
  status: 'awaiting_payment' | 'paid';
  /** Set from the notification of the approved sale, and only from there. */
  paid_trace_id: number | null;
  card: string | null;
  /** Every notification of the order, once each (a resend is the same message again). */
  readonly notifications: TransactionNotification[];
}

export interface ShopOptions {
  readonly paygate: {
    readonly base_url: string;
    readonly merchant_id: string;
    readonly secret: string;
    /** init-checkout identifies the shop by its frontend (spec §4.4). */
    readonly frontend: string;
  };
  /** Where the shop listens; port 0 picks a free one. Defaults: 127.0.0.1, 3000. */
  readonly host?: string;
  readonly port?: number;
  /** How the customer and paygate reach the shop (return and notification URLs); default http://host:port. */
  readonly public_url?: string;
  readonly products?: readonly Product[];
  readonly log?: (line: string) => void;
}

export interface RunningShop {
  readonly url: string;
  orders(): readonly Order[];
  close(): Promise<void>;
}

export const PRODUCTS: readonly Product[] = [
  { id: 'mug', name: 'Paygate mug', amount_minor: 1250, currency: 'USD' },
  { id: 'tshirt', name: 'Sandbox T-shirt', amount_minor: 1999, currency: 'USD' },
];

/**
 * The customer signed in to the shop. A real shop sends what it knows of its own customer; paygate's
 * checkout asks (once per customer) for whatever is missing.
 */
export const DEMO_CUSTOMER = {
  pin: 'customer-1001',
  first_name: 'Jane',
  last_name: 'Doe',
  email: 'jane@example.com',
  phone: '14155550123',
  dob: '1990-04-12',
  address: '1 Market Street',
  city: 'San Francisco',
  state: 'CA',
  zip: '94105',
  country: 'US',
} as const;

/** Paths the shop answers, besides /orders/<order_id>. */
export const NOTIFICATION_PATH = '/paygate/notifications';
const FORM_MAX_BYTES = 4 * 1024;

export async function startShop(options: ShopOptions): Promise<RunningShop> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const products = options.products ?? PRODUCTS;
  const orders = new Map<string, Order>();
  const paygate = new PaygateClient({
    base_url: options.paygate.base_url,
    merchant_id: options.paygate.merchant_id,
    secret: options.paygate.secret,
    frontend: options.paygate.frontend,
    timeout_ms: 15_000,
    retries: 2,
  });
  let public_url = options.public_url ?? '';

  // paygate's notifications: verified by the SDK before this code sees them, answered with a signed reply.
  const notifications = createWebhookHandler({
    secret: options.paygate.secret,
    on_transaction(notification) {
      const order = orders.get(notification.order_id);
      if (!order) return { refuse: 'Unknown order' };
      const known = order.notifications.some(
        (n) => n.trace_id === notification.trace_id && n.transaction_status === notification.transaction_status,
      );
      if (!known) order.notifications.push(notification);
      if (
        notification.transaction_type === 'sale' &&
        notification.transaction_status === 'approved' &&
        order.status === 'awaiting_payment'
      ) {
        // What was processed must be what the order costs (spec §6.1: read charge_amount and charge_currency).
        if (notification.charge_amount !== order.amount_minor || notification.charge_currency !== order.currency) {
          log(
            `order ${order.order_id}: paid ${notification.charge_amount} ${notification.charge_currency}, expected ${order.amount_minor} ${order.currency}`,
          );
          return { refuse: 'Amount does not match the order' };
        }
        order.status = 'paid';
        order.paid_trace_id = notification.trace_id;
        order.card = notification.card_number ?? null;
        log(`order ${order.order_id} paid (transaction ${notification.trace_id})`);
      }
      return undefined;
    },
    on_error: (error) => log(`notification not handled: ${error.message}`),
  });

  async function buy(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readForm(request));
    const product = products.find((p) => p.id === form.get('product'));
    if (!product) {
      send(response, 404, problemPage('No such product', 'This product is not sold here.'));
      return;
    }
    const order: Order = {
      order_id: `shop-${randomBytes(6).toString('hex')}`,
      product,
      amount_minor: product.amount_minor,
      currency: product.currency,
      status: 'awaiting_payment',
      paid_trace_id: null,
      card: null,
      notifications: [],
    };
    orders.set(order.order_id, order);
    try {
      const checkout = await paygate.initCheckout({
        order_id: order.order_id,
        amount: order.amount_minor,
        currency: order.currency,
        ...DEMO_CUSTOMER,
        return_url: `${public_url}/orders/${order.order_id}`,
        notification_url: `${public_url}${NOTIFICATION_PATH}`,
      });
      if (checkout.kind === 'refused') {
        log(`checkout refused for ${order.order_id}: ${checkout.status} ${checkout.description}`);
        send(response, 502, problemPage('Payment not available', checkout.description));
        return;
      }
      // To paygate's hosted checkout page; the customer comes back to return_url.
      response.writeHead(303, { location: checkout.answer.redirect_url! }).end();
    } catch (error) {
      log(`checkout failed for ${order.order_id}: ${error instanceof Error ? error.message : String(error)}`);
      const text =
        error instanceof GatewayUnreachableError
          ? 'The payment service cannot be reached; try again in a moment.'
          : 'The payment could not be started.';
      send(response, 502, problemPage('Payment not available', text));
    }
  }

  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    const route = async () => {
      if (request.method === 'POST' && path === NOTIFICATION_PATH) return notifications.node(request, response);
      if (request.method === 'POST' && path === '/buy') return buy(request, response);
      if (request.method !== 'GET') return send(response, 405, problemPage('Not allowed', 'This page is not sent to.'));
      if (path === '/') return send(response, 200, catalogPage(products));
      if (path === '/orders') return send(response, 200, ordersPage([...orders.values()].reverse()));
      if (path === '/healthz') return send(response, 200, 'ok', 'text/plain');
      const order = /^\/orders\/([A-Za-z0-9-]{1,50})$/.exec(path);
      const found = order ? orders.get(order[1]!) : undefined;
      if (found) return send(response, 200, orderPage(found));
      return send(response, 404, problemPage('Not found', 'There is nothing at this address.'));
    };
    route().catch((error: unknown) => {
      log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!response.headersSent) send(response, 500, problemPage('Something went wrong', 'Please try again.'));
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  public_url = (options.public_url ?? url).replace(/\/+$/, '');
  return {
    url,
    orders: () => [...orders.values()],
    async close() {
      paygate.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(response: http.ServerResponse, status: number, body: string, type = 'text/html; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
}

/** The Buy form's body, within FORM_MAX_BYTES. */
async function readForm(request: http.IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) {
    text += String(chunk);
    if (text.length > FORM_MAX_BYTES) throw new Error('form too large');
  }
  return text;
}
