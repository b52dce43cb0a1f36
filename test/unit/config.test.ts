// Configuration from the environment (decisions.md §8): defaults, and a ConfigError naming
// the variable for every bad value.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const HEX_KEY = '0123456789abcdef'.repeat(4);

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig defaults', () => {
  const config = loadConfig({});

  it('listens on 127.0.0.1:8080 in sandbox mode with the embedded store', () => {
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.environment).toBe('sandbox');
    expect(config.database_url).toBeNull();
    expect(config.data_dir).toBe(path.resolve('./data'));
    expect(config.master_key).toBeNull();
    expect(config.public_url).toBeNull();
    expect(config.admin_token).toBeNull();
  });

  it('resends notifications every 300 seconds and accepts requests within 60 seconds', () => {
    expect(config.schedules.notify_retry_seconds).toEqual([300]);
    expect(config.limits.request_window_seconds).toBe(60);
    expect(config.limits.body_max_bytes).toBe(64 * 1024);
    expect(config.schedules.challenge_timeout_seconds).toBe(15 * 60);
  });

  it('treats empty values as unset', () => {
    const empty = loadConfig({
      PORT: '',
      HOST: '',
      DATABASE_URL: '',
      PUBLIC_URL: '',
      PAYGATE_ADMIN_TOKEN: '',
      PAYGATE_MASTER_KEY: '',
      PAYGATE_NOTIFY_RETRY_SECONDS: '',
    });
    expect(empty.port).toBe(8080);
    expect(empty.host).toBe('127.0.0.1');
    expect(empty.database_url).toBeNull();
    expect(empty.public_url).toBeNull();
    expect(empty.admin_token).toBeNull();
    expect(empty.master_key).toBeNull();
    expect(empty.schedules.notify_retry_seconds).toEqual([300]);
  });
});

describe('loadConfig reads good values', () => {
  it('takes every documented variable', () => {
    const config = loadConfig({
      PORT: '9090',
      HOST: '0.0.0.0',
      PAYGATE_ENV: 'live',
      DATABASE_URL: 'postgres://u@db:5432/paygate',
      PAYGATE_MASTER_KEY: HEX_KEY,
      PUBLIC_URL: 'https://pay.example.com/',
      PAYGATE_ADMIN_TOKEN: 'x'.repeat(16),
      PAYGATE_NOTIFY_RETRY_SECONDS: '5,10',
    });
    expect(config).toMatchObject({
      port: 9090,
      host: '0.0.0.0',
      environment: 'live',
      database_url: 'postgres://u@db:5432/paygate',
      public_url: 'https://pay.example.com',
      admin_token: 'x'.repeat(16),
    });
    expect(config.master_key?.toString('hex')).toBe(HEX_KEY);
    expect(config.schedules.notify_retry_seconds).toEqual([5, 10]);
  });

  it('PAYGATE_NOTIFY_RETRY_SECONDS=5,10 parses to [5, 10], spaces allowed', () => {
    expect(loadConfig({ PAYGATE_NOTIFY_RETRY_SECONDS: '5,10' }).schedules.notify_retry_seconds).toEqual([5, 10]);
    expect(loadConfig({ PAYGATE_NOTIFY_RETRY_SECONDS: ' 5, 10 ' }).schedules.notify_retry_seconds).toEqual([5, 10]);
  });

  it('accepts postgresql:// and a base64 master key', () => {
    const key = Buffer.alloc(32, 7);
    const config = loadConfig({ DATABASE_URL: 'postgresql://db/x', PAYGATE_MASTER_KEY: key.toString('base64') });
    expect(config.database_url).toBe('postgresql://db/x');
    expect(config.master_key?.equals(key)).toBe(true);
  });

  it('runs one process with group commit and a 5 s merchant cache by default; PAYGATE_WORKERS with PostgreSQL', () => {
    const defaults = loadConfig({});
    expect(defaults.workers).toBe(1);
    expect(defaults.group_commit).toBe(true);
    expect(defaults.limits.merchant_cache_ms).toBe(5_000);
    expect(loadConfig({ PAYGATE_WORKERS: '1' }).workers).toBe(1);
    expect(loadConfig({ PAYGATE_GROUP_COMMIT: 'off' }).group_commit).toBe(false);
    expect(loadConfig({ PAYGATE_MERCHANT_CACHE_MS: '0' }).limits.merchant_cache_ms).toBe(0);
    expect(loadConfig({ PAYGATE_WORKERS: '4', DATABASE_URL: 'postgres://db/x', PAYGATE_MASTER_KEY: HEX_KEY }).workers).toBe(4);
  });

  it('ends back-office sessions after 15 idle minutes by default; PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES from 1 to 480', () => {
    expect(loadConfig({}).limits.backoffice_idle_timeout_ms).toBe(15 * 60_000);
    expect(loadConfig({ PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '' }).limits.backoffice_idle_timeout_ms).toBe(15 * 60_000);
    expect(loadConfig({ PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '1' }).limits.backoffice_idle_timeout_ms).toBe(60_000);
    expect(loadConfig({ PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '480' }).limits.backoffice_idle_timeout_ms).toBe(8 * 3600_000);
  });

  it('gives each SQLite connection a 16 MB page cache by default; PAYGATE_SQLITE_CACHE_MB from 1 to 4096', () => {
    expect(loadConfig({}).limits.sqlite_cache_mb).toBe(16);
    expect(loadConfig({ PAYGATE_SQLITE_CACHE_MB: '2' }).limits.sqlite_cache_mb).toBe(2);
    expect(configError({ PAYGATE_SQLITE_CACHE_MB: '0' }).message).toContain('PAYGATE_SQLITE_CACHE_MB');
    expect(configError({ PAYGATE_SQLITE_CACHE_MB: '4097' }).message).toContain('PAYGATE_SQLITE_CACHE_MB');
  });

  it('accepts PORT=0 (any free port)', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
  });
});

