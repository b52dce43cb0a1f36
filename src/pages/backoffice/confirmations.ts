// The confirmation step of the back office's actions that move money or stop something (issue 30):
// a payout approved or rejected, a subscription cancelled, a merchant, gateway or user disabled
// (or enabled again), the merchant's API secret rolled (the old one then stops). The first form answers with this page: what will happen, and to what
// (amount in the currency's major units, masked card, customer, the gateway's label); nothing is
// done until its button sends the same form again with confirm=yes (and the page's CSRF token).
// A refund's, a capture's and a void's are in authorizations.ts, the same way.
import { type Html, html } from '../html.js';
import { CONFIRM_FIELD } from './authorizations.js';
import { iso, money } from './format.js';
import { csrfField } from './layout.js';
import type { GatewayShown, PageParts, SubscriptionShown, TransactionShown, UserLine } from './records.js';
import type { Cell } from './table.js';

export interface Confirmation {
  readonly heading: string;
  /** What pressing the button does, in a sentence or two. */
  readonly effect: string;
  readonly facts: readonly (readonly [string, Cell])[];
  /** Where the form is sent again, with confirm=yes. */
  readonly action: string;
  /** What the first form carried that the action needs (a reason). */
  readonly fields?: Readonly<Record<string, string>>;
  readonly button: string;
  readonly danger: boolean;
  readonly back: { readonly href: string; readonly text: string };
}

export function confirmationBody(parts: PageParts, c: Confirmation): Html {
  const facts = c.facts.filter(([, v]) => v !== null && v !== undefined && v !== '');
  return html`<h1>${c.heading}</h1>
<p class="notice ok" role="status">Nothing has been done yet. Check what follows, then confirm.</p>
<div class="card" data-testid="confirmation"><p><strong>${c.effect}</strong></p><dl>${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl></div>
<form class="inline" method="post" action="${c.action}">${csrfField(parts.csrf)}
${Object.entries(c.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<input type="hidden" name="${CONFIRM_FIELD}" value="yes">
<button class="${c.danger ? 'danger' : 'primary'}" type="submit">${c.button}</button></form>
<p><a href="${c.back.href}">${c.back.text}</a></p>`;
}

function cardOf(row: Pick<TransactionShown, 'card_masked' | 'card_brand'>): string | null {
  return row.card_masked === null ? null : `${row.card_masked}${row.card_brand ? ` (${row.card_brand})` : ''}`;
}

/** A payout held for a decision: approving sends the money to the processor, rejecting ends it. */
export function payoutDecisionConfirmation(
  row: TransactionShown,
  action: 'approve' | 'reject',
  reason: string,
  gateway_label: string,
): Confirmation {
  const amount = money(row.amount_minor, row.currency);
  const approve = action === 'approve';
  return {
    heading: `Confirm: ${approve ? 'approve' : 'reject'} payout ${row.trace_id}`,
    effect: approve
      ? `${amount} will be sent to the processor, to be paid out to this customer.`
      : `Payout ${row.trace_id} of ${amount} will be rejected: nothing is paid, and the merchant is notified.`,
    facts: [
      ['Amount', amount],
      ['Card', cardOf(row)],
      ['Payment method', row.card_masked === null ? row.payment_method : null],
      ['Customer PIN', row.pin],
      ['Order ID', row.cashier_order_id ?? row.order_id],
      ['Merchant', row.merchant_id],
      ['Gateway', gateway_label],
      ['Requested (UTC)', iso(row.created_at_ms)],
      ['Reason for rejecting', approve ? null : reason],
    ],
    action: `/backoffice/payouts/${row.trace_id}/${action}`,
    fields: approve ? {} : { reason },
    button: approve ? `Confirm: pay out ${amount}` : `Confirm: reject payout ${row.trace_id}`,
    danger: !approve,
    back: { href: '/backoffice/payouts', text: 'Back to the payouts, nothing done' },
  };
}

/** A subscription cancelled: nothing more is charged to the customer's card. */
export function subscriptionCancelConfirmation(
  s: SubscriptionShown,
  card: { readonly card: string; readonly pin: string } | null,
): Confirmation {
  const price = `${money(s.amount_minor, s.currency)} / ${s.billing_cycle}`;
  return {
    heading: `Confirm: cancel subscription ${s.subscription_id}`,
    effect: `Nothing more will be charged (${price}); the merchant is notified (subscription.canceled). It cannot be undone.`,
    facts: [
      ['Price', price],
      ['Next charge (UTC)', iso(s.next_charge_at_ms)],
      ['Charges made', s.cycles_charged],
      ['Card', card?.card],
      ['Customer PIN', card?.pin],
      ['Customer (cid)', s.cid],
      ['Plan', s.plan_id],
      ['Merchant', s.merchant_id],
      ['Status', s.status],
    ],
    action: `/backoffice/subscriptions/${encodeURIComponent(s.subscription_id)}/cancel`,
    button: `Confirm: cancel subscription ${s.subscription_id}`,
    danger: true,
    back: { href: `/backoffice/subscriptions/${encodeURIComponent(s.subscription_id)}`, text: 'Back to the subscription, nothing done' },
  };
}

