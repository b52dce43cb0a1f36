// The sandbox 3-D Secure page: what the card issuer's challenge looks like to the customer.
import { formatAmount } from '../../domain/money.js';
import { html, page } from '../html.js';
import type { ChallengePageView } from './challenge-view.js';

export function threeDsPage(view: ChallengePageView, action_url: string): string {
  const row = view.row;
  const details = html`<dl>
      <dt>Merchant</dt><dd>${row.merchant_id}</dd>
      <dt>Amount</dt><dd>${formatAmount(row.amount_minor, row.currency)}</dd>
      <dt>Card</dt><dd>${row.card_masked ?? ''}</dd>
      <dt>Order</dt><dd>${row.cashier_order_id ?? row.order_id}</dd>
    </dl>`;
  let body;
  if (view.state === 'open') {
    body = html`<form method="post" action="${action_url}" class="actions">
        <button class="primary" type="submit" name="action" value="approve">Approve</button>
        <button class="secondary" type="submit" name="action" value="decline">Decline</button>
      </form>
      <p class="note">Sandbox: Approve completes the payment, Decline rejects it. Without an answer it is rejected after 15 minutes.</p>`;
  } else if (view.state === 'waiting') {
    body = html`<p>Waiting for the card issuer to answer…</p>
      <p class="note">Sandbox: this issuer never answers (CVV 588 with amount 713); the payment will be rejected as timed out.</p>`;
  } else {
    body = html`<p>This authentication is closed: the payment is <strong>${row.status}</strong>.</p>`;
  }
  return page(
    '3-D Secure authentication',
    html`<div class="card">
      <span class="badge">Sandbox</span>
      <h1>3-D Secure authentication</h1>
      ${details}
      ${body}
    </div>`,
  );
}
