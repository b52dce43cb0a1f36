// The buyer's approval page of the fake PayPal (fake.ts serves it at the order's approval link,
// /checkoutnow?token=ORDER_ID): what PayPal's own page is to a buyer, reduced to the two choices a
// test makes in Chromium, "Approve" (the order becomes APPROVED and the buyer is sent to the
// order's return_url with token and PayerID) and "Cancel" (sent to cancel_url with token; the
// order stays as it was, as at PayPal). Plain HTML, no script.
import { escapeHtml, htmlPage } from '../fake-processor/html.js';

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:0;padding:0 16px;background:#f5f7fa;color:#111}' +
  'main{max-width:420px;margin:48px auto;background:#fff;border-radius:8px;padding:24px;box-shadow:0 1px 4px rgba(0,0,0,.12)}' +
  'h1{font-size:1.25rem;margin:0 0 8px}p{margin:0 0 16px;line-height:1.4}form{display:inline}' +
  'button{padding:12px 20px;font-size:1rem;border:0;border-radius:20px;margin-right:8px;cursor:pointer}' +
  '#approve{background:#ffc439;color:#111}#cancel{background:#e5e7eb;color:#111}';

export function approvalPage(order_id: string, amount: string, currency: string): string {
  const token = encodeURIComponent(order_id);
  return htmlPage(
    'PayPal Checkout (fake)',
    STYLE,
    '<h1>Pay with PayPal</h1>' +
      `<p>Order <span id="order">${escapeHtml(order_id)}</span>: <strong>${escapeHtml(amount)} ${escapeHtml(currency)}</strong></p>` +
      `<form method="post" action="/checkoutnow/approve?token=${token}"><button id="approve" type="submit">Approve</button></form>` +
      `<form method="post" action="/checkoutnow/cancel?token=${token}"><button id="cancel" type="submit">Cancel</button></form>`,
  );
}

export function noOrderPage(): string {
  return htmlPage('PayPal Checkout (fake)', STYLE, '<h1>This order is no longer available</h1>');
}
