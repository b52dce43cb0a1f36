// The HTML pages of the fake Checkout.com 3-D Secure challenge (fake.ts serves them at /3ds/:sid).
// They are for a real person in Chromium, so they look like the sandbox's simulator: one password
// field labelled "Password" and a "Continue" button, with the element ids public end-to-end tests
// use against the real sandbox (form#form, input#password, #txtButton). Plain HTML, no script.
import { escapeHtml, htmlPage } from '../fake-processor/html.js';

export interface ChallengePageInput {
  readonly session_id: string;
  readonly amount: number;
  readonly currency: string;
  /** Shown after a wrong password was refused by an earlier attempt (not used by the fake: one attempt decides). */
  readonly notice?: string;
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:0;padding:0 16px;background:#f3f4f6;color:#111}' +
  'main{max-width:420px;margin:48px auto;background:#fff;border-radius:8px;padding:24px;box-shadow:0 1px 4px rgba(0,0,0,.12)}' +
  'h1{font-size:1.25rem;margin:0 0 8px}p{margin:0 0 16px;line-height:1.4}' +
  'label{display:block;font-weight:600;margin-bottom:6px}' +
  'input{width:100%;box-sizing:border-box;padding:10px;font-size:1rem;border:1px solid #9ca3af;border-radius:4px;margin-bottom:16px}' +
  'button{width:100%;padding:12px;font-size:1rem;border:0;border-radius:4px;background:#1d4ed8;color:#fff;cursor:pointer}' +
  '.small{font-size:.85rem;color:#4b5563;margin:16px 0 0}';

export { escapeHtml };

function shell(title: string, body: string): string {
  return htmlPage(title, STYLE, body);
}

/** Minor units shown with two decimals (the fake only sees two-decimal currencies in tests). */
function formatAmount(amount: number, currency: string): string {
  return `${(amount / 100).toFixed(2)} ${currency}`;
}

export function challengePage(input: ChallengePageInput): string {
  const action = `/3ds/${encodeURIComponent(input.session_id)}`;
  return shell(
    'Checkout.com 3D Secure (sandbox)',
    '<h1>3D Secure authentication</h1>' +
      `<p>Payment of <strong>${escapeHtml(formatAmount(input.amount, input.currency))}</strong>. Enter your password to continue.</p>` +
      (input.notice ? `<p role="alert">${escapeHtml(input.notice)}</p>` : '') +
      `<form id="form" method="post" action="${escapeHtml(action)}">` +
      '<label for="password">Password</label>' +
      '<input id="password" name="password" type="password" autocomplete="off" required>' +
      '<button id="txtButton" type="submit">Continue</button>' +
      '</form><p class="small">Simulated challenge of a test processor.</p>',
  );
}

/** Shown when the payment had no success_url/failure_url to send the browser back to. */
export function finishedPage(authenticated: boolean): string {
  return shell(
    'Checkout.com 3D Secure (sandbox)',
    `<h1>${authenticated ? 'Authentication complete' : 'Authentication failed'}</h1>` + '<p>You can close this window.</p>',
  );
}

export function unknownSessionPage(): string {
  return shell('Checkout.com 3D Secure (sandbox)', '<h1>Unknown authentication session</h1><p>This link is not valid.</p>');
}
