// The hosted cashier's pages (docs/cashier.md §4): login by link or auth_token, then one page
// at /cashier that shows what the session needs next (registration, choice of method, the
// payment form, a payment in flight, or that the order or session is over), the form posts, and
// the result page a payment returns to (also from 3-D Secure and the sandbox wallet).
//
// The browser session is an HttpOnly cookie (Path=/cashier, SameSite=Lax; for init-pay-in over
// https SameSite=None; Secure; Partitioned, so it works in the merchant's iframe). Every form
// carries the session's CSRF token. init-pay-in pages may be framed by the application's
// configured origins only (CSP frame-ancestors); every other page by nobody (and X-Frame-Options DENY).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { framingHeaders } from '../../domain/frame-origins.js';
import { ATTEMPT_FAILED_STATUSES, CLOSED_ORDER_STATUSES, isOrderSession } from '../../domain/order-state.js';
import { attemptTransaction, sessionState, submitPayment } from '../../operations/cashier-payment.js';
import { signedReturnUrl } from '../../domain/return-url.js';
import { isLinkPreview } from '../../domain/link-preview.js';
import {
  type BrowserSession,
  browserSession,
  csrfValid,
  isPayout,
  knownCustomer,
  loginWithAuthToken,
  loginWithLink,
  type LoginOutcome,
  methodsFor,
  missingCustomerFields,
  saveRegistration,
  sessionTexts,
  sessionFrameOrigins,
} from '../../operations/cashier-session.js';
import type { CashierSessionRow } from '../../domain/cashier-record.js';
import type { TransactionRow } from '../../domain/transaction-record.js';
import type { OperationDeps } from '../../operations/deps.js';
import { displayName } from '../../operations/merchant-settings.js';
import type { Html } from '../../pages/html.js';
import {
  type Alert,
  cashierPage,
  type CashierView,
  type FieldErrors,
  type FieldValues,
  messagePage,
  methodChoice,
  paymentForm,
  paymentList,
  registrationPage,
  resultAlert,
} from '../../pages/cashier/pages.js';
import { continueAction, resultSection, retrySection, returnAction } from '../../pages/cashier/sections.js';
import { languageOf, sayer } from '../../pages/cashier/text.js';
import { readPaymentForm, readRegistration } from '../cashier-forms.js';
import { isPlainObject, type PlainRoute } from '../route.js';

export const CASHIER_COOKIE = 'paygate_cashier';

function readCookie(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === CASHIER_COOKIE) return part.slice(at + 1).trim();
  }
  return null;
}

/** A route of the cashier's pages: it answers HTML. */
function htmlRoute(method: PlainRoute['method'], url: string, summary: string, handle: PlainRoute['handle']): PlainRoute {
  return { kind: 'plain', method, url, summary, produces: 'text/html', handle };
}

