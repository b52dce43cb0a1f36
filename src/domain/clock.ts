// The gateway's notion of "now". Everything that expires or falls due reads this clock,
// so the sandbox can move it forward (POST /sandbox/clock) and tests never sleep for minutes.
export interface Clock {
  now_ms(): number;
}

/**
 * The real wall clock, for leases and claims (lease_until_ms, claim_until_ms): how long an
 * instance may hold a notification, a subscription or a cashier payment it is working on. A
 * lease must outlive the work in real time whatever the sandbox clock does; measured on the
 * gateway clock, advancing it (POST /sandbox/clock) during an attempt ended the lease at once
 * and another round started the same work again while the first was still running. Due times
 * and expiries stay on the gateway clock.
 */
export const wallClock: Clock = Object.freeze({ now_ms: () => Date.now() });

export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.now_ms() / 1000);
}

/** Wall clock plus an offset that only ever grows (sandbox time travel). */
export class AdjustableClock implements Clock {
  private offset_ms = 0;
  constructor(private readonly base: () => number = Date.now) {}
  now_ms(): number {
    return this.base() + this.offset_ms;
  }
  /** Keeps the larger offset so instances sharing one database agree after reading it. */
  set_offset_ms(offset_ms: number): void {
    if (offset_ms > this.offset_ms) this.offset_ms = offset_ms;
  }
  get_offset_ms(): number {
    return this.offset_ms;
  }
}
