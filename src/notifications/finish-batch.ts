// Records the delivery worker's ended attempts in batches (issue 29): on PostgreSQL each
// recording was a statement and a commit of its own, 0.84 of a sale's 2.67 statements, one per
// notification sent. Attempts that end within `gap_ms` of the last recording wait for the next
// one and go together (notification-store.ts finishAttempts: one statement on PostgreSQL); an
// attempt that ends after a quiet spell is recorded at once, so a lone notification waits for
// nothing. Nothing here is durable: an attempt waits for its recording before it counts as done,
// and one lost with the process is sent again once its lease ends, as before.
import { type AttemptFinish, FINISH_BATCH_MAX, type FinishOutcome } from '../store/notification-store.js';

export interface FinishBatchOptions {
  /** Records one batch (store.notifications.finishAttempts). */
  readonly record: (finishes: readonly AttemptFinish[], now_ms: number) => Promise<FinishOutcome[]>;
  /** The gateway clock: the attempts' updated_at_ms. */
  readonly now_ms: () => number;
  /** At least this long between two recordings' starts, unless a full batch waits. */
  readonly gap_ms: number;
  /** Attempts a recording takes, at most (FINISH_BATCH_MAX by default). */
  readonly max?: number;
}

export interface FinishBatch {
  /** Resolves once the attempt is recorded (or its lease found lost); rejects when recording it failed. */
  finish(finish: AttemptFinish): Promise<FinishOutcome>;
}

interface Waiting {
  readonly finish: AttemptFinish;
  readonly resolve: (outcome: FinishOutcome) => void;
  readonly reject: (error: unknown) => void;
}

export function startFinishBatch(options: FinishBatchOptions): FinishBatch {
  const max = Math.min(options.max ?? FINISH_BATCH_MAX, FINISH_BATCH_MAX);
  if (!(max >= 1) || !(options.gap_ms >= 0)) throw new Error('finish batch: max ≥ 1 and gap_ms ≥ 0');
  const waiting: Waiting[] = [];
  let recording = false;
  let timer: NodeJS.Timeout | null = null;
  // Wall time of the last recording's start (performance.now: never moved by the sandbox clock).
  let last_start = -Infinity;

  function schedule(): void {
    if (recording || waiting.length === 0) return;
    const wait_ms = last_start + options.gap_ms - performance.now();
    if (waiting.length >= max || wait_ms <= 0) {
      // A batch filled while it waited for the gap goes now.
      if (timer !== null) clearTimeout(timer);
      timer = null;
      void record();
    } else if (timer === null) {
      timer = setTimeout(() => {
        timer = null;
        void record();
      }, wait_ms);
    }
  }

  async function record(): Promise<void> {
    recording = true;
    last_start = performance.now();
    const batch = waiting.splice(0, max);
    try {
      const outcomes = await options.record(
        batch.map((w) => w.finish),
        options.now_ms(),
      );
      for (const [index, w] of batch.entries()) w.resolve(outcomes[index]!);
    } catch (error) {
      // One attempt that cannot be recorded must not cost the others theirs: each alone again.
      if (batch.length === 1) batch[0]!.reject(error);
      else
        await Promise.all(
          batch.map((w) => options.record([w.finish], options.now_ms()).then(([outcome]) => w.resolve(outcome!), w.reject)),
        );
    } finally {
      recording = false;
      schedule();
    }
  }

  return {
    finish(finish) {
      return new Promise<FinishOutcome>((resolve, reject) => {
        waiting.push({ finish, resolve, reject });
        schedule();
      });
    },
  };
}
