// The endpoint checker (issue 28, item 4): sends a merchant's notification endpoint signed
// notifications built to find the usual bugs, reads each reply as the gateway's notification
// worker would (notifications/sender.ts classifyReply: HTTP 2xx, JSON, signed with the merchant's
// secret, integer status) and grades it against what a correct endpoint does. Every notification
// carries `test: "1"` (like the back office's test notification) and trace_ids no transaction has,
// so a correct endpoint ships nothing; its contract is: verify the signature over every field
// received, refuse a bad or missing one with a positive status, acknowledge (status 0) a valid
// test notification however often and in whatever order it comes, and answer signed, in time.
//
// It only ever calls the URL it is given, under the notifications' own outbound rules (time-out,
// reply cap, no redirects, private addresses refused in live mode), one request at a time.
import { randomInt } from 'node:crypto';
import { signBody, verifyBody } from '../domain/signing.js';
import { RANDOM_TRACE_ID_END, TRACE_ID_MAX } from '../domain/trace-id.js';
import { buildTestNotificationPayload, type NotificationPayload } from '../notifications/payload.js';
import { classifyReply } from '../notifications/sender.js';
import { DESTINATION_NOT_ALLOWED, type OutboundResult, postJson } from '../outbound/post.js';
import type { OperationDeps } from './deps.js';
import { notificationPolicy, refusedUrl } from './merchant-credentials.js';

export type CheckVerdict = 'pass' | 'warn' | 'fail';

export interface CheckLine {
  /** 1-based, the order the checks run in. */
  readonly step: number;
  readonly id: CheckId;
  /** What the check sends. */
  readonly title: string;
  /** What a correct endpoint does. */
  readonly expected: string;
  /** What this one did: its status, HTTP code, signature, time. */
  readonly observed: string;
  readonly verdict: CheckVerdict;
  /** How to fix it; null when it passed. */
  readonly fix: string | null;
  readonly duration_ms: number;
}

export type CheckId =
  | 'acknowledges'
  | 'duplicate'
  | 'newer_status'
  | 'older_after_newer'
  | 'extra_fields'
  | 'bad_signature'
  | 'unsigned'
  | 'unknown_trace'
  | 'slow_resend';

export interface EndpointReport {
  readonly url: string;
  readonly merchant_id: string;
  readonly lines: readonly CheckLine[];
  readonly passed: number;
  readonly warnings: number;
  readonly failed: number;
}

export type EndpointCheckOutcome =
  | { readonly kind: 'report'; readonly report: EndpointReport }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'url_not_allowed'; readonly reason: string };

/** The longest wait before the slow resend: long enough to catch state kept per request, short enough for a person waiting. */
export const SLOW_RESEND_MAX_MS = 30_000;
export const SLOW_RESEND_DEFAULT_MS = 2_000;

/** One reply as the checker reads it. */
interface Exchange {
  readonly reached: boolean;
  /** The worker's reading (delivered, refused, retry). */
  readonly outcome: 'delivered' | 'refused' | 'retry' | 'undeliverable';
  readonly reason: string;
  readonly http_status: number | null;
  /** The reply's integer status, signed or not; null when there is none. */
  readonly status: number | null;
  readonly signed: boolean;
  readonly duration_ms: number;
}

function readExchange(result: OutboundResult, secret: string): Exchange {
  if (result.kind === 'failed') {
    return {
      reached: false,
      outcome: result.reason === DESTINATION_NOT_ALLOWED ? 'undeliverable' : 'retry',
      reason: result.reason,
      http_status: null,
      status: null,
      signed: false,
      duration_ms: result.duration_ms,
    };
  }
  if (result.kind === 'reply_too_large') {
    return {
      reached: true,
      outcome: 'retry',
      reason: 'reply too large',
      http_status: result.http_status,
      status: null,
      signed: false,
      duration_ms: result.duration_ms,
    };
  }
  const { outcome, reason } = classifyReply(result.http_status, result.body, secret);
  let status: number | null = null;
  let signed = false;
  try {
    const parsed = JSON.parse(result.body) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const message = parsed as Record<string, unknown>;
      if (typeof message.status === 'number' && Number.isSafeInteger(message.status)) status = message.status;
      signed = typeof message.signature === 'string' && message.signature !== '' && safeVerify(message, secret);
    }
  } catch {
    // Not JSON: classifyReply has said so.
  }
  return { reached: true, outcome, reason, http_status: result.http_status, status, signed, duration_ms: result.duration_ms };
}

function safeVerify(message: Record<string, unknown>, secret: string): boolean {
  try {
    return verifyBody(message, secret);
  } catch {
    return false;
  }
}

function describe(x: Exchange): string {
  if (!x.reached) return `no answer: ${x.reason}`;
  const parts = [`HTTP ${x.http_status}`];
  parts.push(x.status === null ? 'no integer status' : `status ${x.status}`);
  parts.push(x.signed ? 'signed' : 'not signed correctly');
  parts.push(`${Math.round(x.duration_ms)} ms`);
  // The worker's own words when it would send it again (not signed, signature invalid, HTTP 500...).
  return x.outcome === 'retry' ? `${parts.join(', ')}: ${x.reason}` : parts.join(', ');
}

