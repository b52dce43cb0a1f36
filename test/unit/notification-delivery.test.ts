// The pure parts of delivery: the reply classification of spec §6.3, the signed body, the
// excerpt an operator sees, and the resend schedule with its bound.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { afterFailure, boundFrom, resendDelaySeconds } from '../../src/notifications/schedule.js';
import { classifyReply, replyExcerpt, signedNotificationBody } from '../../src/notifications/sender.js';

const SECRET = 'merchant-secret-1';

/** Signs as decisions.md §1 says, independently of src/domain/signing.ts. */
function sign(message: Record<string, string | number>): string {
  const text =
    Object.keys(message)
      .filter((k) => k !== 'signature')
      .sort()
      .map((k) => String(message[k]))
      .join('') + SECRET;
  return createHash('sha384').update(text).digest('hex');
}

function reply(fields: Record<string, string | number>): string {
  return JSON.stringify({ ...fields, signature: sign(fields) });
}

describe('classifyReply', () => {
  const base = { description: 'x', version: '1.2', timestamp: 1763740800 };
  it.each([
    [200, reply({ ...base, status: 0 }), 'delivered', /acknowledged/],
    [201, reply({ ...base, status: 0 }), 'delivered', /acknowledged/],
    [
      200,
      reply({ ...base, status: 1, description: 'Deposit count exceeded' }),
      'refused',
      /refused by merchant \(status 1\): Deposit count exceeded/,
    ],
    [200, reply({ ...base, status: 7 }), 'refused', /status 7/],
    [200, reply({ ...base, status: -1 }), 'retry', /merchant error \(status -1\)/],
    [200, reply({ ...base, status: -5 }), 'retry', /status -5/],
    [500, reply({ ...base, status: 0 }), 'retry', /^HTTP 500$/],
    [302, '', 'retry', /^HTTP 302$/],
    [200, 'OK', 'retry', /not JSON/],
    [200, '[0]', 'retry', /not a JSON object/],
    [200, JSON.stringify({ ...base, status: 0 }), 'retry', /not signed/],
    [200, JSON.stringify({ ...base, status: 0, signature: 'f'.repeat(96) }), 'retry', /signature invalid/],
    [200, JSON.stringify({ ...base, status: 0, signature: 'short' }), 'retry', /signature invalid/],
    [200, JSON.stringify({ status: 0, nested: { a: 1 }, signature: 'a'.repeat(96) }), 'retry', /signature invalid/],
    [200, reply({ ...base, status: '0' }), 'retry', /no integer status/],
  ])('HTTP %s %s → %s', (http_status, body, outcome, reason) => {
    const result = classifyReply(http_status, body, SECRET);
    expect(result.outcome).toBe(outcome);
    expect(result.reason).toMatch(reason);
  });
});

describe('signedNotificationBody', () => {
  it('appends the signature of the stored payload and is the same text every time', () => {
    const payload = JSON.stringify({ trace_id: 7, transaction_status: 'approved', amount: 1999, version: '1.2', timestamp: 1763740800 });
    const first = signedNotificationBody(payload, SECRET);
    expect(signedNotificationBody(payload, SECRET)).toBe(first);
    const parsed = JSON.parse(first) as Record<string, string | number>;
    expect(parsed.signature).toBe(sign(JSON.parse(payload) as Record<string, string | number>));
    expect(Object.keys(parsed).at(-1)).toBe('signature');
  });
});

describe('replyExcerpt', () => {
  it('cuts long replies, drops control characters, shortens signatures and card-like digit runs', () => {
    expect(replyExcerpt('a'.repeat(1000))).toHaveLength(301);
    expect(replyExcerpt('ok\u0000\u001b[31m')).toBe('ok[31m');
    expect(replyExcerpt(`{"signature":"${'ab'.repeat(48)}"}`)).toBe('{"signature":"abababab…"}');
    expect(replyExcerpt('card 4111111111111111 seen')).toBe('card 411111… seen');
  });
});

