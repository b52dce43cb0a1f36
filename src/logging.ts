// One pino logger for the process. Card fields, secrets, signatures and tokens are redacted
// wherever they appear in a logged object, at any depth, and challenge/session tokens are cut
// from URLs.
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';

const SENSITIVE_KEYS = [
  'card_number',
  'card_number_encrypted',
  'card_exp',
  'card_exp_encrypted',
  'cvv',
  'cvv_encrypted',
  'pan',
  'secret',
  'signature',
  'auth_token',
  'card_token',
  'token',
  'password',
  'master_key',
  'authorization',
  'gt-authentication',
  'cookie',
  'set-cookie',
  'admin_token',
  // Direct payouts and cashier wallet deposits: the customer's bank account or wallet id (docs/payouts.md).
  'data_account_number',
  'wallet_id',
];

/** Besides the names above: any key that names a secret, token, signature, password or CVV, in any case. */
const SENSITIVE_PATTERN =
  /secret|token|signature|password|passwd|cvv|authori[sz]ation|authentication|cookie|master_key|^pan$|^card_(number|exp)/i;

const SENSITIVE = new Set(SENSITIVE_KEYS);

export const REDACTED = '[redacted]';

/** Nesting deeper than this is cut (as "[Object]" / "[Array]") rather than written unchecked. */
export const REDACT_MAX_DEPTH = 12;

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE.has(key.toLowerCase()) || SENSITIVE_PATTERN.test(key);
}

/**
 * A copy of `value` in which every sensitive key, at any depth, holds "[redacted]". Plain objects,
 * arrays and class instances (their own enumerable fields, as JSON would write them) are walked;
 * values that write themselves (toJSON: Date, Buffer, URL) are kept; a cycle becomes "[Circular]".
 * Errors keep their message and stack, which JSON would otherwise drop.
 */
export function redactDeep(value: unknown, depth = 0, seen: Set<object> = new Set()): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function' || ArrayBuffer.isView(value)) return value;
  if (depth >= REDACT_MAX_DEPTH) return Array.isArray(value) ? '[Array]' : '[Object]';
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1, seen));
    const copy: Record<string, unknown> = {};
    if (value instanceof Error) {
      copy.type = value.constructor.name;
      copy.message = value.message;
      if (value.stack !== undefined) copy.stack = value.stack;
    }
    for (const key of Object.keys(value)) {
      const field = (value as Record<string, unknown>)[key];
      copy[key] = isSensitiveKey(key) && field !== undefined && field !== null ? REDACTED : redactDeep(field, depth + 1, seen);
    }
    return copy;
  } finally {
    seen.delete(value);
  }
}

/** Keys whose serializers below turn the value into something safe (and small): not walked first. */
const SERIALIZED_KEYS = new Set(['req', 'res', 'err']);

/** pino's log hook: redacts the logged object at any depth before it is written. */
export function redactLogObject(object: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (isSensitiveKey(key) && value !== undefined && value !== null) copy[key] = REDACTED;
    else if (SERIALIZED_KEYS.has(key)) copy[key] = value;
    else copy[key] = redactDeep(value, 1);
  }
  return copy;
}

/**
 * Query parameter names that can carry a credential: besides the sensitive keys above, every
 * spelling of an API key, access key, signature, session or bearer value. The gateway accepts
 * no credential in a query string (http/admin-auth.ts); one sent there anyway never reaches a log.
 */
const CREDENTIAL_PARAMETER = /key|sig|auth|cred|session|jwt|bearer|pass|code|token|secret/i;

export function isCredentialParameter(name: string): boolean {
  return isSensitiveKey(name) || CREDENTIAL_PARAMETER.test(name);
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/** Path segments that are capabilities (challenge and cashier tokens) and query values that can be credentials never reach a log. */
export function redactUrl(url: string): string {
  const query_at = url.indexOf('?');
  const path = query_at === -1 ? url : url.slice(0, query_at);
  const query = query_at === -1 ? null : url.slice(query_at + 1);
  const redacted_path = path
    .replace(/\/(3ds|wallet|cashier|session|login)\/[A-Za-z0-9_-]{8,}/g, '/$1/[redacted]')
    // The way back from a processor's 3-D Secure page: its check proves the link was the gateway's.
    .replace(/\/return\/([0-9]+)\/[0-9a-f]{8,}/g, '/return/$1/[redacted]');
  if (query === null) return redacted_path;
  const redacted_query = query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return equals !== -1 && isCredentialParameter(decodedName(name)) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${redacted_path}?${redacted_query}`;
}

/**
 * The log file, opened now: pino's destination opens a path asynchronously, and a process that
 * exits before it is open (a start refused at once: the data folder in use, a bad key file) made
 * pino's exit flush throw "sonic boom is not ready yet" after the refusal. With the descriptor
 * open, the flush at exit writes what was logged and the refusal is the only thing printed.
 */
function openLogFile(file: string): number {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return fs.openSync(file, 'a');
}

export function createLogger(options: { level: string; destination?: string | null }): Logger {
  const destination = options.destination ? pino.destination({ dest: openLogFile(options.destination), sync: false }) : pino.destination(1);
  const logger = pino(
    {
      level: options.level,
      // Every logged object is redacted at any depth (redactDeep); pino's path-based redact would
      // only reach the depths written in its paths.
      formatters: {
        log: redactLogObject,
      },
      serializers: {
        req: (req: { method?: string; url?: string }) => ({ method: req.method, url: redactUrl(req.url ?? '') }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        // An error's own fields (a driver's detail, a request body kept on it) are redacted too.
        err: (error: Error) => redactDeep(pino.stdSerializers.err(error)) as ReturnType<typeof pino.stdSerializers.err>,
      },
    },
    destination,
  );
  // A child logger's bindings skip formatters.log (pino resets the bindings formatter for children),
  // so they are redacted as they are bound. Children are created from their parent's prototype,
  // so this one wrapper serves every descendant too.
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, child_options) {
    return child.call(this, redactLogObject(bindings), child_options);
  } as Logger['child'];
  return logger;
}