/** A text field of a query string or form; undefined when absent or not text. */
function textField(fields: unknown, name: string): string | undefined {
  const value = isPlainObject(fields) ? fields[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

interface PageDeps {
  readonly deps: OperationDeps;
  readonly public_url: () => string;
}

function securityHeaders(frame: readonly string[] | null): Record<string, string> {
  const framing = framingHeaders(frame);
  return {
    'cache-control': 'no-store',
    // Tokens travel in the login URL: never pass it on through Referer.
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy':
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; " +
      framing.frame_ancestors,
    ...framing.headers,
  };
}

async function sendHtml(
  deps: OperationDeps,
  response: FastifyReply,
  session: CashierSessionRow | null,
  code: number,
  body: string,
): Promise<FastifyReply> {
  return response
    .code(code)
    .headers(securityHeaders(await sessionFrameOrigins(deps, session)))
    .type('text/html; charset=utf-8')
    .send(body);
}

async function redirect(deps: OperationDeps, response: FastifyReply, session: CashierSessionRow | null, to: string): Promise<FastifyReply> {
  return response.headers(securityHeaders(await sessionFrameOrigins(deps, session))).redirect(to, 303);
}

function languageView(deps: OperationDeps, session: CashierSessionRow | null) {
  const language = languageOf(session?.locale);
  return { language, say: sayer(language), sandbox: deps.config.environment === 'sandbox' };
}

function cookieFor(page: PageDeps, login: Extract<LoginOutcome, { kind: 'logged_in' }>): string {
  const max_age = Math.max(1, Math.floor((login.expires_at_ms - page.deps.clock.now_ms()) / 1000));
  const https = page.public_url().startsWith('https:');
  const parts = [`${CASHIER_COOKIE}=${login.browser_token}`, 'Path=/cashier', 'HttpOnly', `Max-Age=${max_age}`];
  // A cross-site iframe (init-pay-in) never sends a Lax cookie; there the cookie must be SameSite=None,
  // which browsers accept only with Secure, and Partitioned keeps it to that one embedding site.
  if (login.session.kind === 'pay_in' && https) parts.push('SameSite=None', 'Secure', 'Partitioned');
  else parts.push('SameSite=Lax', ...(https ? ['Secure'] : []));
  return parts.join('; ');
}

async function answerLogin(page: PageDeps, response: FastifyReply, outcome: LoginOutcome): Promise<FastifyReply> {
  const { deps } = page;
  if (outcome.kind === 'refused') {
    return sendHtml(
      deps,
      response,
      outcome.session,
      410,
      messagePage(languageView(deps, outcome.session), outcome.session, 'link_invalid', 'link_invalid_text'),
    );
  }
  void response.header('set-cookie', cookieFor(page, outcome));
  return redirect(deps, response, outcome.session, '/cashier');
}

/** The view every page of a browser session shares. */
async function viewOf(
  deps: OperationDeps,
  browser: BrowserSession,
): Promise<{ view: CashierView; state: Awaited<ReturnType<typeof sessionState>> }> {
  const state = await sessionState(deps, browser.session);
  const merchant = await deps.merchants.find(browser.session.merchant_id);
  const connector_texts = merchant ? sessionTexts(deps, merchant, browser.session) : null;
  // The latest payment of the session (transactions come oldest first), for the signed way back.
  const latest = state.transactions.at(-1) ?? null;
  const return_href =
    merchant === null
      ? browser.session.return_url
      : signedReturnUrl(
          browser.session.return_url,
          {
            order_id: browser.session.order_id,
            trace_id: latest?.trace_id ?? null,
            transaction_status: latest?.status ?? null,
            timestamp: Math.floor(deps.clock.now_ms() / 1000),
          },
          merchant.secret,
        );
  const identity_kind = browser.session.identity_kind === 'frontend' ? ('frontend' as const) : ('application_key' as const);
  const shop_name = await displayName(deps, browser.session.merchant_id, { kind: identity_kind, value: browser.session.identity_value });
  return {
    view: {
      ...languageView(deps, browser.session),
      connector_texts,
      session: browser.session,
      csrf: browser.csrf,
      remaining_minor: state.remaining_minor,
      return_href,
      shop_name,
    },
    state,
  };
}

interface MainOptions {
  readonly method?: string | undefined;
  readonly alert?: Alert | null;
  readonly values?: FieldValues;
  readonly errors?: FieldErrors;
  readonly code?: number;
}

export function cashierPageRoutes(deps: OperationDeps, public_url: () => string): PlainRoute[] {
  const page: PageDeps = { deps, public_url };

  /** Whatever the session needs next, on /cashier. */
  async function renderMain(response: FastifyReply, browser: BrowserSession, options: MainOptions = {}): Promise<FastifyReply> {
    const session = browser.session;
    const { view, state } = await viewOf(deps, browser);
    const send = (code: number, body: string) => sendHtml(deps, response, session, code, body);
    if (isOrderSession(session) && session.order_status === 'approved') {
      return send(200, messagePage(view, session, 'order_paid', 'order_paid_text', paymentList(view, state.transactions)));
    }
    const ended = !browser.open || (isOrderSession(session) && CLOSED_ORDER_STATUSES.has(session.order_status ?? ''));
    if (ended) {
      // A closed order whose latest payment is a voided authorization was cancelled by the shop, not
      // left to expire (a customer's own cancel is of a wallet sale: authorizations are cards only).
      const latest = state.transactions.at(-1);
      const voided = latest?.transaction_type === 'authorize' && latest.status === 'cancelled';
      const [title, text] = !isOrderSession(session)
        ? (['session_ended', 'session_ended_text'] as const)
        : voided
          ? (['order_cancelled', 'order_cancelled_text'] as const)
          : (['order_expired', 'order_expired_text'] as const);
      return send(200, messagePage(view, session, title, text, paymentList(view, state.transactions)));
    }
    const customer = await knownCustomer(deps, session);
    const missing = missingCustomerFields(customer);
    if (missing.length > 0) return send(200, registrationPage(view, missing, {}, {}));
    if (state.in_flight) {
      const row = state.in_flight;
      const attempt_url = attemptUrlOf(row) ?? '/cashier';
      return send(
        200,
        cashierPage(view, resultSection(view, row, attempt_url, null, false), resultAlert(view, row), row.status !== 'approved'),
      );
    }
    if (session.kind === 'pay_out' && state.remaining_minor === 0) {
      return send(200, cashierPage(view, returnAction(view), { tone: 'bad', title: view.say('no_balance') }));
    }
    const methods = await methodsOf(session);
    const method = pickMethod(options.method, session, methods);
    if (method === null) return send(options.code ?? 200, cashierPage(view, methodChoice(view, methods), options.alert));
    const alert =
      options.alert ??
      (options.errors && Object.keys(options.errors).length > 0 ? { tone: 'bad' as const, title: view.say('fix_fields') } : null);
    return send(
      options.code ?? 200,
      cashierPage(
        view,
        paymentForm(view, {
          method,
          methods,
          ...(options.values ? { values: options.values } : {}),
          ...(options.errors ? { errors: options.errors } : {}),
        }),
        alert,
      ),
    );
  }

  async function methodsOf(session: CashierSessionRow): Promise<string[]> {
    const merchant = await deps.merchants.find(session.merchant_id);
    return merchant ? methodsFor(deps, merchant, session) : ['card'];
  }

  /** The method asked for (?method=), else the one the merchant preselected, else the only one; null: let the customer choose. */
  function pickMethod(asked: string | undefined, session: CashierSessionRow, methods: readonly string[]): string | null {
    if (asked === 'choose') return methods.length === 1 ? methods[0]! : null;
    if (asked !== undefined && methods.includes(asked)) return asked;
    if (session.payment_method !== null && methods.includes(session.payment_method)) return session.payment_method;
    return methods.length === 1 ? methods[0]! : null;
  }

  function attemptUrlOf(row: TransactionRow): string | null {
    const match = /:attempt:(\d+)$/.exec(row.order_id);
    return match ? `/cashier/attempt/${match[1]}` : null;
  }

  async function signedIn(request: FastifyRequest, response: FastifyReply): Promise<BrowserSession | null> {
    const browser = await browserSession(deps, readCookie(request));
    if (!browser) {
      await sendHtml(deps, response, null, 401, messagePage(languageView(deps, null), null, 'not_signed_in', 'link_invalid_text'));
      return null;
    }
    return browser;
  }

  /** A page for a signed-in customer; anyone else is told so. */
  function signedInRoute(
    url: string,
    summary: string,
    handle: (request: FastifyRequest, response: FastifyReply, browser: BrowserSession) => Promise<unknown>,
  ): PlainRoute {
    return htmlRoute('GET', url, summary, async (request, response) => {
      const browser = await signedIn(request, response);
      return browser ? handle(request, response, browser) : response;
    });
  }

  /** A form post: signed in, with the session's CSRF token, to a session still open (a closed one gets its page). */
  function formRoute(
    url: string,
    summary: string,
    handle: (response: FastifyReply, browser: BrowserSession, form: Record<string, unknown>) => Promise<unknown>,
  ): PlainRoute {
    return htmlRoute('POST', url, summary, async (request, response) => {
      const browser = await signedIn(request, response);
      if (!browser) return response;
      const form = isPlainObject(request.body) ? request.body : {};
      if (!csrfValid(deps, browser.browser_token, form.csrf)) {
        const view = languageView(deps, browser.session);
        return sendHtml(
          deps,
          response,
          browser.session,
          403,
          messagePage(view, browser.session, 'form_expired', 'link_invalid_text', continueAction(view, '/cashier', 'secondary')),
        );
      }
      if (!browser.open) return renderMain(response, browser);
      return handle(response, browser, form);
    });
  }

  return [
    htmlRoute(
      'GET',
      '/cashier/login/:token',
      'Cashier auto-login (the redirect_url of a session call): one use, then redirects to /cashier',
      async (request, response) => {
        const { token } = request.params as { token: string };
        // A chat app drawing the link's preview must not use up the customer's one-time link.
        if (isLinkPreview(request.method, request.headers['user-agent'])) {
          return sendHtml(deps, response, null, 200, messagePage(languageView(deps, null), null, 'link_preview', 'link_preview_text'));
        }
        return answerLogin(page, response, await loginWithLink(deps, token));
      },
    ),
    htmlRoute(
      'GET',
      '/cashier/login',
      "Cashier login with the session's auth_token (?auth_token=...), valid 15 minutes until the first payment",
      async (request, response) =>
        answerLogin(page, response, await loginWithAuthToken(deps, textField(request.query, 'auth_token') ?? '')),
    ),
    htmlRoute(
      'POST',
      '/cashier/login',
      "Cashier login with the session's auth_token as a form field (auth_token)",
      async (request, response) => answerLogin(page, response, await loginWithAuthToken(deps, textField(request.body, 'auth_token') ?? '')),
    ),
    signedInRoute(
      '/cashier',
      'The cashier page: registration, choice of method, payment form, or where the session stands (?method=card|ewallet)',
      async (request, response, browser) => renderMain(response, browser, { method: textField(request.query, 'method') }),
    ),
    formRoute(
      '/cashier/register',
      'The one-time registration form (customer fields the merchant did not send)',
      async (response, browser, form) => {
        const missing = missingCustomerFields(await knownCustomer(deps, browser.session));
        if (missing.length === 0) return redirect(deps, response, browser.session, '/cashier');
        const read = readRegistration(form, missing, browser.session.kind);
        if (!read.ok) {
          const { view } = await viewOf(deps, browser);
          return sendHtml(deps, response, browser.session, 422, registrationPage(view, missing, read.values, read.errors));
        }
        await saveRegistration(deps, browser.session, read.value);
        return redirect(deps, response, browser.session, '/cashier');
      },
    ),
    formRoute(
      '/cashier/pay',
      'Submit a deposit, checkout, withdrawal or payout (form: method, amount, card or wallet fields)',
      async (response, browser, form) => {
        const session = browser.session;
        if (missingCustomerFields(await knownCustomer(deps, session)).length > 0) return redirect(deps, response, session, '/cashier');
        const methods = await methodsOf(session);
        const method = typeof form.method === 'string' && methods.includes(form.method) ? form.method : null;
        if (method === null) return redirect(deps, response, session, '/cashier');
        const { view, state } = await viewOf(deps, browser);
        const read = readPaymentForm(form, {
          currency: session.currency,
          fixed_amount_minor: session.amount_minor,
          max_minor: state.remaining_minor,
          method,
          payout: isPayout(session.kind),
          now_ms: deps.clock.now_ms(),
          wallet_account_asked: view.connector_texts?.wallet_account_asked !== false,
        });
        if (!read.ok) return renderMain(response, browser, { method, values: read.values, errors: read.errors, code: 422 });
        const outcome = await submitPayment(deps, {
          session,
          amount_minor: read.value.amount_minor,
          choice: read.value.choice,
          public_url: public_url(),
        });
        // Written back into the form after a refusal: the amount and the wallet id, never card data.
        const values: Record<string, string> = { amount: typeof form.amount === 'string' ? form.amount.slice(0, 20) : '' };
        const choice = read.value.choice;
        if (choice.method === 'ewallet') values.wallet_id = choice.wallet_id;
        if (choice.method === 'paypal' && choice.payee.method === 'paypal') values.paypal_email = choice.payee.email;
        if (choice.method === 'bank_account' && choice.payee.method === 'bank_account') {
          values.iban = choice.payee.iban;
          values.owner_name = choice.payee.owner_name;
          values.bic = choice.payee.bic ?? '';
        }
        switch (outcome.kind) {
          case 'processed': {
            const next =
              outcome.answer.transaction_status === 'pending_async' && typeof outcome.answer.redirect_url === 'string'
                ? outcome.answer.redirect_url
                : `/cashier/attempt/${outcome.attempt}`;
            if (next.startsWith('/') || sameOrigin(next, public_url())) return redirect(deps, response, session, next);
            // A challenge page elsewhere: a link, because form-action 'self' would stop a cross-origin redirect.
            return sendHtml(
              deps,
              response,
              session,
              200,
              cashierPage(view, continueAction(view, next, 'primary'), {
                tone: 'wait',
                title: view.say('pending_async'),
                lines: [view.say('pending_async_text')],
              }),
            );
          }
          case 'refused_by_merchant':
            return renderMain(response, browser, {
              method,
              values,
              alert:
                outcome.description === null
                  ? { tone: 'bad', title: view.say('not_confirmed') }
                  : {
                      tone: 'bad',
                      title: view.say('refused_by_merchant'),
                      lines: [view.say('refused_reason', { reason: outcome.description })],
                    },
            });
          case 'over_balance':
            return renderMain(response, browser, { method, values, errors: { amount: 'over_balance' }, code: 422 });
          case 'unavailable':
            return renderMain(response, browser, {
              method,
              values,
              alert: { tone: 'bad', title: view.say('unavailable') },
              ...(outcome.reason === 'wallet' ? { errors: { wallet_id: 'invalid_wallet' } } : {}),
              ...(outcome.reason === 'payee' ? { errors: { [method === 'paypal' ? 'paypal_email' : 'iban']: 'invalid_payee' } } : {}),
            });
          case 'busy':
            return renderMain(response, browser, { alert: { tone: 'wait', title: view.say('busy') } });
          case 'in_flight':
          case 'ended':
          case 'order_closed':
            return redirect(deps, response, session, '/cashier');
        }
      },
    ),
    signedInRoute(
      '/cashier/attempt/:attempt',
      'The result of a payment of the session (where 3-D Secure and the sandbox wallet return to)',
      async (request, response, browser) => {
        const { attempt } = request.params as { attempt: string };
        const session = browser.session;
        const row = /^[1-9][0-9]{0,5}$/.test(attempt) ? await attemptTransaction(deps, session, Number(attempt)) : null;
        if (!row) return redirect(deps, response, session, '/cashier');
        const { view, state } = await viewOf(deps, browser);
        const failed = (ATTEMPT_FAILED_STATUSES as readonly string[]).includes(row.status);
        const order_open = !isOrderSession(session) || session.order_status === 'pending';
        const can_retry = failed && browser.open && order_open && state.in_flight === null;
        let retry: Html | null = null;
        if (can_retry) {
          const methods = await methodsOf(session);
          const method = pickMethod(undefined, session, methods);
          retry = retrySection(view, methods, method);
        }
        const can_pay_again = browser.open && !isOrderSession(session) && state.remaining_minor !== 0;
        // Paid: the "open until" footer would invite a second payment nobody asked for.
        return sendHtml(
          deps,
          response,
          session,
          200,
          cashierPage(
            view,
            resultSection(view, row, `/cashier/attempt/${attempt}`, retry, can_pay_again),
            resultAlert(view, row),
            row.status !== 'approved',
          ),
        );
      },
    ),
  ];
}

function sameOrigin(url: string, base: string): boolean {
  try {
    return new URL(url).origin === new URL(base).origin;
  } catch {
    return false;
  }
}