describe('resend schedule', () => {
  const schedule = { retry_seconds: [10, 60, 300], max_age_seconds: 3600 };
  it('the n-th resend waits list[min(n-1, len-1)] seconds', () => {
    expect([1, 2, 3, 4, 50].map((n) => resendDelaySeconds(n, schedule))).toEqual([10, 60, 300, 300, 300]);
    expect(resendDelaySeconds(1, { retry_seconds: [300], max_age_seconds: 1 })).toBe(300);
  });

  it('schedules after a failure from the failed attempt, never past the bound, and fails at the bound', () => {
    const created = 1_000_000;
    expect(afterFailure(created, 1, created + 5, schedule)).toEqual({ state: 'pending', next_attempt_at_ms: created + 5 + 10_000 });
    expect(afterFailure(created, 3, created + 100_000, schedule)).toEqual({ state: 'pending', next_attempt_at_ms: created + 400_000 });
    // 300 s would pass the one-hour bound: the last attempt is made at the bound itself.
    expect(afterFailure(created, 9, created + 3_500_000, schedule)).toEqual({ state: 'pending', next_attempt_at_ms: created + 3_600_000 });
    expect(afterFailure(created, 10, created + 3_600_000, schedule)).toEqual({ state: 'failed' });
    expect(afterFailure(created, 1, created + 7_200_000, schedule)).toEqual({ state: 'failed' });
    expect(afterFailure(created, 2, created + 10, schedule, 0)).toEqual({ state: 'pending', next_attempt_at_ms: created + 10 });
  });

  it("the bound counts from the operator's last manual resend when there was one (bound_from_ms), else from creation", () => {
    const created = 1_000_000;
    const resent = created + 10 * 3_600_000; // long after the one-hour bound from creation
    expect(boundFrom({ created_at_ms: created, bound_from_ms: resent })).toBe(resent);
    expect(boundFrom({ created_at_ms: created, bound_from_ms: null })).toBe(created);
    // The attempt of the resend fails: a whole schedule again, not 'failed' at once.
    const from = boundFrom({ created_at_ms: created, bound_from_ms: resent });
    expect(afterFailure(from, 7, resent + 20, schedule)).toEqual({ state: 'pending', next_attempt_at_ms: resent + 20 + 300_000 });
    expect(afterFailure(from, 20, resent + 3_600_000, schedule)).toEqual({ state: 'failed' });
    expect(afterFailure(created, 7, resent + 20, schedule)).toEqual({ state: 'failed' });
  });
});

describe('notification configuration', () => {
  it('defaults: 10 s time-out, 60 s lease, 1 s poll, 32 at once, private URLs refused in live', () => {
    const config = loadConfig({});
    expect(config.limits.outbound_timeout_ms).toBe(10_000);
    expect(config.limits.outbound_reply_max_bytes).toBe(64 * 1024);
    expect(config.limits.allow_private_urls).toBe(false);
    expect(config.schedules).toMatchObject({
      notify_lease_ms: 60_000,
      notify_poll_ms: 1_000,
      notify_concurrency: 32,
      notify_max_age_seconds: 72 * 3600,
    });
  });

  it('reads the variables and refuses bad values by name', () => {
    const config = loadConfig({
      PAYGATE_ALLOW_PRIVATE_URLS: 'true',
      PAYGATE_OUTBOUND_TIMEOUT_MS: '500',
      PAYGATE_NOTIFY_LEASE_MS: '1500',
      PAYGATE_NOTIFY_CONCURRENCY: '2',
    });
    expect(config.limits).toMatchObject({ allow_private_urls: true, outbound_timeout_ms: 500 });
    expect(config.schedules).toMatchObject({ notify_lease_ms: 1500, notify_concurrency: 2 });
    expect(() => loadConfig({ PAYGATE_ALLOW_PRIVATE_URLS: 'yes' })).toThrow(/PAYGATE_ALLOW_PRIVATE_URLS/);
    expect(() => loadConfig({ PAYGATE_NOTIFY_CONCURRENCY: '0' })).toThrow(/PAYGATE_NOTIFY_CONCURRENCY/);
    expect(() => loadConfig({ PAYGATE_OUTBOUND_TIMEOUT_MS: '10' })).toThrow(ConfigError);
    // The lease must outlive an attempt, or a second instance could send the same notification meanwhile.
    expect(() => loadConfig({ PAYGATE_NOTIFY_LEASE_MS: '10000' })).toThrow(/PAYGATE_NOTIFY_LEASE_MS/);
  });
});