describe('loadConfig refuses bad values, naming the variable', () => {
  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '-1' }],
    ['PORT', { PORT: '65536' }],
    ['PORT', { PORT: '80.5' }],
    ['PAYGATE_ENV', { PAYGATE_ENV: 'prod' }],
    ['PAYGATE_ENV', { PAYGATE_ENV: 'Sandbox' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x', PAYGATE_MASTER_KEY: HEX_KEY }],
    ['DATABASE_URL', { DATABASE_URL: 'sqlite:///tmp/x', PAYGATE_MASTER_KEY: HEX_KEY }],
    ['PAYGATE_MASTER_KEY', { DATABASE_URL: 'postgres://db/x' }],
    ['PAYGATE_MASTER_KEY', { PAYGATE_MASTER_KEY: 'abcd' }],
    ['PAYGATE_MASTER_KEY', { PAYGATE_MASTER_KEY: HEX_KEY.slice(0, 62) }],
    ['PAYGATE_MASTER_KEY', { PAYGATE_MASTER_KEY: Buffer.alloc(16, 1).toString('base64') }],
    ['PAYGATE_MASTER_KEY', { PAYGATE_MASTER_KEY: `${HEX_KEY.slice(0, 63)}g` }],
    ['PUBLIC_URL', { PUBLIC_URL: 'ftp://x' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'not a url' }],
    ['PAYGATE_NOTIFY_RETRY_SECONDS', { PAYGATE_NOTIFY_RETRY_SECONDS: 'a,b' }],
    ['PAYGATE_NOTIFY_RETRY_SECONDS', { PAYGATE_NOTIFY_RETRY_SECONDS: '5,,10' }],
    ['PAYGATE_NOTIFY_RETRY_SECONDS', { PAYGATE_NOTIFY_RETRY_SECONDS: '0' }],
    ['PAYGATE_NOTIFY_RETRY_SECONDS', { PAYGATE_NOTIFY_RETRY_SECONDS: '-5' }],
    ['PAYGATE_ADMIN_TOKEN', { PAYGATE_ADMIN_TOKEN: 'short' }],
    ['PAYGATE_ADMIN_TOKEN', { PAYGATE_ADMIN_TOKEN: 'x'.repeat(15) }],
    ['PAYGATE_WORKERS', { PAYGATE_WORKERS: '0', DATABASE_URL: 'postgres://db/x', PAYGATE_MASTER_KEY: HEX_KEY }],
    ['PAYGATE_WORKERS', { PAYGATE_WORKERS: 'two', DATABASE_URL: 'postgres://db/x', PAYGATE_MASTER_KEY: HEX_KEY }],
    ['PAYGATE_GROUP_COMMIT', { PAYGATE_GROUP_COMMIT: 'true' }],
    ['PAYGATE_MERCHANT_CACHE_MS', { PAYGATE_MERCHANT_CACHE_MS: '-1' }],
    ['PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES', { PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '0' }],
    ['PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES', { PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '481' }],
    ['PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES', { PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '15m' }],
    ['PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES', { PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '7.5' }],
  ] as [string, Record<string, string>][])('%s in %j', (name, env) => {
    const error = configError(env);
    expect(error.message).toContain(name);
  });

  it('refuses PAYGATE_WORKERS above 1 on the embedded SQLite store, saying why', () => {
    const error = configError({ PAYGATE_WORKERS: '2' });
    expect(error.message).toContain('PAYGATE_WORKERS');
    expect(error.message).toMatch(/DATABASE_URL/);
    expect(error.message).toMatch(/single-process/);
  });

  it('says what PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES takes', () => {
    expect(configError({ PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: '0' }).message).toBe(
      'PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES must be between 1 and 480, got 0',
    );
    expect(configError({ PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES: 'fifteen' }).message).toBe(
      'PAYGATE_BACKOFFICE_IDLE_TIMEOUT_MINUTES must be a whole number, got "fifteen"',
    );
  });

  it('does not echo the master key in its message', () => {
    const bad = `${HEX_KEY.slice(0, 63)}g`;
    expect(configError({ PAYGATE_MASTER_KEY: bad }).message).not.toContain(bad);
  });
});

describe('PAYGATE_TRUSTED_PROXIES', () => {
  it('is empty by default (X-Forwarded-For ignored) and takes addresses, CIDR ranges and proxy-addr range names', () => {
    expect(loadConfig({}).limits.trusted_proxies).toEqual([]);
    expect(loadConfig({ PAYGATE_TRUSTED_PROXIES: ' 127.0.0.1, 10.0.0.0/8,::1,fd00::/8 ,loopback' }).limits.trusted_proxies).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
  });

  it('refuses what is not an address or a range, naming the variable', () => {
    for (const bad of ['proxy.example', '10.0.0.0/33', '10.0.0.1/8/2', '*', '127.0.0.1,']) {
      expect(configError({ PAYGATE_TRUSTED_PROXIES: bad }).message).toMatch(/^PAYGATE_TRUSTED_PROXIES: /);
    }
  });
});
