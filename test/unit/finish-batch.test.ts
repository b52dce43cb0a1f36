// The delivery worker's batching of ended attempts (src/notifications/finish-batch.ts): a lone
// attempt is recorded at once, attempts ending close together go in one recording, a batch is
// bounded, and one attempt that cannot be recorded costs the others nothing. The recording itself
// is the store's (its contract test runs finishAttempts on both databases); here it is a function
// that answers what it was given, so the batches can be read. Fake timers drive the gap.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFinishBatch } from '../../src/notifications/finish-batch.js';
import type { AttemptFinish, FinishOutcome } from '../../src/store/notification-store.js';

function finishOf(notification_id: number): AttemptFinish {
  return {
    owner: 'w',
    patch: { state: 'delivered', next_attempt_at_ms: 0, last_error: null, attempts: 1 },
    attempt: {
      notification_id,
      attempt_no: 1,
      started_at_ms: 0,
      duration_ms: 1,
      http_status: 200,
      reply_excerpt: null,
      outcome: 'delivered',
      reason: 'HTTP 200',
    },
  };
}

/** A recorder that holds each call until released, and remembers the ids of every batch. */
function heldRecorder(fail_on?: number) {
  const batches: number[][] = [];
  const releases: Array<() => void> = [];
  const record = async (finishes: readonly AttemptFinish[]): Promise<FinishOutcome[]> => {
    const ids = finishes.map((f) => f.attempt.notification_id);
    batches.push(ids);
    await new Promise<void>((resolve) => releases.push(resolve));
    if (fail_on !== undefined && ids.includes(fail_on)) throw new Error(`attempt of ${fail_on} cannot be recorded`);
    return ids.map((id) => (id % 2 === 0 ? 'finished' : 'lease_lost'));
  };
  const releaseAll = async () => {
    while (releases.length > 0) {
      releases.shift()!();
      await vi.advanceTimersByTimeAsync(0);
    }
  };
  return { batches, record, releaseAll };
}

describe('finish batch', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records a lone attempt at once, and those that end during a recording together in the next, each told its own outcome', async () => {
    const recorder = heldRecorder();
    const batch = startFinishBatch({ record: recorder.record, now_ms: () => 7, gap_ms: 10 });
    const first = batch.finish(finishOf(2));
    expect(recorder.batches).toEqual([[2]]);
    const later = [3, 4, 6].map((id) => batch.finish(finishOf(id)));
    expect(recorder.batches).toHaveLength(1);
    await recorder.releaseAll();
    expect(await first).toBe('finished');
    // The next recording starts no sooner than the gap after the first one's start.
    expect(recorder.batches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(recorder.batches).toEqual([[2], [3, 4, 6]]);
    await recorder.releaseAll();
    expect(await Promise.all(later)).toEqual(['lease_lost', 'finished', 'finished']);
  });

  it('after a quiet spell longer than the gap, an attempt is recorded at once', async () => {
    const recorder = heldRecorder();
    const batch = startFinishBatch({ record: recorder.record, now_ms: () => 7, gap_ms: 10 });
    const first = batch.finish(finishOf(2));
    await recorder.releaseAll();
    await first;
    await vi.advanceTimersByTimeAsync(25);
    void batch.finish(finishOf(4));
    expect(recorder.batches).toEqual([[2], [4]]);
    await recorder.releaseAll();
  });

  it('takes at most `max` attempts a recording; a full batch does not wait for the gap', async () => {
    const recorder = heldRecorder();
    const batch = startFinishBatch({ record: recorder.record, now_ms: () => 7, gap_ms: 1000, max: 2 });
    const all = [2, 4, 6, 8, 10].map((id) => batch.finish(finishOf(id)));
    expect(recorder.batches).toEqual([[2]]);
    await recorder.releaseAll();
    expect(recorder.batches).toEqual([[2], [4, 6], [8, 10]]);
    expect(await Promise.all(all)).toEqual(Array(5).fill('finished'));
  });

  it('a batch that fills while it waits for the gap is recorded at once', async () => {
    const recorder = heldRecorder();
    const batch = startFinishBatch({ record: recorder.record, now_ms: () => 7, gap_ms: 1000, max: 2 });
    const first = batch.finish(finishOf(2));
    await recorder.releaseAll();
    await first;
    const second = batch.finish(finishOf(4));
    expect(recorder.batches).toEqual([[2]]);
    const third = batch.finish(finishOf(6));
    expect(recorder.batches).toEqual([[2], [4, 6]]);
    await recorder.releaseAll();
    expect(await Promise.all([second, third])).toEqual(['finished', 'finished']);
    // No recording left behind by the timer that was waiting.
    await vi.advanceTimersByTimeAsync(2000);
    expect(recorder.batches).toHaveLength(2);
  });

  it('one attempt that cannot be recorded fails alone: the rest of its batch is recorded one by one', async () => {
    const recorder = heldRecorder(4);
    const batch = startFinishBatch({ record: recorder.record, now_ms: () => 7, gap_ms: 0 });
    const first = batch.finish(finishOf(2));
    const rest = [4, 6].map((id) => batch.finish(finishOf(id)).catch((error: Error) => error.message));
    await recorder.releaseAll();
    await recorder.releaseAll();
    expect(await first).toBe('finished');
    expect(await Promise.all(rest)).toEqual(['attempt of 4 cannot be recorded', 'finished']);
    expect(recorder.batches).toEqual([[2], [4, 6], [4], [6]]);
  });

  it('refuses a batch size or gap that makes no sense', () => {
    const record = async () => [];
    expect(() => startFinishBatch({ record, now_ms: () => 0, gap_ms: -1 })).toThrow();
    expect(() => startFinishBatch({ record, now_ms: () => 0, gap_ms: 1, max: 0 })).toThrow();
  });
});
