// One delivery attempt of one notification: sign the stored body, POST it, read the merchant's
// reply (spec §6.3) and say what it means. Nothing here touches the database; the worker
// records the attempt and decides when to try again (schedule.ts).
import type { AttemptOutcome } from '../domain/notification-record.js';
import { signaturesEqual, signBody, signHeader, verifyBody } from '../domain/signing.js';
import { SUBSCRIPTION_EVENT_KIND, subscriptionEventSignature } from './subscription-event.js';
import { DESTINATION_NOT_ALLOWED, type OutboundPolicy, type OutboundResult, postJson } from '../outbound/post.js';

/** What came of an attempt (delivered, refused, retry, undeliverable): the domain's, beside the attempt's record. */
export type { AttemptOutcome };

export interface AttemptResult {
  readonly outcome: AttemptOutcome;
  /** Short, for the operator: why it was resent, or what the merchant said. */
  readonly reason: string;
  readonly http_status: number | null;
  /** The start of the reply, cleaned (see replyExcerpt); null when there was no reply. */
  readonly reply_excerpt: string | null;
  readonly duration_ms: number;
}

/**
 * The body sent: the stored payload with its signature appended. The payload (timestamp
 * included) was fixed when the status changed, so every resend is byte-identical.
 */
export function signedNotificationBody(payload_json: string, secret: string): string {
  const payload = JSON.parse(payload_json) as Record<string, unknown>;
  return JSON.stringify({ ...payload, signature: signBody(payload, secret) });
}

const EXCERPT_CHARS = 300;

/** What an operator may see of a reply: control characters and long digit runs (card-like) removed, 96-hex signatures shortened, cut to 300 characters. */
export function replyExcerpt(text: string): string {
  const cleaned = text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .replace(/\b[0-9a-f]{96}\b/gi, (hex) => `${hex.slice(0, 8)}…`)
    .replace(/\d{12,19}/g, (digits) => `${digits.slice(0, 6)}…`);
  return cleaned.length > EXCERPT_CHARS ? `${cleaned.slice(0, EXCERPT_CHARS)}…` : cleaned;
}

function oneLine(text: unknown, max = 120): string {
  const value = typeof text === 'string' ? text.replace(/\s+/g, ' ').trim() : '';
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/** A v1.3-style reply: its Gt-Authentication header is sha384hex(status + timestamp + secret) over the reply's own values. */
function v13ReplyValid(message: Record<string, unknown>, header: string, secret: string): boolean {
  const { status, timestamp } = message;
  if (typeof status !== 'number' || typeof timestamp !== 'number') return false;
  return signaturesEqual(signHeader([status, timestamp], secret), header);
}

/** The meaning of an HTTP reply from the merchant (spec §6.3, §7). */
export function classifyReply(
  http_status: number,
  body: string,
  secret: string,
  /** Subscription events (issue 6): the reply may instead carry Gt-Authentication = sha384hex(status + timestamp + secret). */
  reply_header?: string | null,
): { outcome: AttemptOutcome; reason: string } {
  if (http_status < 200 || http_status > 299) return { outcome: 'retry', reason: `HTTP ${http_status}` };
  let reply: unknown;
  try {
    reply = JSON.parse(body);
  } catch {
    return { outcome: 'retry', reason: 'reply not recognized (not JSON)' };
  }
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply))
    return { outcome: 'retry', reason: 'reply not recognized (not a JSON object)' };
  const message = reply as Record<string, unknown>;
  const header_signed = typeof reply_header === 'string' && reply_header !== '';
  if (!header_signed && (message.signature === undefined || message.signature === null || message.signature === '')) {
    return { outcome: 'retry', reason: 'reply not signed' };
  }
  let valid: boolean;
  try {
    valid = (header_signed && v13ReplyValid(message, reply_header, secret)) || verifyBody(message, secret);
  } catch {
    valid = false; // a nested value cannot be signed
  }
  if (!valid) return { outcome: 'retry', reason: 'reply signature invalid' };
  const status = message.status;
  if (typeof status !== 'number' || !Number.isSafeInteger(status))
    return { outcome: 'retry', reason: 'reply not recognized (no integer status)' };
  if (status === 0) return { outcome: 'delivered', reason: 'acknowledged (status 0)' };
  const description = oneLine(message.description);
  if (status > 0) return { outcome: 'refused', reason: `refused by merchant (status ${status})${description ? `: ${description}` : ''}` };
  return { outcome: 'retry', reason: `merchant error (status ${status})${description ? `: ${description}` : ''}` };
}

export function resultOf(response: OutboundResult, secret: string, header_replies = false): AttemptResult {
  switch (response.kind) {
    case 'failed':
      return {
        outcome: response.reason === DESTINATION_NOT_ALLOWED ? 'undeliverable' : 'retry',
        reason: response.reason,
        http_status: null,
        reply_excerpt: null,
        duration_ms: response.duration_ms,
      };
    case 'reply_too_large':
      return {
        outcome: 'retry',
        reason: 'reply not recognized (body too large)',
        http_status: response.http_status,
        reply_excerpt: replyExcerpt(response.excerpt),
        duration_ms: response.duration_ms,
      };
    case 'reply': {
      const { outcome, reason } = classifyReply(
        response.http_status,
        response.body,
        secret,
        header_replies ? response.gt_authentication : undefined,
      );
      return {
        outcome,
        reason,
        http_status: response.http_status,
        reply_excerpt: replyExcerpt(response.body),
        duration_ms: response.duration_ms,
      };
    }
  }
}

/** Sends one notification once. Never throws. */
export async function sendNotification(
  notification: { readonly url: string; readonly payload_json: string; readonly kind?: string },
  secret: string,
  policy: OutboundPolicy,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  if (notification.kind === SUBSCRIPTION_EVENT_KIND) {
    // Subscription events (issue 6): the stored body as is, signed by the Gt-Authentication header (decisions.md §2).
    const header = subscriptionEventSignature(JSON.parse(notification.payload_json) as Record<string, unknown>, secret);
    return resultOf(
      await postJson(notification.url, notification.payload_json, policy, signal, { 'gt-authentication': header }),
      secret,
      true,
    );
  }
  const body = signedNotificationBody(notification.payload_json, secret);
  return resultOf(await postJson(notification.url, body, policy, signal), secret);
}
