// Parts of the cashier's main page that its routes put together (docs/cashier.md §4): a
// payment's result with what can be done now, the way to try again after a failure, the button
// back to the shop, and the one link that carries on (to /cashier, or to a challenge page).
import { type Html, html } from '../html.js';
import { type CashierView, methodChoice, paymentDetails, paymentForm, resultActions } from './pages.js';

type PaymentShown = Parameters<typeof resultActions>[1];

/** A payment's result: its details, what can be done now, and, after a failure, the way to try again. */
export function resultSection(view: CashierView, row: PaymentShown, attempt_url: string, retry: Html | null, can_pay_again: boolean): Html {
  // With a form to try again, its Cancel is the way back to the shop.
  return html`${paymentDetails(view, row)}${resultActions(view, row, attempt_url, can_pay_again, retry === null)}${retry ?? ''}`;
}

/** After a failed payment: try again, with the choice of method when there is one, else the form of the only one. */
export function retrySection(view: CashierView, methods: readonly string[], method: string | null): Html {
  return html`<p>${view.say('try_again')}</p>${method === null || methods.length > 1 ? methodChoice(view, methods) : paymentForm(view, { method, methods })}`;
}

/** Back to the shop; an init-pay-in cashier leaves the merchant's frame for it. */
export function returnAction(view: CashierView): Html {
  const target = view.session.kind === 'pay_in' ? html` target="_top"` : '';
  return html`<div class="actions"><a class="button primary" href="${view.return_href}"${target}>${view.say('return_to_shop')}</a></div>`;
}

/** The one way on: to /cashier (secondary), or to a challenge page (primary). */
export function continueAction(view: Pick<CashierView, 'say'>, href: string, kind: 'primary' | 'secondary'): Html {
  return html`<div class="actions"><a class="button ${kind}" href="${href}">${view.say('continue')}</a></div>`;
}
