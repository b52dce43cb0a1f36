// The gateway's notion of "now". Everything that expires or falls due reads this clock,
// so the sandbox can move it forward (POST /sandbox/clock) and tests never sleep for minutes.
export interface Clock {
  now_ms(): number;
}

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
