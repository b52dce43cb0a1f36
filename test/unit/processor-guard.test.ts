// The guard of one gateway's processor (outbound/processor-guard.ts): the circuit breaker's table
// (closed → open after failures in a row → half open after the wait, one probe → closed or open
// again) on a clock the test moves, the in-flight limit and the bounded wait for a slot past it,
// and what counts as the processor failing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Admission, ProcessorGuard, REFUSALS_PER_TURN } from '../../src/outbound/processor-guard.js';
import { processorFailed } from '../../src/outbound/processor-http.js';

function guardAt(policy = { max_in_flight: 3, max_waiting: 2, wait_max_ms: 0, breaker_failures: 3, breaker_open_ms: 10_000 }) {
  let now_ms = 1_000_000;
  const guard = new ProcessorGuard(policy, () => now_ms);
  return { guard, advance: (ms: number) => (now_ms += ms) };
}

/** One request through the guard that ends failed or not; false when the guard refused it. */
function call(guard: ProcessorGuard, failed: boolean): boolean {
  const admitted = guard.admit();
  if (!admitted.admitted) return false;
  guard.settle(admitted, failed);
  return true;
}

describe('the circuit breaker', () => {
  it('opens after the failures in a row, refuses until the wait is over, then lets one probe through', () => {
    const { guard, advance } = guardAt();
    expect(call(guard, true)).toBe(true);
    expect(call(guard, false)).toBe(true); // an answer in between: the count starts again
    for (let i = 0; i < 3; i += 1) expect(call(guard, true)).toBe(true);
    expect(guard.state).toBe('open');
    const refused = guard.admit();
    expect(refused).toMatchObject({ admitted: false, refusal: { code: 'ECIRCUITOPEN' } });
    expect(!refused.admitted && refused.refusal.reason).toMatch(/failed 3 times in a row; tried again in 10 s/);
    advance(9_999);
    expect(guard.state).toBe('open');
    advance(1);
    expect(guard.state).toBe('half_open');
    const probe = guard.admit();
    expect(probe).toEqual({ admitted: true, probe: true });
    // While the probe is out, nothing else goes.
    expect(guard.admit()).toMatchObject({ admitted: false, refusal: { code: 'ECIRCUITOPEN' } });
    guard.settle({ probe: true }, false);
    expect(guard.state).toBe('closed');
    expect(call(guard, false)).toBe(true);
  });

  it('a failed probe opens it again for the whole wait', () => {
    const { guard, advance } = guardAt();
    for (let i = 0; i < 3; i += 1) call(guard, true);
    advance(10_000);
    expect(call(guard, true)).toBe(true);
    expect(guard.state).toBe('open');
    advance(5_000);
    expect(guard.admit().admitted).toBe(false);
    advance(5_000);
    expect(guard.admit()).toEqual({ admitted: true, probe: true });
  });
});

describe('the in-flight limit', () => {
  it('refuses the request past the limit at once, and admits again once one ends', () => {
    const { guard } = guardAt();
    const held = [guard.admit(), guard.admit(), guard.admit()];
    expect(held.every((a) => a.admitted)).toBe(true);
    expect(guard.in_flight).toBe(3);
    expect(guard.admit()).toMatchObject({ admitted: false, refusal: { code: 'EINFLIGHTLIMIT' } });
    guard.settle({ probe: false }, false);
    expect(guard.in_flight).toBe(2);
    expect(guard.admit().admitted).toBe(true);
  });
});

