// The sandbox e-wallet page: where a customer confirms or cancels a direct payout to their
// wallet (spec §4.2 pending_async). Plain HTML form, no JavaScript (decisions.md §12).
import { formatAmount } from '../domain/money.js';
import type { ChallengeView } from '../operations/challenge.js';
import { html, page } from './html.js';

/** Only the last 4 characters of the account are shown. */
function maskedAccount(data_json: string | null): string {
  const data = data_json ? (JSON.parse(data_json) as Record<string, string>) : {};
  const account = data.data_account_number ?? '';
  return account.length <= 4 ? '*'.repeat(account.length) : `${'*'.repeat(account.length - 4)}${account.slice(-4)}`;
}

const CLOSED_TEXT: Readonly<Record<string, string>> = {
  approved: 'confirmed: the money is on its way to your wallet',
  cancelled: 'cancelled',
  rejected: 'closed without confirmation',
};

export function walletPage(view: ChallengeView, action_url: string): string {
  const row = view.row;
  const details = html`<dl>
      <dt>From</dt><dd>${row.merchant_id}</dd>
      <dt>Amount</dt><dd>${formatAmount(row.amount_minor, row.currency)}</dd>
      <dt>To wallet</dt><dd>${maskedAccount(row.data_json)}</dd>
      <dt>Order</dt><dd>${row.cashier_order_id ?? row.order_id}</dd>
    </dl>`;
  const body = view.state === 'open'
    ? html`<p>Confirm that you want to receive this payout in your wallet.</p>
      <form method="post" action="${action_url}" class="actions">
        <button class="primary" type="submit" name="action" value="confirm">Confirm</button>
        <button class="secondary" type="submit" name="action" value="cancel">Cancel</button>
      </form>
      <p class="note">Sandbox: Confirm approves the payout, Cancel cancels it. Without an answer it is rejected after 15 minutes.</p>`
    : html`<p>This payout is ${CLOSED_TEXT[row.status] ?? row.status} (<strong>${row.status}</strong>).</p>`;
  return page('Sandbox wallet: confirm payout', html`<div class="card">
      <span class="badge">Sandbox</span>
      <h1>Sandbox wallet: incoming payout</h1>
      ${details}
      ${body}
    </div>`);
}
