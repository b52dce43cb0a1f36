// Moving the sandbox clock forward (POST /sandbox/clock, decisions.md §8): the offset is kept in
// the database so every instance sharing it moves together, and only ever grows.
import type { AdjustableClock } from '../domain/clock.js';
import type { OperationDeps } from './deps.js';

/** Advances the shared offset by advance_seconds (never behind this instance's own) and sets the clock to it; the new time. */
export async function advanceSandboxClock(
  deps: OperationDeps,
  clock: AdjustableClock,
  advance_seconds: number,
): Promise<{ readonly now_ms: number }> {
  // The offset lives in the database so every instance sharing it moves together.
  const offset_ms = await deps.store.transaction(async (tx) => {
    const next = Math.max(await tx.sandboxClock.getOffset(), clock.get_offset_ms()) + advance_seconds * 1000;
    await tx.sandboxClock.setOffset(next);
    return next;
  });
  clock.set_offset_ms(offset_ms);
  return { now_ms: clock.now_ms() };
}