describe('the wait for a slot past the in-flight limit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const waiting = () => guardAt({ max_in_flight: 2, max_waiting: 2, wait_max_ms: 500, breaker_failures: 1, breaker_open_ms: 10_000 });

  it('hands a freed slot to the oldest waiter, and refuses at once past max_waiting', async () => {
    const { guard } = waiting();
    expect([guard.enter(), guard.enter()]).toEqual([
      { admitted: true, probe: false },
      { admitted: true, probe: false },
    ]);
    const first = guard.enter();
    const second = guard.enter();
    expect(first).toBeInstanceOf(Promise);
    expect(guard.waiting).toBe(2);
    expect(guard.enter()).toMatchObject({
      admitted: false,
      refusal: { code: 'EINFLIGHTLIMIT', reason: expect.stringContaining('2 waiting') },
    });
    guard.settle({ probe: false }, false);
    expect(await first).toEqual({ admitted: true, probe: false });
    expect(guard.in_flight).toBe(2);
    expect(guard.waiting).toBe(1);
    guard.settle({ probe: false }, false);
    expect(await second).toEqual({ admitted: true, probe: false });
    expect(guard.waiting).toBe(0);
  });

  it('refuses a waiter whose slot does not come within wait_max_ms', async () => {
    vi.useFakeTimers();
    const { guard } = waiting();
    guard.enter();
    guard.enter();
    const late = guard.enter();
    vi.advanceTimersByTime(499);
    expect(guard.waiting).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await late).toMatchObject({
      admitted: false,
      refusal: { code: 'EINFLIGHTLIMIT', reason: expect.stringContaining('within 500 ms') },
    });
    expect(guard.waiting).toBe(0);
    // The slot freed later goes to nobody who left.
    guard.settle({ probe: false }, false);
    expect(guard.in_flight).toBe(1);
  });

  it('refuses the waiters when the breaker opens, not at their time-outs, REFUSALS_PER_TURN in each turn of the event loop', async () => {
    const { guard } = guardAt({ max_in_flight: 2, max_waiting: 40, wait_max_ms: 60_000, breaker_failures: 1, breaker_open_ms: 10_000 });
    guard.enter();
    guard.enter();
    const settled: Admission[] = [];
    const waiters = Array.from({ length: 40 }, () => Promise.resolve(guard.enter()).then((admission) => settled.push(admission)));
    expect(guard.waiting).toBe(40);
    guard.settle({ probe: false }, true);
    // This turn: the first slice, oldest first; the rest in the turns after (setImmediate).
    await Promise.resolve();
    expect(guard.waiting).toBe(40 - REFUSALS_PER_TURN);
    await new Promise((resolve) => setImmediate(resolve));
    expect(guard.waiting).toBe(40 - 2 * REFUSALS_PER_TURN);
    await Promise.all(waiters);
    expect(guard.waiting).toBe(0);
    expect(settled).toHaveLength(40);
    for (const admission of settled) expect(admission).toMatchObject({ admitted: false, refusal: { code: 'ECIRCUITOPEN' } });
    expect(guard.in_flight).toBe(1);
  });

  it('with wait_max_ms 0 refuses at once, as before', () => {
    const { guard } = guardAt();
    guard.enter();
    guard.enter();
    guard.enter();
    expect(guard.enter()).toMatchObject({ admitted: false, refusal: { code: 'EINFLIGHTLIMIT' } });
    expect(guard.waiting).toBe(0);
  });
});

describe('what counts against the processor', () => {
  const answer = (http_status: number) => ({ kind: 'answer' as const, http_status, headers: {}, body: '', duration_ms: 1 });
  it('no answer and HTTP 5xx; not a 4xx (a decline) nor a refusal that never left the gateway', () => {
    expect(processorFailed(answer(200))).toBe(false);
    expect(processorFailed(answer(402))).toBe(false);
    expect(processorFailed(answer(503))).toBe(true);
    expect(processorFailed({ kind: 'lost', reason: 'timed out', code: 'ETIMEDOUT', duration_ms: 1 })).toBe(true);
    expect(processorFailed({ kind: 'not_sent', reason: 'refused', code: 'ECONNREFUSED', duration_ms: 1 })).toBe(true);
    for (const code of ['EDESTINATIONNOTALLOWED', 'EINVALIDURL', 'ECIRCUITOPEN', 'EINFLIGHTLIMIT'])
      expect(processorFailed({ kind: 'not_sent', reason: code, code, duration_ms: 0 })).toBe(false);
  });
});
