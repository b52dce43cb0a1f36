// One typed configuration, read from the environment and validated at start.
// Every limit and schedule of the gateway lives here so an operator finds them in one place.
import net from 'node:net';
import path from 'node:path';
import type { ConnectorOptions } from './connectors/connector.js';
import type { Environment } from './domain/environment.js';

export type { Environment } from './domain/environment.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Base of every redirect_url; null means "the address the server is bound to". */
  readonly public_url: string | null;
  readonly environment: Environment;
  /** Unset: the embedded SQLite store under data_dir. */
  readonly database_url: string | null;
  readonly data_dir: string;
  /** 32 bytes; null means "use or create the key file" (master_key_file; embedded store only). */
  readonly master_key: Buffer | null;
  /**
   * During a master-key rotation (docs/production.md), the key being replaced:
   * PAYGATE_MASTER_KEY_PREVIOUS, which opens values sealed under it and never seals. With a key
   * file, the previous key is the file `<master_key_file>.previous` instead.
   */
  readonly master_key_previous: Buffer | null;
  /**
   * How often a running gateway reads which master key the store seals under (the rotation's
   * switch, operations/master-key.ts): PAYGATE_KEY_REFRESH_MS, 5 s.
   */
  readonly key_refresh_ms: number;
  /**
   * Where the embedded store's key file is read (or created): PAYGATE_MASTER_KEY_FILE, by default
   * master.key in data_dir, beside the database. A copy of the data folder then holds the data and
   * the key that opens it, so live mode warns at start (docs/security.md).
   */
  readonly master_key_file: string;
  readonly admin_token: string | null;
  readonly log_level: string;
  readonly log_file: string | null;
  /**
   * Gateway processes `paygate start` runs on this machine, sharing one port (node:cluster).
   * More than 1 needs PostgreSQL: the embedded SQLite store is single-process. See docs/scale-out.md.
   */
  readonly workers: number;
  /**
   * Embedded store: commit concurrent transactions together (store/group-commit.ts). On by
   * default; off only to measure what it brings. Durability is the same either way.
   */
  readonly group_commit: boolean;
  readonly limits: Limits;
  readonly schedules: Schedules;
}

