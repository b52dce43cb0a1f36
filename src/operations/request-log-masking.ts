// What the request log keeps of a request's and an answer's body (issue 28, docs/security.md): a
// copy in which no card number, CVV, secret, signature or token is left in clear. By key name it
// follows the logger's rules (logging.ts isSensitiveKey), with card fields treated as the card
// rules do (domain/cards.ts maskPan): card_number keeps its first 6 and last 4 digits, CVV fields
// are dropped altogether, expiry and ciphertexts are redacted. Then, whatever the key, any run of
// 12 or more digits in a value (a PAN sent in the wrong field) is masked the same way, and URLs
// lose their capability tokens (logging.ts redactUrl).
import { maskPan } from '../domain/cards.js';
import { REQUEST_LOG_BODY_MAX_CHARS } from '../domain/request-log-record.js';
import { isSensitiveKey, REDACTED, REDACT_MAX_DEPTH, redactUrl } from '../logging.js';

/** Never kept, not even as a redacted key: a CVV, clear or encrypted. */
const DROPPED_KEY = /cvv|cvc|csc/i;
/** Card numbers: kept masked (first 6, last 4) when they are digits. */
const CARD_NUMBER_KEY = /^(card_number|pan)$/i;
/** Twelve digits or more, single spaces or dashes allowed between them (4111 1111 1111 1111). */
const DIGIT_RUN = /\d(?:[ -]?\d){11,}/g;
const URL_START = /^(https?:\/\/|\/)/i;

/** What is done with a key's value; keys repeat from request to request, so each is judged once (up to KEY_CACHE_MAX keys). */
type KeyRule = 'drop' | 'card_number' | 'redact' | 'walk';
const KEY_CACHE_MAX = 2_000;
const key_rules = new Map<string, KeyRule>();

function ruleOf(key: string): KeyRule {
  const known = key_rules.get(key);
  if (known !== undefined) return known;
  const rule: KeyRule = DROPPED_KEY.test(key)
    ? 'drop'
    : CARD_NUMBER_KEY.test(key)
      ? 'card_number'
      : isSensitiveKey(key)
        ? 'redact'
        : 'walk';
  if (key_rules.size < KEY_CACHE_MAX) key_rules.set(key, rule);
  return rule;
}

/** Every digit of a run but its first 6 and last 4 becomes '*'; separators stay. */
function maskRun(run: string): string {
  const digits = run.replace(/\D/g, '').length;
  let seen = 0;
  return run.replace(/\d/g, (digit) => {
    seen += 1;
    return seen <= 6 || seen > digits - 4 ? digit : '*';
  });
}

/** A string with every long digit run masked and, when it is a URL, its tokens cut. */
export function maskText(text: string): string {
  // Most values (names, codes, amounts as text) are too short to hold a card number or a token.
  if (text.length < 12) return text;
  const masked = text.replace(DIGIT_RUN, maskRun);
  return URL_START.test(masked) ? redactUrl(masked) : masked;
}

function maskValue(rule: KeyRule, value: unknown, depth: number): unknown {
  if (value === null || value === undefined) return value;
  if (rule === 'card_number') {
    const digits = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
    return /^\d{12,19}$/.test(digits) ? maskPan(digits) : REDACTED;
  }
  if (rule === 'redact') return REDACTED;
  return maskAny(value, depth);
}

function maskAny(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskText(value);
  // A number with 12 digits or more could be a PAN sent as a number.
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) >= 1e11 ? maskText(String(value)) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= REDACT_MAX_DEPTH) return Array.isArray(value) ? '[Array]' : '[Object]';
  if (Array.isArray(value)) return value.map((item) => maskAny(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const rule = ruleOf(key);
    if (rule === 'drop') continue;
    copy[maskText(key)] = maskValue(rule, field, depth + 1);
  }
  return copy;
}

/** The body as the request log keeps it: masked JSON text, cut to REQUEST_LOG_BODY_MAX_CHARS; null for none. */
export function maskedBodyJson(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return null;
  const text = JSON.stringify(maskAny(body, 0)) ?? null;
  if (text === null) return null;
  return text.length > REQUEST_LOG_BODY_MAX_CHARS ? `${text.slice(0, REQUEST_LOG_BODY_MAX_CHARS - 1)}…` : text;
}
