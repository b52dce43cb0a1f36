// One pino logger for the process. Card fields, secrets, signatures and tokens are redacted
// wherever they appear in a logged object, and challenge/session tokens are cut from URLs.
import pino, { type Logger } from 'pino';

const SENSITIVE_KEYS = [
  'card_number', 'card_number_encrypted', 'card_exp', 'card_exp_encrypted', 'cvv', 'cvv_encrypted', 'pan',
  'secret', 'signature', 'auth_token', 'card_token', 'token', 'password', 'master_key', 'authorization',
  'gt-authentication', 'cookie', 'set-cookie',
  // Direct payouts: the customer's bank account or wallet id (docs/payouts.md).
  'data_account_number',
];

const REDACT_PATHS = [
  ...SENSITIVE_KEYS.map((key) => `*.${key}`),
  ...SENSITIVE_KEYS.map((key) => `*.*.${key}`),
  ...SENSITIVE_KEYS,
  'req.headers.authorization',
  'req.headers["gt-authentication"]',
];

/** Path segments that are capabilities (challenge and cashier tokens) never reach a log. */
export function redactUrl(url: string): string {
  return url
    .replace(/\/(3ds|wallet|cashier|session|login)\/[A-Za-z0-9_-]{8,}/g, '/$1/[redacted]')
    .replace(/([?&](token|auth_token|card_token)=)[^&]*/g, '$1[redacted]');
}

export function createLogger(options: { level: string; destination?: string | null }): Logger {
  const destination = options.destination ? pino.destination({ dest: options.destination, sync: false, mkdir: true }) : pino.destination(1);
  return pino({
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: { method?: string; url?: string }) => ({ method: req.method, url: redactUrl(req.url ?? '') }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
      err: pino.stdSerializers.err,
    },
  }, destination);
}