/** Why a reply the gateway would resend is wrong, and what to do: the same words for every check that expects an acknowledgement. */
function retryFix(x: Exchange, timeout_ms: number): string {
  if (!x.reached) {
    return /timed out|time-out|timeout/i.test(x.reason)
      ? `Answer within ${Math.round(timeout_ms / 1000)} s: verify, store, answer; do slow work (e-mails, fulfilment) after answering.`
      : 'Make the URL reachable from the gateway (DNS, TLS certificate, firewall), or fix the URL.';
  }
  if (x.http_status === null || x.http_status < 200 || x.http_status > 299)
    return 'Answer HTTP 200 with the JSON reply of spec §6.3, also when you refuse (a positive status says so).';
  if (x.status === null)
    return 'Answer a JSON object with an integer status (0 accepted, positive refused), description, version, timestamp and signature.';
  if (!x.signed)
    return "Sign the reply as every message (decisions §1): signature over all of the reply's fields but signature, with the merchant's current secret.";
  return 'A negative status asks the gateway to send it again (for up to 72 hours): answer 0 once it is stored, a positive status to refuse it for good.';
}

interface Check {
  readonly id: CheckId;
  readonly title: string;
  readonly expected: string;
  /** The body to send: signed, or deliberately not. */
  readonly body: string;
  readonly wait_before_ms?: number;
  grade(x: Exchange): { verdict: CheckVerdict; fix: string | null };
}

/** An acknowledgement is expected: status 0, signed, HTTP 2xx, in time. */
function acknowledged(refused_fix: string, refused_verdict: CheckVerdict = 'fail') {
  return (x: Exchange, timeout_ms: number): { verdict: CheckVerdict; fix: string | null } => {
    if (x.outcome === 'delivered') return { verdict: 'pass', fix: null };
    if (x.outcome === 'refused') return { verdict: refused_verdict, fix: refused_fix };
    return { verdict: 'fail', fix: retryFix(x, timeout_ms) };
  };
}

/** A forged or unsigned notification must be refused: a positive status, or HTTP 4xx; never status 0. */
function refusedForgery(what: string) {
  return (x: Exchange): { verdict: CheckVerdict; fix: string | null } => {
    const fix = `Verify the signature (decisions §1) before reading anything else, with a constant-time comparison, and answer a positive status (1) when ${what}.`;
    if (x.status === 0) return { verdict: 'fail', fix: `It accepted a notification anyone could have sent. ${fix}` };
    if ((x.status !== null && x.status > 0) || (x.http_status !== null && x.http_status >= 400 && x.http_status < 500))
      return { verdict: 'pass', fix: null };
    if (!x.reached) return { verdict: 'fail', fix: retryFix(x, 0) };
    return { verdict: 'warn', fix: `It did not accept it, but asked for it again (${describe(x)}). ${fix}` };
  };
}

function signed(payload: NotificationPayload, secret: string): string {
  return JSON.stringify({ ...payload, signature: signBody(payload, secret) });
}

/**
 * Runs the checks against `url` for `merchant_id` and grades each. Never throws for what the
 * endpoint does; `slow_resend_ms` is the wait before the last check (0 to SLOW_RESEND_MAX_MS).
 */
