// The cashier's pages (docs/cashier.md §4): registration, choice of method, the deposit /
// checkout / withdrawal form, the result of a payment, and the pages that say a session, an
// order or a link is over. Server-rendered; each form posts to the gateway with its CSRF token.
import { formatAmount, minorUnitExponent } from '../../domain/money.js';
import type { CustomerData, CustomerField } from '../../domain/customer.js';
import type { CashierTexts } from '../../domain/cashier-texts.js';
import type { CashierSessionRow } from '../../domain/cashier-record.js';
import { ATTEMPT_FAILED_STATUSES } from '../../domain/order-state.js';
import type { TransactionRow } from '../../domain/transaction-record.js';
import { type Html, html } from '../html.js';
import { cashierShell } from './layout.js';
import type { Language, Say, TextKey } from './text.js';

export interface CashierView {
  readonly language: Language;
  readonly say: Say;
  readonly sandbox: boolean;
  /** The texts of the session's connector (the sandbox's test hints), or null. */
  readonly connector_texts: CashierTexts | null;
  readonly session: CashierSessionRow;
  readonly csrf: string;
  /** Withdrawals: what is left of the balance sent (null: no bound). */
  readonly remaining_minor: number | null;
  /** The session's return_url with what happened, signed (domain/return-url.ts). */
  readonly return_href: string;
  /** The shop's name for the session's frontend or application; null: the merchant_id is shown. */
  readonly shop_name: string | null;
}

/** Errors by field name, as text keys; values as the customer typed them (never card data). */
export type FieldErrors = Readonly<Record<string, TextKey>>;
export type FieldValues = Readonly<Record<string, string>>;

export type Alert = { readonly tone: 'bad' | 'good' | 'wait'; readonly title: string; readonly lines?: readonly string[] };

const TITLE: Readonly<Record<string, TextKey>> = {
  pay_in: 'title_pay_in',
  checkout: 'title_checkout',
  pay_out: 'title_pay_out',
  pay_out_order: 'title_pay_out_order',
};

function isPayoutKind(kind: string): boolean {
  return kind === 'pay_out' || kind === 'pay_out_order';
}

/** The example amount shown in hints: 25.00 USD, 2500 JPY, 25.000 BHD. */
export function exampleAmount(currency: string): string {
  const exponent = minorUnitExponent(currency);
  return exponent === 0 ? '2500' : `25.${'0'.repeat(exponent)}`;
}

