// The back office as a browser without JavaScript uses it, over real HTTP: a cookie jar, forms
// posted with the CSRF token of the page they came from, redirects seen (not followed) so tests
// can check them. And the users and records the back-office tests share.
import { postSigned } from './client.js';
import { saleA } from './bodies.js';
import type { TestGateway } from './gateway.js';
import { ADMIN_TOKEN } from './gateway.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { createUser } from '../../src/operations/backoffice-users.js';

export const PASSWORD = 'correct horse battery staple';

export interface PageAnswer {
  readonly status: number;
  readonly location: string | null;
  readonly text: string;
  readonly headers: Headers;
}

export class BackOfficeClient {
  private readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page read that had a form. */
  csrf: string | null = null;

  constructor(private readonly base_url: string) {}

  /**
   * Another client holding this one's cookies as they are now: a copy of a session cookie kept
   * aside, or the same browser reaching another instance (`base_url`) behind a load balancer.
   */
  copy(base_url = this.base_url): BackOfficeClient {
    const copy = new BackOfficeClient(base_url);
    for (const [name, value] of this.cookies) copy.cookies.set(name, value);
    copy.csrf = this.csrf;
    return copy;
  }

  /** A cookie's value as the server set it; undefined when there is none. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired =
        attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) ||
        attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now());
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private async read(response: Response): Promise<PageAnswer> {
    this.remember(response);
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text);
    if (token) this.csrf = token[1]!;
    return { status: response.status, location: response.headers.get('location'), text, headers: response.headers };
  }

  async get(path: string): Promise<PageAnswer> {
    return this.read(await fetch(`${this.base_url}${path}`, { redirect: 'manual', headers: { cookie: this.cookieHeader() } }));
  }

  /** Posts a form; with `csrf: false` the token is left out. */
  async post(path: string, form: Record<string, string>, options: { csrf?: boolean } = {}): Promise<PageAnswer> {
    const fields = new URLSearchParams(form);
    if (options.csrf !== false && this.csrf !== null) fields.set('_csrf', this.csrf);
    return this.read(
      await fetch(`${this.base_url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        body: fields.toString(),
        headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
  }

  /** Opens the sign-in page (for its token) and signs in; the answer of the sign-in POST. */
  async signIn(email: string, password = PASSWORD): Promise<PageAnswer> {
    await this.get('/backoffice/');
    return this.post('/backoffice/sign-in', { email, password });
  }
}

/** A page's visible text, roughly: tags dropped, whitespace folded; for comparing two pages. */
export function pageText(html: string): string {
  return html
    .replace(/<style>[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

export async function addUser(
  gw: TestGateway,
  email: string,
  role: 'operator' | 'merchant',
  merchant_id: string | null = null,
): Promise<void> {
  const outcome = await createUser(
    { store: gw.gateway.deps.store, clock: gw.gateway.deps.clock },
    { email, password: PASSWORD, role, merchant_id },
  );
  if (outcome.kind !== 'created') throw new Error(`user not created: ${JSON.stringify(outcome)}`);
}

export async function sale(
  gw: TestGateway,
  merchant: CreatedMerchant,
  overrides: Record<string, unknown> = {},
): Promise<{ trace_id: number; order_id: string; status: string }> {
  // Stamped on the gateway's clock, which the lock-out tests move forward.
  const body = saleA(merchant, { timestamp: Math.floor(gw.gateway.deps.clock.now_ms() / 1000), ...overrides });
  const answer = await postSigned(gw.url, '/api/process', body, merchant.secret);
  if (answer.body.status !== 0) throw new Error(`sale failed: ${JSON.stringify(answer.body)}`);
  return { trace_id: Number(answer.body.trace_id), order_id: String(body.order_id), status: String(answer.body.transaction_status) };
}

/** Moves the sandbox clock forward (lock-outs, expiries). With 0, an instance takes up what another moved (they share the offset). */
export async function advanceClock(gw: TestGateway, seconds: number): Promise<void> {
  const response = await fetch(`${gw.url}/sandbox/clock`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ advance_seconds: seconds }),
  });
  if (response.status !== 200) throw new Error(`clock not moved: ${response.status}`);
}

/**
 * Whether the UTC day (the overview's "today") is still the one of `since_ms`. A run that crosses
 * midnight between making its sales and reading the overview finds them under yesterday: a CI run
 * starting at 23:57 UTC on 2026-11-27 did. Tests check the day's figures only when it did not change.
 */
export function sameUtcDay(since_ms: number, now_ms = Date.now()): boolean {
  const DAY_MS = 86_400_000;
  return Math.floor(since_ms / DAY_MS) === Math.floor(now_ms / DAY_MS);
}