export async function checkEndpoint(
  deps: Pick<OperationDeps, 'merchants' | 'config' | 'clock' | 'logger'>,
  merchant_id: string,
  url: string,
  options: { readonly slow_resend_ms?: number } = {},
): Promise<EndpointCheckOutcome> {
  const merchant = await deps.merchants.findFresh(merchant_id);
  if (!merchant) return { kind: 'not_found' };
  const policy = notificationPolicy(deps);
  const refused = refusedUrl(url, policy);
  if (refused !== null) return { kind: 'url_not_allowed', reason: refused };
  const slow_ms = Math.min(SLOW_RESEND_MAX_MS, Math.max(0, options.slow_resend_ms ?? SLOW_RESEND_DEFAULT_MS));
  const secret = merchant.secret;
  const now_s = Math.floor(deps.clock.now_ms() / 1000);
  // trace_ids no transaction has, as the test notification's 0: the top of int(11), above every
  // drawn trace_id (domain/trace-id.ts). randomInt's end is exclusive, so the +1 stays within it.
  const trace_id = randomInt(RANDOM_TRACE_ID_END, TRACE_ID_MAX);
  const unknown_trace_id = trace_id + 1;
  const base = buildTestNotificationPayload(merchant, now_s);
  const order_id = `endpoint-check-${now_s}`;
  const pending: NotificationPayload = { ...base, trace_id, order_id, transaction_status: 'pending' };
  const approved: NotificationPayload = {
    ...pending,
    transaction_status: 'approved',
    transaction_id: `check-${trace_id}`,
    timestamp: now_s + 1,
  };
  const with_extra: NotificationPayload = {
    ...approved,
    psp_additional_details: 'check=extra',
    field_added_later: 'a field your code does not know',
  };
  const forged = JSON.parse(signed(approved, secret)) as Record<string, unknown>;
  const signature = String(forged.signature);
  forged.signature = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
  const unsigned = { ...approved };
  const unknown: NotificationPayload = { ...approved, trace_id: unknown_trace_id, order_id: `${order_id}-unknown`, transaction_id: '' };
  const timeout_ms = policy.timeout_ms;

  const checks: Check[] = [
    {
      id: 'acknowledges',
      title: 'a signed notification (pending, marked test)',
      expected: 'status 0, a signed reply, HTTP 200, in time',
      body: signed(pending, secret),
      grade: (x) =>
        acknowledged('A valid, signed notification marked test=1 must be acknowledged (status 0) without shipping anything.')(
          x,
          timeout_ms,
        ),
    },
    {
      id: 'duplicate',
      title: 'the same notification again, byte for byte',
      expected: 'status 0 again: the gateway resends until it hears 0',
      body: signed(pending, secret),
      grade: (x) =>
        acknowledged(
          'Acknowledge a duplicate again (status 0): process a (trace_id, transaction_status) once, answer it every time.',
          'warn',
        )(x, timeout_ms),
    },
    {
      id: 'newer_status',
      title: 'the final status (approved) of the same trace_id',
      expected: 'status 0',
      body: signed(approved, secret),
      grade: (x) => acknowledged('Acknowledge a status change of a transaction you acknowledged before.')(x, timeout_ms),
    },
    {
      id: 'older_after_newer',
      title: 'the older status (pending) again, after approved',
      expected: 'status 0, keeping approved: notifications may arrive out of order',
      body: signed(pending, secret),
      grade: (x) =>
        acknowledged(
          'Acknowledge a notification older than one you have (compare its timestamp or the status order) and keep the newer status.',
          'warn',
        )(x, timeout_ms),
    },
    {
      id: 'extra_fields',
      title: 'approved again, with fields your code does not know, signed over all of them',
      expected: 'status 0: the signature covers every field received',
      body: signed(with_extra, secret),
      grade: (x) =>
        acknowledged(
          'Verify the signature over every field received except signature (sorted by name, decisions §1), not over a list of the fields you know: the gateway may add fields.',
        )(x, timeout_ms),
    },
    {
      id: 'bad_signature',
      title: 'approved with a wrong signature (one character changed)',
      expected: 'a positive status (or HTTP 4xx): refused, never 0',
      body: JSON.stringify(forged),
      grade: (x) => refusedForgery('the signature does not match')(x),
    },
    {
      id: 'unsigned',
      title: 'approved with no signature at all',
      expected: 'a positive status (or HTTP 4xx): refused, never 0',
      body: JSON.stringify(unsigned),
      grade: (x) => refusedForgery('there is no signature')(x),
    },
    {
      id: 'unknown_trace',
      title: 'a final status for a trace_id you have never seen',
      expected: 'status 0 or a positive status; never an error that asks for resends',
      body: signed(unknown, secret),
      grade: (x) => {
        if (x.outcome === 'delivered' || x.outcome === 'refused') return { verdict: 'pass', fix: null };
        return {
          verdict: 'fail',
          fix: `${retryFix(x, timeout_ms)} A notification for a transaction you do not know (another system's, a test) must not fail: answer 0 or a positive status.`,
        };
      },
    },
    {
      id: 'slow_resend',
      title: `the approved notification again, ${Math.round(slow_ms / 1000)} s later`,
      expected: 'status 0 again',
      wait_before_ms: slow_ms,
      body: signed(approved, secret),
      grade: (x) =>
        acknowledged(
          'Acknowledge a resend that comes later (status 0): what you stored must not depend on the first request still running.',
        )(x, timeout_ms),
    },
  ];

  const lines: CheckLine[] = [];
  for (const [index, check] of checks.entries()) {
    if (check.wait_before_ms) await new Promise((resolve) => setTimeout(resolve, check.wait_before_ms));
    const exchange = readExchange(await postJson(url, check.body, policy), secret);
    if (exchange.outcome === 'undeliverable') return { kind: 'url_not_allowed', reason: exchange.reason };
    const graded = check.grade(exchange);
    lines.push({
      step: index + 1,
      id: check.id,
      title: check.title,
      expected: check.expected,
      observed: describe(exchange),
      verdict: graded.verdict,
      fix: graded.fix,
      duration_ms: Math.round(exchange.duration_ms),
    });
  }
  const count = (verdict: CheckVerdict) => lines.filter((line) => line.verdict === verdict).length;
  const report: EndpointReport = { url, merchant_id, lines, passed: count('pass'), warnings: count('warn'), failed: count('fail') };
  deps.logger.info({ merchant_id, passed: report.passed, warnings: report.warnings, failed: report.failed }, 'endpoint checked');
  return { kind: 'report', report };
}
