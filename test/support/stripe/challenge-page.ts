// The HTML pages of the fake Stripe's 3-D Secure test page (fake.ts serves them at
// /3d_secure_2_test/{payment intent}/{token}). They are for a real person in Chromium, so they
// look like the page Stripe shows in test mode instead of the bank's: two buttons, "Complete
// authentication" and "Fail authentication", with the element ids public end-to-end tests click
// on Stripe's own page (#test-source-authorize-3ds, #test-source-fail-3ds); Stripe's docs: "the
// authentication process displays a mock authentication page. On that page, you can either
// authorize or cancel the payment" (https://docs.stripe.com/payments/3d-secure/authentication-flow#testing).
// Plain HTML, one form, no script.
import { escapeHtml, htmlPage } from '../fake-processor/html.js';

export interface ChallengePageInput {
  /** The form's target (the page's own path). */
  readonly action: string;
  readonly amount: number;
  readonly currency: string;
  readonly merchant: string;
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:0;padding:0 16px;background:#f6f9fc;color:#1a1f36}' +
  'main{max-width:440px;margin:48px auto;background:#fff;border-radius:8px;padding:24px;box-shadow:0 2px 6px rgba(0,0,0,.12)}' +
  'h1{font-size:1.2rem;margin:0 0 8px}p{margin:0 0 16px;line-height:1.45}' +
  '.badge{display:inline-block;font-size:.75rem;font-weight:600;background:#ffde92;color:#5f3200;border-radius:4px;padding:2px 6px;margin-bottom:12px}' +
  'form{display:flex;flex-direction:column;gap:10px}' +
  'button{padding:12px;font-size:1rem;border-radius:4px;cursor:pointer;border:1px solid #635bff}' +
  '#test-source-authorize-3ds{background:#635bff;color:#fff}#test-source-fail-3ds{background:#fff;color:#635bff}' +
  '.small{font-size:.85rem;color:#697386;margin:16px 0 0}';

export { escapeHtml };

function shell(title: string, body: string): string {
  return htmlPage(title, STYLE, body);
}

/** Minor units shown with two decimals (the tests use two-decimal currencies). */
function formatAmount(amount: number, currency: string): string {
  return `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
}

export function challengePage(input: ChallengePageInput): string {
  return shell(
    '3D Secure 2 Test Page',
    '<span class="badge">TEST MODE</span><h1>3D Secure 2 Test Page</h1>' +
      `<p>Payment of <strong>${escapeHtml(formatAmount(input.amount, input.currency))}</strong> to ${escapeHtml(input.merchant)}.</p>` +
      "<p>In test mode this page stands in for the card issuer's authentication. Choose the outcome.</p>" +
      `<form id="form" method="post" action="${escapeHtml(input.action)}">` +
      '<button id="test-source-authorize-3ds" type="submit" name="outcome" value="complete">Complete authentication</button>' +
      '<button id="test-source-fail-3ds" type="submit" name="outcome" value="fail">Fail authentication</button>' +
      '</form><p class="small">Simulated by the tests\' Stripe.</p>',
  );
}

/** Shown when the authentication is over and there is no return_url to send the browser to. */
export function finishedPage(authenticated: boolean): string {
  return shell(
    '3D Secure 2 Test Page',
    `<h1>${authenticated ? 'Authentication complete' : 'Authentication failed'}</h1><p>You can close this window.</p>`,
  );
}

export function unknownAuthenticationPage(): string {
  return shell('3D Secure 2 Test Page', '<h1>Unknown authentication</h1><p>This link is not valid.</p>');
}