export interface Limits {
  readonly body_max_bytes: number;
  readonly body_max_fields: number;
  readonly request_window_seconds: number;
  readonly amount_max_minor: number;
  readonly idempotency_wait_ms: number;
  /** Time-out of every outbound request (notifications, validation requests): connect, send and read the reply. */
  readonly outbound_timeout_ms: number;
  /** Largest reply body read from a merchant; a longer one is refused as unrecognized. */
  readonly outbound_reply_max_bytes: number;
  /** Live mode: allow notification and validation URLs on loopback, private or link-local addresses. */
  readonly allow_private_urls: boolean;
  /**
   * Time-out of one request to a payment processor: connect, send and read its answer. An
   * answer not read by then is an unknown outcome, settled by asking the processor
   * (docs/connectors.md); a payment is never decided on a time-out.
   */
  readonly processor_timeout_ms: number;
  /** Connecting to a processor (DNS, TCP, TLS): a connection never made sent nothing, so that failure is final. */
  readonly processor_connect_timeout_ms: number;
  /** Largest answer read from a processor; a longer one counts as lost. */
  readonly processor_reply_max_bytes: number;
  /** Requests to one gateway's processor in flight at once, at most (outbound/processor-guard.ts); more are refused unsent. */
  readonly processor_max_in_flight: number;
  /** Requests waiting for one of those slots, at most; then refused at once. */
  readonly processor_max_waiting: number;
  /** How long a request waits for a slot before it is refused; 0: refused at once. */
  readonly processor_wait_max_ms: number;
  /** Failures in a row (no answer, or HTTP 5xx) that open a gateway's circuit breaker. */
  readonly processor_breaker_failures: number;
  /** How long an open breaker refuses at once before one probe is let through. */
  readonly processor_breaker_open_ms: number;
  /**
   * How many times a sale declined softly or failed by a processor error is tried again on the
   * merchant's next routing candidate (the cascade); 0 turns it off.
   */
  readonly cascade_max_retries: number;
  readonly pg_pool_max: number;
  /** Mean event-loop delay above which API requests are answered 503 (status 29); 0 turns it off. */
  readonly shed_event_loop_delay_ms: number;
  /** The embedded store's page cache per connection (two connections), in MB. */
  readonly sqlite_cache_mb: number;
  /** How long a merchant that was found is served from memory (domain/merchants.ts); 0 reads it every time. */
  readonly merchant_cache_ms: number;
  /** How long a merchant_id that was not found is answered as unknown without asking the store again; 0 asks every time. */
  readonly unknown_merchant_cache_ms: number;
  /** A request whose headers and body are not all received by then is answered 408 and its connection closed (decisions.md §15). */
  readonly request_timeout_ms: number;
  /** A request whose headers are not all received by then is answered 408 and its connection closed; at most request_timeout_ms. */
  readonly headers_timeout_ms: number;
  /** Requests per minute from one client address (every route but /healthz and /metrics), per instance; 0: no limit. */
  readonly rate_per_address_per_minute: number;
  /**
   * The proxies in front (PAYGATE_TRUSTED_PROXIES: addresses, CIDR ranges, or loopback /
   * linklocal / uniquelocal): a request from one of them is taken to be from the last address in
   * its X-Forwarded-For that is not one of them (rate limits, sign-in, the audit log). Empty:
   * X-Forwarded-For is ignored and the client is the TCP peer.
   */
  readonly trusted_proxies: readonly string[];
  /** Back-office sign-in attempts per minute from one client address (docs/backoffice.md §4); 0: off. */
  readonly rate_sign_in_per_address_per_minute: number;
  /**
   * A back-office session with no request for longer than this is ended and its person signs in
   * again (PCI DSS 8.2.8: 15 minutes at most); the 8 hours from sign-in still end it whatever.
   */
  readonly backoffice_idle_timeout_ms: number;
  /** API requests per minute of one merchant, per instance; 0: no limit. */
  readonly rate_per_merchant_per_minute: number;
  /** The request log (operations/request-log.ts): rows older than this many days are pruned; 0 keeps no request log at all. */
  readonly request_log_days: number;
  /** The request log keeps at most this many rows (the newest); pruned every minute, so it may pass it by a minute's requests. */
  readonly request_log_max_rows: number;
}

export interface Schedules {
  /** How long a customer has to finish a 3-D Secure challenge. */
  readonly challenge_timeout_seconds: number;
  /** Cashier: how long a session, its auth_token and its order live (spec §8: 15 minutes). */
  readonly cashier_session_seconds: number;
  /** Sandbox: how long an asynchronous processor takes (CVV 222/223). */
  readonly sandbox_async_settle_seconds: number;
  /** Sandbox: how long before CVV 588 with amount 713 times out. */
  readonly sandbox_issuer_timeout_seconds: number;
  readonly due_work_poll_ms: number;
  /**
   * A transaction reserved but never finished (the process died during the processor call) is
   * looked up at its processor after this, and settled by what the processor says. Longer than
   * any processor call (processor_timeout_ms), so a call still running is never overtaken.
   */
  readonly stuck_processing_seconds: number;
  /**
   * When the processor is asked again about an outcome the gateway did not get (a time-out, a
   * 3-D Secure nobody came back from, a pending result no webhook settled): the n-th lookup waits
   * processor_lookup_seconds[min(n-1, length-1)] seconds after the one before.
   */
  readonly processor_lookup_seconds: readonly number[];
  /** After this long the gateway stops asking and leaves the transaction to the operator (logged as an error). */
  readonly processor_lookup_max_age_seconds: number;
  /** The n-th resend waits notify_retry_seconds[min(n-1, length-1)] seconds. */
  readonly notify_retry_seconds: readonly number[];
  /** After this long since it was created, a notification that was not acknowledged is marked failed. */
  readonly notify_max_age_seconds: number;
  /** How often the delivery worker looks for due notifications (a new one also wakes it at once). */
  readonly notify_poll_ms: number;
  /** How long one instance holds a notification it is sending; longer than outbound_timeout_ms. */
  readonly notify_lease_ms: number;
  /** Notifications sent at the same time by one instance. */
  readonly notify_concurrency: number;
  /** How often the subscription billing worker looks for due subscriptions (issue 6). */
  readonly billing_poll_ms: number;
  /**
   * PAYGATE_AUTHORIZATION_TTL_HOURS (decisions §16, default 168): an authorization neither captured
   * nor voided this long after it was made is voided by the gateway.
   */
  readonly authorization_ttl_seconds: number;
  /** How long one instance holds a subscription it is charging (gateway-clock time). */
  readonly billing_lease_seconds: number;
  /** Subscriptions charged at the same time by one instance. */
  readonly billing_concurrency: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function onOffVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
}

