// The sandbox e-wallet page: where a customer confirms or cancels a direct payout to their
// wallet (spec §4.2 pending_async), or a deposit paid from it (the hosted cashier's e-wallet
// method). Plain HTML form, no JavaScript (decisions.md §12).
import { formatAmount } from '../../domain/money.js';
import { html, page } from '../html.js';
import type { ChallengePageView } from './challenge-view.js';

/** Only the last 4 characters of the account are shown. */
function maskedAccount(data_json: string | null): string {
  const data = data_json ? (JSON.parse(data_json) as Record<string, string>) : {};
  const account = data.data_account_number ?? '';
  return account.length <= 4 ? '*'.repeat(account.length) : `${'*'.repeat(account.length - 4)}${account.slice(-4)}`;
}

/** The page's words for money coming into the wallet (a payout) and going out of it (a deposit). */
interface WalletWords {
  readonly title: string;
  readonly heading: string;
  readonly party: string;
  readonly account: string;
  readonly question: string;
  readonly what: string;
  readonly closed: Readonly<Record<string, string>>;
}

const PAYOUT_WORDS: WalletWords = {
  title: 'Sandbox wallet: confirm payout',
  heading: 'Sandbox wallet: incoming payout',
  party: 'From',
  account: 'To wallet',
  question: 'Confirm that you want to receive this payout in your wallet.',
  what: 'payout',
  closed: {
    approved: 'confirmed: the money is on its way to your wallet',
    cancelled: 'cancelled',
    rejected: 'closed without confirmation',
  },
};

const PAYMENT_WORDS: WalletWords = {
  title: 'Sandbox wallet: confirm payment',
  heading: 'Sandbox wallet: payment request',
  party: 'Pay to',
  account: 'From wallet',
  question: 'Confirm that you want to pay this amount from your wallet.',
  what: 'payment',
  closed: { approved: 'confirmed: the merchant has been paid', cancelled: 'cancelled', rejected: 'closed without confirmation' },
};

export function walletPage(view: ChallengePageView, action_url: string): string {
  const row = view.row;
  const words = row.transaction_type === 'sale' ? PAYMENT_WORDS : PAYOUT_WORDS;
  const details = html`<dl>
      <dt>${words.party}</dt><dd>${row.merchant_id}</dd>
      <dt>Amount</dt><dd>${formatAmount(row.amount_minor, row.currency)}</dd>
      <dt>${words.account}</dt><dd>${maskedAccount(row.data_json)}</dd>
      <dt>Order</dt><dd>${row.cashier_order_id ?? row.order_id}</dd>
    </dl>`;
  const body =
    view.state === 'open'
      ? html`<p>${words.question}</p>
      <form method="post" action="${action_url}" class="actions">
        <button class="primary" type="submit" name="action" value="confirm">Confirm</button>
        <button class="secondary" type="submit" name="action" value="cancel">Cancel</button>
      </form>
      <p class="note">Sandbox: Confirm approves the ${words.what}, Cancel cancels it. Without an answer it is rejected after 15 minutes.</p>`
      : html`<p>This ${words.what} is ${words.closed[row.status] ?? row.status} (<strong>${row.status}</strong>).</p>`;
  return page(
    words.title,
    html`<div class="card">
      <span class="badge">Sandbox</span>
      <h1>${words.heading}</h1>
      ${details}
      ${body}
    </div>`,
  );
}