/** A merchant disabled (its API calls refused, its renewals held) or enabled again. */
export function merchantStateConfirmation(
  m: {
    readonly merchant_id: string;
    readonly disabled_at_ms: number | null;
    readonly gateways: readonly { readonly label: string; readonly enabled: boolean }[];
    readonly application_count: number;
  },
  action: 'disable' | 'enable',
): Confirmation {
  const disable = action === 'disable';
  return {
    heading: `Confirm: ${action} merchant ${m.merchant_id}`,
    effect: disable
      ? "Its API calls will be answered as an unknown merchant's: no payment, refund or payout is taken from it, and its subscriptions' renewals are held until it is enabled again."
      : 'Its API calls will be accepted again, and its held subscription renewals charged as they come due.',
    facts: [
      ['Merchant', m.merchant_id],
      ['State now', m.disabled_at_ms === null ? 'enabled' : `disabled since ${iso(m.disabled_at_ms)} UTC`],
      ['Gateways', m.gateways.length === 0 ? 'none' : m.gateways.map((g) => `${g.label}${g.enabled ? '' : ' (disabled)'}`).join(', ')],
      ['Applications', m.application_count],
    ],
    action: `/backoffice/merchants/${encodeURIComponent(m.merchant_id)}/${action}`,
    button: `Confirm: ${action} ${m.merchant_id}`,
    danger: disable,
    back: { href: '/backoffice/merchants', text: 'Back to the merchants, nothing done' },
  };
}

/** A gateway disabled (no new payment through it) or enabled again. */
export function gatewayStateConfirmation(g: GatewayShown, action: 'disable' | 'enable'): Confirmation {
  const disable = action === 'disable';
  return {
    heading: `Confirm: ${action} gateway ${g.label}`,
    effect: disable
      ? 'It will take no new payment or payout (its merchant’s routing skips it); what it already took still refunds, settles and takes its processor’s webhooks.'
      : 'It will take new payments again, as its merchant’s routing picks it.',
    facts: [
      ['Gateway', g.label],
      ['Merchant', g.merchant_id],
      ['Connector', g.connector],
      ['Currencies', g.currencies.join(', ')],
      ['State now', g.enabled ? 'enabled' : 'disabled'],
    ],
    action: `/backoffice/gateways/${g.gateway}/${action}`,
    button: `Confirm: ${action} ${g.label}`,
    danger: disable,
    back: { href: '/backoffice/gateways', text: 'Back to the gateways, nothing done' },
  };
}

/** A back-office user disabled (their sessions end at once) or enabled again. */
export function userStateConfirmation(u: UserLine, action: 'disable' | 'enable'): Confirmation {
  const disable = action === 'disable';
  return {
    heading: `Confirm: ${action} user ${u.email}`,
    effect: disable
      ? 'Their sessions end at once and they can no longer sign in, until an operator enables them again.'
      : 'They can sign in again.',
    facts: [
      ['E-mail', u.email],
      ['Role', u.role],
      ['Merchant', u.merchant_id],
      ['State now', u.disabled_at_ms === null ? 'active' : 'disabled'],
      ['Created (UTC)', iso(u.created_at_ms)],
    ],
    action: `/backoffice/users/${encodeURIComponent(u.user_id)}/${action}`,
    button: `Confirm: ${action} ${u.email}`,
    danger: disable,
    back: { href: '/backoffice/users', text: 'Back to the users, nothing done' },
  };
}

/** Rolling the merchant's API secret: a new one, shown once; the old one is refused after the grace. */
export function secretRollConfirmation(merchant_id: string, grace_s: number, grace_label: string, old_until_ms: number): Confirmation {
  return {
    heading: 'Confirm: roll the API secret',
    effect:
      grace_s === 0
        ? 'A new secret is made and shown once; requests signed with the current one are refused from now on.'
        : `A new secret is made and shown once; the current one is still accepted for ${grace_label}, then refused.`,
    facts: [
      ['Merchant ID', merchant_id],
      ['Current secret accepted until', grace_s === 0 ? 'now' : `${iso(old_until_ms)} UTC`],
      ['Notifications', 'signed with the new secret at once: put it on your notification endpoint first'],
    ],
    action: '/backoffice/credentials/roll',
    fields: { grace_seconds: String(grace_s) },
    button: 'Roll the secret',
    danger: true,
    back: { href: '/backoffice/credentials', text: 'Back to the API credentials, nothing done' },
  };
}
