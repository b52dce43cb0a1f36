// The sandbox clock's offset (decisions.md §7): read and moved forward by the sandbox's clock
// control (POST /sandbox/clock). The offset lives in the database so every instance sharing it
// moves together; never moved back.
import type { AdjustableClock } from '../domain/clock.js';
import type { OperationDeps } from './deps.js';

/** The offset the instances share, in ms. */
export function sandboxClockOffset(deps: Pick<OperationDeps, 'store'>): Promise<number> {
  return deps.store.sandboxClock.getOffset();
}

/** Moves the shared clock (and this instance's) `advance_s` forward from the later of the two; the new offset in ms. */
export async function advanceSandboxClock(deps: Pick<OperationDeps, 'store'>, clock: AdjustableClock, advance_s: number): Promise<number> {
  const offset_ms = await deps.store.transaction(async (tx) => {
    const next = Math.max(await tx.sandboxClock.getOffset(), clock.get_offset_ms()) + advance_s * 1000;
    await tx.sandboxClock.setOffset(next);
    return next;
  });
  clock.set_offset_ms(offset_ms);
  return offset_ms;
}
