// An authorization on the back office's transaction page (decisions §16, docs/backoffice.md): the
// Capture (whole or part) and Void forms while it is `authorized`, the confirmation page each goes
// through first (the amount, the masked card and the customer, before anything moves), and its
// capture or void once asked: what, how much, by whom, where it is. A refund's confirmation page
// too, the same way.
import type { AuthorizationActionKind, AuthorizationActionOrigin, AuthorizationActionState } from '../../domain/authorization-record.js';
import { type Html, html } from '../html.js';
import { iso, majorUnits, money } from './format.js';
import { csrfField } from './layout.js';
import type { AuthorizationActionShown, PageParts, TransactionShown } from './records.js';

/** The form field that says the person confirmed: without it, the form answers with the confirmation page. */
export const CONFIRM_FIELD = 'confirm';

/** Whether the page offers Capture and Void: an authorization still holding the funds, and nothing asked of it yet. */
export function actionable(row: Pick<TransactionShown, 'transaction_type' | 'status'>, action: AuthorizationActionShown | null): boolean {
  return row.transaction_type === 'authorize' && row.status === 'authorized' && action === null;
}

/** The Capture form (an amount, the whole by default) and the Void form; each leads to its confirmation. */
export function authorizationForms(parts: PageParts, row: TransactionShown): Html {
  const whole = majorUnits(row.amount_minor, row.currency);
  return html`<h2>Capture or void</h2><div class="card">
<p class="muted">The funds are held on the card. Capture takes all or part of them (the rest is released); Void releases them all. Each asks you to confirm first.</p>
<div class="inline"><form class="inline" method="post" action="/backoffice/transactions/${row.trace_id}/capture">${csrfField(parts.csrf)}
<label for="capture-amount">Amount to capture (${row.currency}, at most ${whole})<input id="capture-amount" name="amount" inputmode="decimal" required value="${whole}"></label>
<button class="primary" type="submit">Capture</button></form>
<form class="inline" method="post" action="/backoffice/transactions/${row.trace_id}/void">${csrfField(parts.csrf)}
<button class="danger" type="submit">Void</button></form></div></div>`;
}

const VERBS: Readonly<Record<AuthorizationActionKind, { readonly title: string; readonly moved: string; readonly button: string }>> = {
  capture: { title: 'capture', moved: 'Amount to capture', button: 'Confirm capture' },
  void: { title: 'void', moved: 'Amount released', button: 'Confirm void' },
};

/** The confirmation: what will move and from whose card, the same form again with the person's yes. */
export function confirmAuthorizationBody(
  parts: PageParts,
  row: TransactionShown,
  action: AuthorizationActionKind,
  amount_minor: number,
  gateway_label: string,
): Html {
  const verb = VERBS[action];
  const rest = row.amount_minor - amount_minor;
  const facts: [string, string | null][] = [
    [verb.moved, money(amount_minor, row.currency)],
    ['Authorized amount', money(row.amount_minor, row.currency)],
    ['Released', action === 'capture' && rest > 0 ? money(rest, row.currency) : null],
    ['Card', row.card_masked === null ? null : `${row.card_masked}${row.card_brand ? ` (${row.card_brand})` : ''}`],
    ['Customer PIN', row.pin],
    ['Order ID', row.cashier_order_id ?? row.order_id],
    ['Merchant', row.merchant_id],
    ['Gateway', gateway_label],
    ['Authorized (UTC)', iso(row.created_at_ms)],
  ];
  return html`<h1>Confirm the ${verb.title} of transaction ${row.trace_id}</h1>
<p class="notice ok" role="status">Nothing has moved yet. Check what follows, then confirm.</p>
<div class="card"><dl>${facts.filter(([, v]) => v !== null && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl></div>
<form class="inline" method="post" action="/backoffice/transactions/${row.trace_id}/${action}">${csrfField(parts.csrf)}
<input type="hidden" name="amount" value="${majorUnits(amount_minor, row.currency)}"><input type="hidden" name="${CONFIRM_FIELD}" value="yes">
<button class="${action === 'void' ? 'danger' : 'primary'}" type="submit">${verb.button}</button></form>
<p><a href="/backoffice/transactions/${row.trace_id}">Back to the transaction, nothing done</a></p>`;
}

/**
 * A refund's confirmation: how much goes back to whose card (what stays refundable after it), the
 * same form again with the person's yes and the form's key, so a confirmation sent twice is one
 * refund. Nothing has moved until it is confirmed.
 */
export function confirmRefundBody(
  parts: PageParts,
  row: TransactionShown,
  amount_minor: number,
  refund_key: string,
  gateway_label: string,
): Html {
  const left = row.amount_minor - row.refund_reserved_minor - amount_minor;
  const facts: [string, string | null][] = [
    ['Amount to refund', money(amount_minor, row.currency)],
    ['Paid', money(row.amount_minor, row.currency)],
    ['Refundable after this', left >= 0 ? money(left, row.currency) : null],
    ['Card', row.card_masked === null ? null : `${row.card_masked}${row.card_brand ? ` (${row.card_brand})` : ''}`],
    ['Payment method', row.card_masked === null ? row.payment_method : null],
    ['Customer PIN', row.pin],
    ['Order ID', row.cashier_order_id ?? row.order_id],
    ['Merchant', row.merchant_id],
    ['Gateway', gateway_label],
    ['Paid (UTC)', iso(row.created_at_ms)],
  ];
  return html`<h1>Confirm the refund of transaction ${row.trace_id}</h1>
<p class="notice ok" role="status">Nothing has moved yet. Check what follows, then confirm.</p>
<div class="card"><dl>${facts.filter(([, v]) => v !== null && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl></div>
<form class="inline" method="post" action="/backoffice/transactions/${row.trace_id}/refund">${csrfField(parts.csrf)}
<input type="hidden" name="amount" value="${majorUnits(amount_minor, row.currency)}"><input type="hidden" name="refund_key" value="${refund_key}">
<input type="hidden" name="${CONFIRM_FIELD}" value="yes">
<button class="danger" type="submit">Confirm refund</button></form>
<p><a href="/backoffice/transactions/${row.trace_id}">Back to the transaction, nothing done</a></p>`;
}

const WHO: Readonly<Record<AuthorizationActionOrigin, string>> = {
  merchant: "the merchant (its API's capture or void)",
  agent: 'agent',
  expiry: "the gateway, at the authorization's expiry",
  processor: "the processor (made in the processor's own dashboard)",
};

const STATES: Readonly<Record<AuthorizationActionState, string>> = {
  requested: 'asked of the processor; its answer is not known yet',
  accepted: 'accepted by the processor; its confirmation is awaited',
  done: 'done',
};

/** The authorization's capture or void as the gateway keeps it. */
export function authorizationActionSection(action: AuthorizationActionShown, currency: string): Html {
  const who = action.origin === 'agent' ? `agent ${action.agent ?? ''}` : WHO[action.origin];
  const facts: [string, string | null][] = [
    ['Action', action.action],
    ['Authorized amount', money(action.authorized_minor, currency)],
    ['Captured amount', action.action === 'capture' ? money(action.amount_minor, currency) : null],
    ['By', who],
    ['State', STATES[action.state]],
    ['Asked (UTC)', iso(action.requested_at_ms)],
    ['Updated (UTC)', iso(action.updated_at_ms)],
  ];
  return html`<h2>${action.action === 'capture' ? 'Capture' : 'Void'}</h2>
<div class="card" data-testid="authorization-action"><dl>${facts.filter(([, v]) => v !== null).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl></div>`;
}
