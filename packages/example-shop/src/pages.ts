// The example shop's HTML: plain server-rendered pages with no script (a customer's browser needs
// none), every value escaped. Kept apart from shop.ts so that the payment code there reads alone.
import type { Order, Product } from './shop.js';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escape(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

export function money(amount_minor: number, currency: string): string {
  return `${(amount_minor / 100).toFixed(2)} ${escape(currency)}`;
}

function page(title: string, body: string, refresh_s?: number): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
${refresh_s === undefined ? '' : `<meta http-equiv="refresh" content="${refresh_s}">`}
<title>${escape(title)} · Example shop</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
header a{color:inherit;text-decoration:none;font-weight:600}
.product{display:flex;justify-content:space-between;align-items:center;border:1px solid #ddd;border-radius:8px;padding:1rem;margin:1rem 0}
button{font:inherit;padding:.6rem 1.4rem;border:0;border-radius:6px;background:#1f5fbf;color:#fff;cursor:pointer;min-height:44px}
button.secondary{background:#fff;color:#1f5fbf;border:1px solid #1f5fbf}
.buy{display:flex;gap:1rem;align-items:center}.actions{display:flex;gap:1rem}
.status{font-weight:600}.paid{color:#11743a}.waiting{color:#8a6100}.failed{color:#b3261e}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eee}
</style></head>
<body><header><a href="/">Example shop</a> · <a href="/orders">Orders</a></header><main>
${body}
</main></body></html>`;
}

export function catalogPage(products: readonly Product[]): string {
  const items = products
    .map(
      (product) => `<section class="product">
  <div><h2>${escape(product.name)}</h2><p>${money(product.amount_minor, product.currency)}</p></div>
  <form method="post" action="/buy" class="buy"><input type="hidden" name="product" value="${escape(product.id)}">
    <label><input type="checkbox" name="capture" value="on_shipping"> Capture on shipping</label>
    <button type="submit">Buy</button></form>
</section>`,
    )
    .join('\n');
  return page(
    'Shop',
    `<h1>Example shop</h1>\n<p>Paid through paygate's hosted checkout (sandbox). With <em>Capture on shipping</em> the card is only authorized at checkout, and charged when the order ships.</p>\n${items}`,
  );
}

const STATUS_TEXT: Readonly<Record<Order['status'], { css: string; text: string }>> = {
  awaiting_payment: { css: 'waiting', text: 'Waiting for the payment' },
  authorized: { css: 'waiting', text: 'Authorized' },
  paid: { css: 'paid', text: 'Paid' },
  cancelled: { css: 'failed', text: 'Cancelled' },
};

/** What the order page says under its status, and the staff's buttons of an authorized order. */
function orderDetails(order: Order): string {
  const card = order.card ? `, card ${escape(order.card)}` : '';
  switch (order.status) {
    case 'paid':
      return `<p>Payment confirmed by paygate's notification: transaction ${escape(order.paid_trace_id ?? '')}${card}.</p>${
        order.capture === 'on_shipping' ? '<p>Shipped: the authorized payment was captured.</p>' : ''
      }`;
    case 'authorized':
      if (order.shipped) return "<p>Shipped: the payment is being captured; the order is paid once paygate's notification confirms it.</p>";
      return `<p>The payment is authorized (transaction ${escape(order.authorized_trace_id ?? '')}${card}): the funds are held and taken when the order ships.</p>
<div class="actions">
<form method="post" action="/orders/${escape(order.order_id)}/ship"><button type="submit">Ship</button></form>
<form method="post" action="/orders/${escape(order.order_id)}/cancel"><button type="submit" class="secondary">Cancel order</button></form>
</div>`;
    case 'cancelled':
      return '<p>The authorization was voided: the held funds are released and nothing was charged.</p>';
    case 'awaiting_payment':
      return order.capture === 'on_shipping'
        ? "<p>The payment is authorized once paygate's notification confirms it, and captured when the order ships; this page refreshes itself.</p>"
        : "<p>The order is paid once paygate's notification confirms it; this page refreshes itself.</p>";
  }
}

export function orderPage(order: Order): string {
  const status = STATUS_TEXT[order.status];
  const details = orderDetails(order);
  // Refreshes itself while a notification is awaited (not while it waits for Ship, whose form must stay put).
  const waiting = order.status === 'awaiting_payment' || (order.status === 'authorized' && order.shipped);
  const attempts =
    order.notifications.length === 0
      ? ''
      : `<h2>Notifications received</h2>
<table><tr><th>Transaction</th><th>Type</th><th>Method</th><th>Status</th><th>Amount</th></tr>
${order.notifications.map((n) => `<tr><td>${escape(n.trace_id)}</td><td>${escape(n.transaction_type)}</td><td>${escape(n.payment_method)}</td><td>${escape(n.transaction_status)}</td><td>${money(n.amount, n.currency)}</td></tr>`).join('\n')}
</table>`;
  return page(
    `Order ${order.order_id}`,
    `<h1>Order ${escape(order.order_id)}</h1>
<p>${escape(order.product.name)}: ${money(order.amount_minor, order.currency)}</p>
<p class="status ${status.css}" id="order-status">${status.text}</p>
${details}
${attempts}`,
    waiting ? 2 : undefined,
  );
}

export function ordersPage(orders: readonly Order[]): string {
  const rows = orders.map(
    (order) =>
      `<tr><td><a href="/orders/${escape(order.order_id)}">${escape(order.order_id)}</a></td>` +
      `<td>${escape(order.product.name)}</td><td>${money(order.amount_minor, order.currency)}</td><td class="status ${STATUS_TEXT[order.status].css}">${STATUS_TEXT[order.status].text}</td></tr>`,
  );
  return page(
    'Orders',
    `<h1>Orders</h1>\n${
      orders.length === 0
        ? '<p>No orders yet.</p>'
        : `<table><tr><th>Order</th><th>Product</th><th>Amount</th><th>Status</th></tr>\n${rows.join('\n')}\n</table>`
    }`,
  );
}

export function problemPage(title: string, text: string): string {
  return page(title, `<h1>${escape(title)}</h1>\n<p>${escape(text)}</p>\n<p><a href="/">Back to the shop</a></p>`);
}