function parseMasterKey(raw: string | undefined, name = 'PAYGATE_MASTER_KEY'): Buffer | null {
  if (raw === undefined || raw === '') return null;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, 'hex');
  const b64 = Buffer.from(raw, 'base64');
  if (b64.length === 32 && /^[A-Za-z0-9+/]+=*$/.test(raw)) return b64;
  throw new ConfigError(`${name} must be 32 bytes as 64 hex characters or base64`);
}

/** A comma-separated list of 1 to 100 values of 1..86400 seconds. */
function secondsListVar(env: Env, name: string, fallback: readonly number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length > 100) throw new ConfigError(`${name} takes at most 100 values`);
  return parts.map((p) => {
    if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 86_400) {
      throw new ConfigError(`${name} must be a comma-separated list of seconds (1..86400), got "${raw}"`);
    }
    return Number(p);
  });
}

export function loadConfig(env: Env = process.env): Config {
  const port = intVar(env, 'PORT', 8080, 0, 65_535);
  const host = env.HOST && env.HOST !== '' ? env.HOST : '127.0.0.1';
  const environment_raw = env.PAYGATE_ENV && env.PAYGATE_ENV !== '' ? env.PAYGATE_ENV : 'sandbox';
  if (environment_raw !== 'sandbox' && environment_raw !== 'live') {
    throw new ConfigError(`PAYGATE_ENV must be "sandbox" or "live", got "${environment_raw}"`);
  }
  const database_url = env.DATABASE_URL && env.DATABASE_URL !== '' ? env.DATABASE_URL : null;
  if (database_url !== null && !/^postgres(ql)?:\/\//.test(database_url)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// (leave it unset for the embedded SQLite store)');
  }
  const master_key = parseMasterKey(env.PAYGATE_MASTER_KEY);
  if (database_url !== null && master_key === null) {
    // Several instances share one PostgreSQL, so they must share one key: a per-machine key file would split them.
    throw new ConfigError('PAYGATE_MASTER_KEY is required with DATABASE_URL (64 hex characters, shared by every instance)');
  }
  const master_key_previous = parseMasterKey(env.PAYGATE_MASTER_KEY_PREVIOUS, 'PAYGATE_MASTER_KEY_PREVIOUS');
  if (master_key_previous !== null && master_key === null) {
    // The previous key only opens: without a current key nothing would seal.
    throw new ConfigError('PAYGATE_MASTER_KEY_PREVIOUS needs PAYGATE_MASTER_KEY (the new key) beside it');
  }
  const workers = intVar(env, 'PAYGATE_WORKERS', 1, 1, 64);
  if (workers > 1 && database_url === null) {
    // One SQLite file has one writer: several processes would contend for its lock, not scale.
    throw new ConfigError(
      `PAYGATE_WORKERS=${workers} needs DATABASE_URL (PostgreSQL): the embedded SQLite store is single-process; leave PAYGATE_WORKERS unset or 1 without DATABASE_URL`,
    );
  }
  let public_url: string | null = null;
  if (env.PUBLIC_URL && env.PUBLIC_URL !== '') {
    try {
      const parsed = new URL(env.PUBLIC_URL);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
      public_url = env.PUBLIC_URL.replace(/\/+$/, '');
    } catch {
      throw new ConfigError(`PUBLIC_URL must be an http(s) URL, got "${env.PUBLIC_URL}"`);
    }
  }
  const admin_token = env.PAYGATE_ADMIN_TOKEN && env.PAYGATE_ADMIN_TOKEN !== '' ? env.PAYGATE_ADMIN_TOKEN : null;
  if (admin_token !== null && admin_token.length < 16) {
    throw new ConfigError('PAYGATE_ADMIN_TOKEN must be at least 16 characters');
  }
  const outbound_timeout_ms = intVar(env, 'PAYGATE_OUTBOUND_TIMEOUT_MS', 10_000, 100, 60_000);
  const processor_timeout_ms = intVar(env, 'PAYGATE_PROCESSOR_TIMEOUT_MS', 20_000, 100, 120_000);
  const stuck_processing_seconds = intVar(env, 'PAYGATE_STUCK_PROCESSING_SECONDS', 120, 1, 86_400);
  if (stuck_processing_seconds * 1000 <= processor_timeout_ms) {
    // A call still waiting for its processor must never be taken for one whose process died.
    throw new ConfigError(
      `PAYGATE_STUCK_PROCESSING_SECONDS (${stuck_processing_seconds}) must be longer than PAYGATE_PROCESSOR_TIMEOUT_MS (${processor_timeout_ms} ms)`,
    );
  }
  // The lease must outlive the longest attempt (time-out) plus the database writes after it,
  // or a second instance could pick the notification up while the first is still sending it.
  const notify_lease_ms = intVar(env, 'PAYGATE_NOTIFY_LEASE_MS', 60_000, 1_000, 3_600_000);
  if (notify_lease_ms < outbound_timeout_ms + 1_000) {
    throw new ConfigError(
      `PAYGATE_NOTIFY_LEASE_MS (${notify_lease_ms}) must be at least PAYGATE_OUTBOUND_TIMEOUT_MS + 1000 (${outbound_timeout_ms + 1_000})`,
    );
  }
  const request_timeout_ms = intVar(env, 'PAYGATE_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000);
  const headers_timeout_ms = intVar(env, 'PAYGATE_HEADERS_TIMEOUT_MS', Math.min(10_000, request_timeout_ms), 500, 600_000);
  if (headers_timeout_ms > request_timeout_ms) {
    throw new ConfigError(
      `PAYGATE_HEADERS_TIMEOUT_MS (${headers_timeout_ms}) must not be longer than PAYGATE_REQUEST_TIMEOUT_MS (${request_timeout_ms})`,
    );
  }
  return {
    port,
    host,
    public_url,
    environment: environment_raw,
    database_url,
    data_dir: path.resolve(env.PAYGATE_DATA_DIR && env.PAYGATE_DATA_DIR !== '' ? env.PAYGATE_DATA_DIR : './data'),
    master_key,
    master_key_previous:
      master_key_previous !== null && master_key !== null && master_key_previous.equals(master_key) ? null : master_key_previous,
    key_refresh_ms: intVar(env, 'PAYGATE_KEY_REFRESH_MS', 5_000, 100, 60_000),
    master_key_file: path.resolve(
      env.PAYGATE_MASTER_KEY_FILE && env.PAYGATE_MASTER_KEY_FILE !== ''
        ? env.PAYGATE_MASTER_KEY_FILE
        : path.join(env.PAYGATE_DATA_DIR && env.PAYGATE_DATA_DIR !== '' ? env.PAYGATE_DATA_DIR : './data', 'master.key'),
    ),
    admin_token,
    log_level: env.PAYGATE_LOG_LEVEL ?? 'info',
    log_file: env.PAYGATE_LOG_FILE && env.PAYGATE_LOG_FILE !== '' ? env.PAYGATE_LOG_FILE : null,
    workers,
    group_commit: onOffVar(env, 'PAYGATE_GROUP_COMMIT', true),
    limits: {
      body_max_bytes: 64 * 1024,
      body_max_fields: 100,
      request_window_seconds: 60,
      amount_max_minor: Number.MAX_SAFE_INTEGER,
      idempotency_wait_ms: intVar(env, 'PAYGATE_IDEMPOTENCY_WAIT_MS', 10_000, 100, 60_000),
      outbound_timeout_ms,
      outbound_reply_max_bytes: 64 * 1024,
      allow_private_urls: boolVar(env, 'PAYGATE_ALLOW_PRIVATE_URLS', false),
      processor_timeout_ms,
      processor_connect_timeout_ms: Math.min(5_000, processor_timeout_ms),
      processor_reply_max_bytes: 256 * 1024,
      processor_max_in_flight: intVar(env, 'PAYGATE_PROCESSOR_MAX_IN_FLIGHT', 256, 1, 10_000),
      // Past the in-flight limit a request waits for a slot (outbound/processor-guard.ts), this many and this long at most.
      processor_max_waiting: intVar(env, 'PAYGATE_PROCESSOR_MAX_WAITING', 1_024, 0, 100_000),
      processor_wait_max_ms: intVar(env, 'PAYGATE_PROCESSOR_WAIT_MS', 2_000, 0, 60_000),
      // Mean event-loop delay (ms) above which API requests are refused 503 (http/load-shedding.ts); 0: never.
      shed_event_loop_delay_ms: intVar(env, 'PAYGATE_SHED_EVENT_LOOP_DELAY_MS', 200, 0, 60_000),
      processor_breaker_failures: intVar(env, 'PAYGATE_PROCESSOR_BREAKER_FAILURES', 5, 1, 1_000),
      processor_breaker_open_ms: intVar(env, 'PAYGATE_PROCESSOR_BREAKER_OPEN_SECONDS', 30, 1, 3_600) * 1000,
      cascade_max_retries: intVar(env, 'PAYGATE_CASCADE_MAX_RETRIES', 2, 0, 5),
      pg_pool_max: intVar(env, 'PAYGATE_PG_POOL_MAX', 10, 1, 200),
      // Per connection (two); 16 is better-sqlite3's own default. It fills, then stays (docs/limits.md).
      sqlite_cache_mb: intVar(env, 'PAYGATE_SQLITE_CACHE_MB', 16, 1, 4_096),
      merchant_cache_ms: intVar(env, 'PAYGATE_MERCHANT_CACHE_MS', 5_000, 0, 60_000),
      unknown_merchant_cache_ms: intVar(env, 'PAYGATE_UNKNOWN_MERCHANT_CACHE_MS', 2_000, 0, 60_000),
      request_timeout_ms,
      headers_timeout_ms,
      rate_per_address_per_minute: intVar(env, 'PAYGATE_RATE_LIMIT_ADDRESS_PER_MINUTE', 12_000, 0, 10_000_000),
      trusted_proxies: trustedProxies(env.PAYGATE_TRUSTED_PROXIES),
      rate_per_merchant_per_minute: intVar(env, 'PAYGATE_RATE_LIMIT_MERCHANT_PER_MINUTE', 6_000, 0, 10_000_000),
      rate_sign_in_per_address_per_minute: intVar(env, 'PAYGATE_RATE_LIMIT_SIGN_IN_PER_MINUTE', 30, 0, 100_000),
      // Whole minutes, up to the session's own 8 hours: a longer idle time-out could never apply.
      backoffice_idle_timeout_ms: intVar(env, 'PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES', 15, 1, 480) * 60_000,
      request_log_days: intVar(env, 'PAYGATE_REQUEST_LOG_DAYS', 7, 0, 90),
      request_log_max_rows: intVar(env, 'PAYGATE_REQUEST_LOG_MAX_ROWS', 100_000, 10, 10_000_000),
    },
    schedules: {
      challenge_timeout_seconds: 15 * 60,
      cashier_session_seconds: 15 * 60,
      sandbox_async_settle_seconds: intVar(env, 'PAYGATE_SANDBOX_SETTLE_SECONDS', 3, 0, 3600),
      sandbox_issuer_timeout_seconds: intVar(env, 'PAYGATE_SANDBOX_ISSUER_TIMEOUT_SECONDS', 10, 0, 3600),
      due_work_poll_ms: intVar(env, 'PAYGATE_DUE_WORK_POLL_MS', 250, 10, 60_000),
      stuck_processing_seconds,
      processor_lookup_seconds: secondsListVar(env, 'PAYGATE_PROCESSOR_LOOKUP_SECONDS', [10, 30, 60, 300, 900, 3600]),
      processor_lookup_max_age_seconds: intVar(env, 'PAYGATE_PROCESSOR_LOOKUP_MAX_AGE_SECONDS', 72 * 3600, 60, 30 * 24 * 3600),
      notify_retry_seconds: secondsListVar(env, 'PAYGATE_NOTIFY_RETRY_SECONDS', [300]),
      notify_max_age_seconds: intVar(env, 'PAYGATE_NOTIFY_MAX_AGE_SECONDS', 72 * 3600, 1, 30 * 24 * 3600),
      notify_poll_ms: intVar(env, 'PAYGATE_NOTIFY_POLL_MS', 1_000, 10, 60_000),
      notify_lease_ms,
      notify_concurrency: intVar(env, 'PAYGATE_NOTIFY_CONCURRENCY', 32, 1, 256),
      billing_poll_ms: intVar(env, 'PAYGATE_BILLING_POLL_MS', 1_000, 10, 60_000),
      billing_lease_seconds: 300,
      // Whole hours, up to 30 days: card schemes release an authorization's hold within days anyway.
      authorization_ttl_seconds: intVar(env, 'PAYGATE_AUTHORIZATION_TTL_HOURS', 168, 1, 30 * 24) * 3600,
      billing_concurrency: intVar(env, 'PAYGATE_BILLING_CONCURRENCY', 8, 1, 64),
    },
  };
}

/** What a connector reads of the configuration (connectors never see the whole Config). */
export function connectorOptions(config: Config): ConnectorOptions {
  return {
    environment: config.environment,
    allow_private_urls: config.limits.allow_private_urls,
    processor_timeout_ms: config.limits.processor_timeout_ms,
    challenge_timeout_ms: config.schedules.challenge_timeout_seconds * 1000,
    sandbox_async_settle_ms: config.schedules.sandbox_async_settle_seconds * 1000,
    sandbox_issuer_timeout_ms: config.schedules.sandbox_issuer_timeout_seconds * 1000,
  };
}

/** Names proxy-addr (Fastify's trustProxy) knows for ranges of addresses. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function trustedProxies(raw: string | undefined): readonly string[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((entry) => {
    const item = entry.trim();
    const [address, bits, extra] = item.split('/');
    const family = net.isIP(address ?? '');
    const bits_ok = bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (PROXY_RANGE_NAMES.has(item) || (family !== 0 && bits_ok && extra === undefined)) return item;
    throw new ConfigError(
      `PAYGATE_TRUSTED_PROXIES: "${item}" is not an address, a CIDR range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`,
    );
  });
}

/** The store the configuration names, as a person reads it: never the password of DATABASE_URL. */
export function storeName(config: Pick<Config, 'database_url' | 'data_dir'>): string {
  if (config.database_url === null) return `SQLite file ${path.resolve(config.data_dir, 'paygate.sqlite')}`;
  let url: URL;
  try {
    url = new URL(config.database_url);
  } catch {
    return 'PostgreSQL (DATABASE_URL is not a readable URL)';
  }
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  // A socket directory may come as ?host=/run/postgresql, with no host in the authority.
  const host = url.hostname !== '' ? url.hostname : (url.searchParams.get('host') ?? 'localhost');
  const port = url.port !== '' ? url.port : '5432';
  const user = decode(url.username);
  const database = decode(url.pathname.replace(/^\//, '')) || user || '(the default)';
  return `PostgreSQL database ${database} on ${host}:${port}${user === '' ? '' : ` (user ${user})`}`;
}
