// Holds a test gateway's clock still for the length of a test, so assertions about whole seconds
// (the 60-second window of decisions.md §4) cannot be flipped by a second boundary passing
// between signing a request and the gateway reading its clock.
import type { RunningGateway } from '../../src/main.js';

/**
 * Runs `work` with the gateway's clock stopped in the middle of its current second and gives it
 * that second (unix seconds, the gateway's own time, sandbox offset included). The clock runs
 * again afterwards, from real time. Only the gateway's notion of "now" stops: timers and waits
 * that use Date.now() are unaffected, so nothing hangs.
 */
export async function withStoppedClock<T>(gateway: Pick<RunningGateway, 'clock'>, work: (now_s: number) => Promise<T>): Promise<T> {
  const clock = gateway.clock;
  const now_s = Math.floor(clock.now_ms() / 1000);
  const stopped_ms = now_s * 1000 + 500;
  // An own property shadows the class method for this instance only (every part of the gateway
  // shares this one clock object through its deps).
  clock.now_ms = () => stopped_ms;
  try {
    return await work(now_s);
  } finally {
    delete (clock as { now_ms?: unknown }).now_ms;
  }
}