function timeOf(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

/** `open`: the session still takes payments, so the footer says until when. */
function shell(
  view: Pick<CashierView, 'language' | 'say' | 'sandbox'> & { readonly shop_name?: string | null },
  session: CashierSessionRow | null,
  title: string,
  body: Html,
  open = false,
): string {
  return cashierShell(
    {
      language: view.language,
      say: view.say,
      title,
      merchant: view.shop_name ?? session?.merchant_id ?? null,
      sandbox: view.sandbox,
      footer: session && open ? view.say('valid_until', { time: timeOf(session.expires_at_ms) }) : null,
    },
    body,
  );
}

function alertBox(alert: Alert | null | undefined): Html | string {
  if (!alert) return '';
  const lines = (alert.lines ?? []).map((line) => html`<p>${line}</p>`);
  return html`<div class="alert ${alert.tone}" role="${alert.tone === 'bad' ? 'alert' : 'status'}"><strong>${alert.title}</strong>${lines}</div>`;
}

function summary(view: CashierView): Html {
  const { say, session } = view;
  const rows: Html[] = [];
  if (session.order_id !== null) rows.push(html`<dt>${say('order')}</dt><dd>${session.order_id}</dd>`);
  if (session.amount_minor !== null) {
    rows.push(
      html`<dt>${say(isPayoutKind(session.kind) ? 'amount_to_receive' : 'amount_to_pay')}</dt><dd>${formatAmount(session.amount_minor, session.currency)}</dd>`,
    );
  }
  if (session.kind === 'pay_out') {
    rows.push(
      html`<dt>${say('available')}</dt><dd>${view.remaining_minor === null ? say('no_limit') : formatAmount(view.remaining_minor, session.currency)}</dd>`,
    );
  }
  return rows.length > 0 ? html`<dl class="summary">${rows}</dl>` : html``;
}

function returnLink(
  view: Pick<CashierView, 'say' | 'session' | 'return_href'>,
  label: TextKey = 'return_to_shop',
  tone = 'secondary',
): Html {
  // init-pay-in pages live in the merchant's iframe: going back to the shop replaces the whole window.
  const target = view.session.kind === 'pay_in' ? '_top' : null;
  return html`<a class="button ${tone}" href="${view.return_href}"${target ? html` target="${target}"` : ''}>${view.say(label)}</a>`;
}

interface InputSpec {
  readonly name: string;
  readonly label: string;
  readonly type?: string;
  readonly autocomplete?: string;
  readonly inputmode?: string;
  readonly hint?: string | null;
  readonly value?: string;
  readonly error?: TextKey | undefined;
  /** Values for the error's placeholders ({max}, {example}). */
  readonly error_values?: Readonly<Record<string, string>>;
  readonly placeholder?: string;
  readonly maxlength?: number;
}

function input(view: Pick<CashierView, 'say'>, spec: InputSpec): Html {
  const id = `f-${spec.name}`;
  const described = [spec.hint ? `${id}-hint` : null, spec.error ? `${id}-error` : null].filter((x) => x !== null).join(' ');
  return html`<div class="field">
      <label for="${id}">${spec.label}</label>
      <input id="${id}" name="${spec.name}" type="${spec.type ?? 'text'}" value="${spec.value ?? ''}"${
        spec.autocomplete ? html` autocomplete="${spec.autocomplete}"` : ''
      }${spec.inputmode ? html` inputmode="${spec.inputmode}"` : ''}${
        spec.placeholder ? html` placeholder="${spec.placeholder}"` : ''
      }${spec.maxlength ? html` maxlength="${spec.maxlength}"` : ''}${
        described ? html` aria-describedby="${described}"` : ''
      }${spec.error ? html` aria-invalid="true"` : ''}>
      ${spec.hint ? html`<span class="hint" id="${id}-hint">${spec.hint}</span>` : ''}
      ${spec.error ? html`<span class="error" id="${id}-error">${view.say(spec.error, spec.error_values)}</span>` : ''}
    </div>`;
}

const CUSTOMER_INPUTS: Readonly<Record<CustomerField, { type: string; autocomplete: string; inputmode?: string; maxlength: number }>> = {
  first_name: { type: 'text', autocomplete: 'given-name', maxlength: 25 },
  last_name: { type: 'text', autocomplete: 'family-name', maxlength: 25 },
  email: { type: 'email', autocomplete: 'email', maxlength: 50 },
  phone: { type: 'tel', autocomplete: 'tel', inputmode: 'numeric', maxlength: 20 },
  dob: { type: 'date', autocomplete: 'bday', maxlength: 10 },
  address: { type: 'text', autocomplete: 'street-address', maxlength: 100 },
  city: { type: 'text', autocomplete: 'address-level2', maxlength: 50 },
  state: { type: 'text', autocomplete: 'address-level1', maxlength: 3 },
  zip: { type: 'text', autocomplete: 'postal-code', maxlength: 12 },
};

/** The one-time registration form: only the fields neither the merchant nor an earlier registration gave. */
export function registrationPage(view: CashierView, fields: readonly CustomerField[], values: CustomerData, errors: FieldErrors): string {
  const { say } = view;
  const inputs = fields.map((field) => {
    const spec = CUSTOMER_INPUTS[field];
    const hint = field === 'phone' ? say(view.session.kind === 'pay_in' ? 'phone_hint_pay_in' : 'phone_hint') : null;
    return input(view, { name: field, label: say(field), ...spec, hint, value: values[field] ?? '', error: errors[field] });
  });
  const alert = Object.keys(errors).length > 0 ? alertBox({ tone: 'bad', title: say('fix_fields') }) : '';
  return shell(
    view,
    view.session,
    say('register_title'),
    html`
    <h1>${say('register_title')}</h1>
    <p>${say('register_intro')}</p>
    ${alert}
    <form method="post" action="/cashier/register" novalidate>
      <input type="hidden" name="csrf" value="${view.csrf}">
      ${inputs}
      <div class="actions">
        <button class="primary" type="submit">${say('confirm')}</button>
        ${returnLink(view, 'cancel')}
      </div>
    </form>`,
    true,
  );
}

/** Each method's name and the line under it on the choice's button. */
const METHOD_TEXTS: Readonly<Record<string, readonly [TextKey, TextKey]>> = {
  card: ['method_card', 'method_card_note'],
  ewallet: ['method_ewallet', 'method_ewallet_note'],
  paypal: ['method_paypal', 'method_paypal_note'],
  bank_account: ['method_bank_account', 'method_bank_account_note'],
};

/** A method's name: the connector's own for its e-wallet (the sandbox's), else the cashier's. */
function methodLabel(view: CashierView, method: string, label: TextKey): string {
  return method === 'ewallet' && view.connector_texts ? view.connector_texts.ewallet_label(view.language) : view.say(label);
}

/** The choice of method: one button per method, each opening its form (GET, so no script is needed). */
export function methodChoice(view: CashierView, methods: readonly string[]): Html {
  const { say } = view;
  const buttons = methods.map((method) => {
    const [label, note] = METHOD_TEXTS[method] ?? METHOD_TEXTS.card!;
    return html`<button class="method" type="submit" name="method" value="${method}">${methodLabel(view, method, label)}<small>${say(note)}</small></button>`;
  });
  return html`<h2>${say(isPayoutKind(view.session.kind) ? 'choose_method_payout' : 'choose_method')}</h2>
    <form method="get" action="/cashier" class="methods">${buttons}</form>
    <div class="actions">${returnLink(view, 'cancel')}</div>`;
}

export interface PaymentFormOptions {
  readonly method: string;
  readonly methods: readonly string[];
  readonly values?: FieldValues;
  readonly errors?: FieldErrors;
}

/** The deposit, checkout, withdrawal or payout form for one method. Card data are never written back into it. */
export function paymentForm(view: CashierView, options: PaymentFormOptions): Html {
  const { say, session } = view;
  const values = options.values ?? {};
  const errors = options.errors ?? {};
  const payout = isPayoutKind(session.kind);
  const fields: Html[] = [];
  let amount: Html | string = '';
  if (session.amount_minor === null) {
    const hint =
      view.remaining_minor !== null
        ? say('amount_hint_max', { currency: session.currency, max: formatAmount(view.remaining_minor, session.currency) })
        : say('amount_hint', { currency: session.currency, example: exampleAmount(session.currency) });
    amount = input(view, {
      name: 'amount',
      label: `${say('amount')} (${session.currency})`,
      inputmode: 'decimal',
      autocomplete: 'off',
      hint,
      value: values.amount ?? '',
      error: errors.amount,
      maxlength: 20,
      error_values: {
        example: exampleAmount(session.currency),
        max: view.remaining_minor === null ? '' : formatAmount(view.remaining_minor, session.currency),
      },
    });
  }
  if (options.method === 'ewallet' && view.connector_texts?.wallet_account_asked === false && !isPayoutKind(session.kind)) {
    // The customer logs in on the wallet's own page (PayPal): nothing to ask here.
  } else if (options.method === 'paypal') {
    fields.push(
      input(view, {
        name: 'paypal_email',
        label: say('paypal_email'),
        type: 'email',
        autocomplete: 'email',
        hint: say('paypal_email_hint'),
        value: values.paypal_email ?? '',
        error: errors.paypal_email,
        maxlength: 127,
      }),
    );
  } else if (options.method === 'bank_account') {
    fields.push(
      input(view, {
        name: 'iban',
        label: say('iban'),
        autocomplete: 'off',
        hint: say('iban_hint'),
        value: values.iban ?? '',
        error: errors.iban,
        maxlength: 42,
      }),
      input(view, {
        name: 'owner_name',
        label: say('owner_name'),
        autocomplete: 'name',
        value: values.owner_name ?? '',
        error: errors.owner_name,
        maxlength: 70,
      }),
      input(view, { name: 'bic', label: say('bic'), autocomplete: 'off', value: values.bic ?? '', error: errors.bic, maxlength: 11 }),
    );
  } else if (options.method === 'ewallet') {
    fields.push(
      input(view, {
        name: 'wallet_id',
        label: say('wallet_id'),
        autocomplete: 'off',
        hint: say('wallet_id_hint'),
        value: values.wallet_id ?? '',
        error: errors.wallet_id,
        maxlength: 34,
      }),
    );
  } else {
    fields.push(
      input(view, {
        name: 'card_number',
        label: say('card_number'),
        inputmode: 'numeric',
        autocomplete: 'cc-number',
        error: errors.card_number,
        maxlength: 23,
        placeholder: '1234 5678 9012 3456',
      }),
    );
    const expiry = input(view, {
      name: 'card_exp',
      label: say('card_exp'),
      inputmode: 'numeric',
      autocomplete: 'cc-exp',
      placeholder: say('card_exp_hint'),
      error: errors.card_exp,
      maxlength: 7,
    });
    fields.push(
      payout
        ? expiry
        : html`<div class="row">${expiry}${input(view, {
            name: 'cvv',
            label: say('cvv'),
            inputmode: 'numeric',
            autocomplete: 'cc-csc',
            error: errors.cvv,
            maxlength: 4,
            type: 'password',
          })}</div>`,
    );
  }
  // The connector's hint of how to reach each outcome (the sandbox's test cards and amounts).
  const hint = view.connector_texts?.form_note(payout ? 'payout' : 'card', view.language, session.currency) ?? null;
  const note = hint !== null ? html`<p class="note">${hint}</p>` : '';
  const other = options.methods.length > 1 ? html`<p><a href="/cashier?method=choose">${say('other_method')}</a></p>` : '';
  const label: TextKey = (METHOD_TEXTS[options.method] ?? METHOD_TEXTS.card!)[0];
  return html`<form method="post" action="/cashier/pay" novalidate>
      <input type="hidden" name="csrf" value="${view.csrf}">
      <input type="hidden" name="method" value="${options.method}">
      ${amount}
      <h2>${methodLabel(view, options.method, label)}</h2>
      ${fields}
      ${note}
      <div class="actions">
        <button class="primary" type="submit">${say(payout ? 'withdraw' : 'pay')}</button>
        ${returnLink(view, 'cancel')}
      </div>
    </form>
    ${other}`;
}

/**
 * The main cashier page: title, what is being paid, an optional message, then a section (choice
 * or form). `open`: the session still waits for a payment, so the footer says until when; false
 * once the payment shown is approved (nothing is left to do before that time).
 */
export function cashierPage(view: CashierView, section: Html, alert?: Alert | null, open = true): string {
  const title = view.say(TITLE[view.session.kind] ?? 'title_pay_in');
  return shell(view, view.session, title, html`<h1>${title}</h1>${summary(view)}${alertBox(alert)}${section}`, open);
}

const FAILED: ReadonlySet<string> = new Set(ATTEMPT_FAILED_STATUSES);

/** What a transaction's status means for the customer. */
export function resultAlert(view: Pick<CashierView, 'say'>, row: TransactionRow): Alert {
  const { say } = view;
  const payout = row.transaction_type === 'payout';
  const amount = formatAmount(row.amount_minor, row.currency);
  if (row.status === 'approved') {
    return {
      tone: 'good',
      title: say(payout ? 'approved_payout' : 'approved_sale'),
      lines: [say(payout ? 'approved_payout_text' : 'approved_sale_text', { amount })],
    };
  }
  if (FAILED.has(row.status)) {
    return {
      tone: 'bad',
      title: say(payout ? 'declined_payout' : 'declined_sale'),
      lines: row.error_details ? [say('declined_text', { reason: row.error_details })] : [],
    };
  }
  if (row.status === 'requested') return { tone: 'wait', title: say('requested'), lines: [say('requested_text', { amount })] };
  if (row.status === 'pending_async') return { tone: 'wait', title: say('pending_async'), lines: [say('pending_async_text')] };
  if (row.status === 'authorized') return { tone: 'wait', title: say('authorized'), lines: [say('authorized_text')] };
  return { tone: 'wait', title: say('pending'), lines: [say('pending_text')] };
}

/** The details of one payment under its result. */
export function paymentDetails(view: Pick<CashierView, 'say'>, row: TransactionRow): Html {
  const { say } = view;
  return html`<dl class="summary">
      <dt>${say('amount')}</dt><dd>${formatAmount(row.amount_minor, row.currency)}</dd>
      ${row.card_masked ? html`<dt>${say('card')}</dt><dd>${row.card_masked}</dd>` : ''}
      <dt>${say('reference')}</dt><dd>${row.trace_id}</dd>
    </dl>`;
}

/** Buttons under a result: refresh while waiting, continue to the challenge, back to the shop, another payment. */
export function resultActions(view: CashierView, row: TransactionRow, self_url: string, can_pay_again: boolean, show_return = true): Html {
  const { say } = view;
  const buttons: Html[] = [];
  if (row.status === 'approved') buttons.push(returnLink(view, 'return_to_shop', 'primary'));
  if (row.status === 'pending_async' && row.redirect_url)
    buttons.push(html`<a class="button primary" href="${row.redirect_url}">${say('continue')}</a>`);
  if (['pending', 'pending_async', 'authorized', 'requested', 'in progress'].includes(row.status)) {
    buttons.push(html`<a class="button secondary" href="${self_url}">${say('refresh')}</a>`);
  }
  if (row.status === 'approved' && can_pay_again) {
    buttons.push(
      html`<a class="button secondary" href="/cashier">${say(row.transaction_type === 'payout' ? 'another_withdrawal' : 'another_deposit')}</a>`,
    );
  }
  if (row.status !== 'approved' && show_return) buttons.push(returnLink(view, 'return_to_shop', 'secondary'));
  if (buttons.length === 0) return html``;
  return html`<div class="actions">${buttons}</div>`;
}

/** A page that only says something (an order paid or expired, a session ended), with the way back to the shop. */
export function messagePage(
  view: Pick<CashierView, 'language' | 'say' | 'sandbox'> & { readonly return_href?: string; readonly shop_name?: string | null },
  session: CashierSessionRow | null,
  title: TextKey,
  text: TextKey,
  extra?: Html,
): string {
  const { say } = view;
  // The signed way back when the page knows the session's payments, else the plain return_url.
  const back = session
    ? html`<div class="actions">${returnLink({ say, session, return_href: view.return_href ?? session.return_url }, 'return_to_shop', 'primary')}</div>`
    : '';
  return shell(view, session, say(title), html`<h1>${say(title)}</h1><p>${say(text)}</p>${extra ?? ''}${back}`);
}

/** The session's payments, newest first, for pages shown after it ended. */
export function paymentList(view: Pick<CashierView, 'say'>, rows: readonly TransactionRow[]): Html {
  if (rows.length === 0) return html``;
  const items = [...rows]
    .reverse()
    .map((row) => html`<li><span>${formatAmount(row.amount_minor, row.currency)}</span><span>${resultAlert(view, row).title}</span></li>`);
  return html`<h2>${view.say('your_payments')}</h2><ul class="payments">${items}</ul>`;
}
