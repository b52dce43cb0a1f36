// The example shop: what a merchant's site does to take a payment through paygate's hosted checkout
// with @paygate/sdk, and nothing more. "Buy" creates an order and opens a checkout for it
// (initCheckout), the customer pays on paygate's page, and the order becomes paid when paygate's
// signed notification says so: never because the customer came back to the return URL, which
// anyone can open. With "Capture on shipping" the checkout only authorizes the payment (decisions
// §16): the funds are held, and the order page's "Ship" captures them ("Cancel order" voids them),
// so a customer is charged only for what leaves the warehouse. Orders live in memory (a real shop
// has a database); the server is plain node:http so that every step stays visible.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createWebhookHandler,
  GatewayUnreachableError,
  PaygateClient,
  type SubscriptionEventNotification,
  type TransactionNotification,
} from '@paygate/sdk';
import { catalogPage, orderPage, ordersPage, problemPage } from './pages.js';

export interface Product {
  readonly id: string;
  readonly name: string;
  readonly amount_minor: number;
  readonly currency: string;
}

/** When the payment is taken: at checkout (a sale), or when the order ships (an authorization, captured then). */
export type CaptureMode = 'at_checkout' | 'on_shipping';

export interface Order {
  readonly order_id: string;
  readonly product: Product;
  readonly amount_minor: number;
  readonly currency: string;
  readonly capture: CaptureMode;
  /** authorized: the funds are held until Ship (capture) or Cancel (void); cancelled: voided, nothing taken. */
  status: 'awaiting_payment' | 'authorized' | 'paid' | 'cancelled';
  /** Set from the notification of the authorization (capture on shipping), and only from there: what Ship captures. */
  authorized_trace_id: number | null;
  /** Set when paygate answered the capture of Ship; the order is paid once its notification comes. */
  shipped: boolean;
  /** Set from the notification of the approved sale or captured authorization, and only from there. */
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

/** A message paygate sent the shop, kept once its signature verified (the SDK's handler checks it first). */
export type ReceivedMessage =
  | { readonly kind: 'transaction'; readonly notification: TransactionNotification; readonly refused: string | null }
  | { readonly kind: 'subscription_event'; readonly event: SubscriptionEventNotification; readonly refused: string | null };

export interface RunningShop {
  readonly url: string;
  orders(): readonly Order[];
  /** Every verified notification and subscription event, oldest first, with the shop's refusal if it refused it (an unknown order). */
  received(): readonly ReceivedMessage[];
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

/** Paths the shop answers, besides /orders/<order_id> (and its /ship and /cancel). */
export const NOTIFICATION_PATH = '/paygate/notifications';
/** The transaction types that take the customer's money for an order: a sale, or an authorization once captured. */
const PAYMENT_TYPES: ReadonlySet<string> = new Set(['sale', 'authorize']);
const FORM_MAX_BYTES = 4 * 1024;

export async function startShop(options: ShopOptions): Promise<RunningShop> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const products = options.products ?? PRODUCTS;
  const orders = new Map<string, Order>();
  const received: ReceivedMessage[] = [];
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
      const verdict = onTransaction(notification);
      received.push({ kind: 'transaction', notification, refused: verdict?.refuse ?? null });
      return verdict;
    },
    // The shop sells no subscriptions: an event of one (a sandbox trigger's) is refused, and kept.
    on_subscription_event(event) {
      const refuse = 'This shop sells no subscriptions';
      received.push({ kind: 'subscription_event', event, refused: refuse });
      return { refuse };
    },
    on_error: (error) => log(`notification not handled: ${error.message}`),
  });

  /** A notification of an order: the order's status follows it; one of an order the shop never made is refused. */
  function onTransaction(notification: TransactionNotification): { refuse: string } | undefined {
    const order = orders.get(notification.order_id);
    if (!order) return { refuse: 'Unknown order' };
    const known = order.notifications.some(
      (n) => n.trace_id === notification.trace_id && n.transaction_status === notification.transaction_status,
    );
    if (!known) order.notifications.push(notification);
    if (!PAYMENT_TYPES.has(notification.transaction_type)) return undefined;
    const status = notification.transaction_status;
    if (status === 'authorized' && order.capture === 'on_shipping' && order.status === 'awaiting_payment') {
      // The funds are held, not taken: the order waits for Ship.
      if (!amountMatches(order, notification)) return { refuse: 'Amount does not match the order' };
      order.status = 'authorized';
      order.authorized_trace_id = notification.trace_id;
      order.card = notification.card_number ?? null;
      log(`order ${order.order_id} authorized (transaction ${notification.trace_id})`);
    } else if (status === 'approved' && (order.status === 'awaiting_payment' || order.status === 'authorized')) {
      // A sale approved, or the authorization captured by Ship (its amount is what was captured).
      if (!amountMatches(order, notification)) return { refuse: 'Amount does not match the order' };
      order.status = 'paid';
      order.paid_trace_id = notification.trace_id;
      order.card = notification.card_number ?? order.card;
      log(`order ${order.order_id} paid (transaction ${notification.trace_id})`);
    } else if (status === 'cancelled' && order.status === 'authorized' && notification.trace_id === order.authorized_trace_id) {
      // Voided: by Cancel order, in paygate's back office, or at the authorization's expiry.
      order.status = 'cancelled';
      log(`order ${order.order_id} cancelled (transaction ${notification.trace_id} voided)`);
    }
    return undefined;
  }

  /** What was processed must be what the order costs (spec §6.1: read charge_amount and charge_currency). */
  function amountMatches(order: Order, notification: TransactionNotification): boolean {
    if (notification.charge_amount === order.amount_minor && notification.charge_currency === order.currency) return true;
    log(
      `order ${order.order_id}: ${notification.transaction_status} ${notification.charge_amount} ${notification.charge_currency}, expected ${order.amount_minor} ${order.currency}`,
    );
    return false;
  }

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
      capture: form.get('capture') === 'on_shipping' ? 'on_shipping' : 'at_checkout',
      status: 'awaiting_payment',
      authorized_trace_id: null,
      shipped: false,
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
        // Capture on shipping: the checkout authorizes; Ship captures.
        ...(order.capture === 'on_shipping' ? { transaction_type: 'authorize' as const } : {}),
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

  /**
   * Ship (capture the held funds) or Cancel order (void them), for an order whose authorization was
   * notified. paygate's answer is the authorization itself; the order is paid (or cancelled) when
   * the notification of the change comes, as every other status of the shop.
   */
  async function act(order: Order, action: 'ship' | 'cancel', response: http.ServerResponse): Promise<void> {
    if (order.status !== 'authorized' || order.authorized_trace_id === null || order.shipped) {
      send(
        response,
        409,
        problemPage('Not possible now', 'Only an order whose payment is authorized and not yet shipped can be shipped or cancelled.'),
      );
      return;
    }
    const reference_id = order.authorized_trace_id;
    try {
      const outcome = action === 'ship' ? await paygate.capture({ reference_id }) : await paygate.void({ reference_id });
      if (outcome.kind === 'refused') {
        log(`${action} of ${order.order_id} refused: ${outcome.status} ${outcome.description}`);
        send(response, 409, problemPage(action === 'ship' ? 'Payment not captured' : 'Order not cancelled', outcome.description));
        return;
      }
      if (action === 'ship') order.shipped = true;
      log(`order ${order.order_id}: ${action === 'ship' ? 'capture' : 'void'} answered ${outcome.answer.transaction_status}`);
      response.writeHead(303, { location: `/orders/${order.order_id}` }).end();
    } catch (error) {
      log(`${action} of ${order.order_id} failed: ${error instanceof Error ? error.message : String(error)}`);
      send(response, 502, problemPage('Payment service unavailable', 'The payment service did not answer; try again in a moment.'));
    }
  }

  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    const route = async () => {
      if (request.method === 'POST' && path === NOTIFICATION_PATH) return notifications.node(request, response);
      if (request.method === 'POST' && path === '/buy') return buy(request, response);
      const action = /^\/orders\/([A-Za-z0-9-]{1,50})\/(ship|cancel)$/.exec(path);
      // Staff's buttons on the order page (a real shop keeps them behind its staff's sign-in).
      if (request.method === 'POST' && action) {
        await readForm(request);
        const order = orders.get(action[1]!);
        if (!order) return send(response, 404, problemPage('Not found', 'There is no such order.'));
        return act(order, action[2] as 'ship' | 'cancel', response);
      }
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
    received: () => [...received],
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
