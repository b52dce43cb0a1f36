// What stands between one gateway's connector and its processor (issue 29, item 3): a limit on
// the requests in flight to it, and a circuit breaker that fails fast once the processor is
// clearly down. Processors are slow and sometimes hang; without these, one hanging processor
// holds a request of every merchant's customer until its time-out, and its gateway takes all the
// connections and memory the others need.
//
// A request past the in-flight limit waits for a slot, briefly and in bounded numbers
// (`max_waiting`, `wait_max_ms`), before it is refused: by the time a connector sends, the
// payment is recorded, and a refusal then answers it `error`. The live bench at 500 connections
// showed why: with slots for 256, a burst of 500 sales to a processor answering in 100 ms had
// 3 720 of 14 061 refused, each of which a wait of well under 100 ms would have sent.
//
// Both refuse BEFORE anything is sent, so a refusal is `not_sent` (outbound/processor-http.ts):
// the processor cannot have received the request, nothing moved, and a declined-as-unreachable
// sale goes on to the next gateway of the cascade. A guard is per gateway (its own credentials,
// its own account at the processor), kept across rebuilds of its connector.
//
// The breaker, per gateway:
//   closed    --(breaker_failures failures in a row)--> open
//   open      --(breaker_open_ms passed)--------------> half_open (one probe let through)
//   half_open --(the probe answers)--------------------> closed
//   half_open --(the probe fails)----------------------> open (the wait starts again)
// A failure is an exchange that reached no processor answer (a time-out, a reset, a refused
// connection) or an answer of HTTP 5xx; any other answer, 4xx included (a decline, a bad
// request), shows the processor is up.

export interface ProcessorGuardPolicy {
  /** Requests to one gateway's processor in flight at once, at most; more wait (below), then are refused. */
  readonly max_in_flight: number;
  /** Requests waiting for a slot, at most; past it a request is refused at once. */
  readonly max_waiting: number;
  /** How long a request waits for a slot before it is refused; 0 refuses at once. */
  readonly wait_max_ms: number;
  /** Failures in a row that open the breaker. */
  readonly breaker_failures: number;
  /** How long an open breaker refuses before it lets one probe through. */
  readonly breaker_open_ms: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** Why a request was not sent: the words of a `not_sent` exchange, and its code. */
export interface GuardRefusal {
  readonly reason: string;
  readonly code: 'EINFLIGHTLIMIT' | 'ECIRCUITOPEN';
}

export type Admission = { readonly admitted: true; readonly probe: boolean } | { readonly admitted: false; readonly refusal: GuardRefusal };

interface Waiter {
  readonly resolve: (admission: Admission) => void;
  readonly timer: NodeJS.Timeout;
}

/** Waiters refused in one turn of the event loop when the breaker opens on them (handOver). */
export const REFUSALS_PER_TURN = 16;

export class ProcessorGuard {
  private in_flight_count = 0;
  /** A handOver is due in the next turn (the waiters beyond one turn's refusals). */
  private hand_over_scheduled = false;
  /** First come, first served. */
  private readonly waiters: Waiter[] = [];
  private failures_in_row = 0;
  private breaker: BreakerState = 'closed';
  private opened_at_ms = 0;
  private probing = false;

  constructor(
    private readonly policy: ProcessorGuardPolicy,
    private readonly now_ms: () => number = Date.now,
  ) {}

  get state(): BreakerState {
    // An open breaker whose wait is over is half open, whether or not a request came since.
    if (this.breaker === 'open' && this.now_ms() - this.opened_at_ms >= this.policy.breaker_open_ms) return 'half_open';
    return this.breaker;
  }

  get in_flight(): number {
    return this.in_flight_count;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Admits a request, waiting for a slot when all are taken (bounded in number and time), or says
   * why not. The caller must call `settle` once an admitted request ends.
   */
  enter(): Admission | Promise<Admission> {
    const now = this.admit();
    if (now.admitted || now.refusal.code !== 'EINFLIGHTLIMIT' || this.policy.wait_max_ms === 0) return now;
    if (this.waiters.length >= this.policy.max_waiting) {
      return this.inFlightLimit(` and ${this.policy.max_waiting} waiting`);
    }
    return new Promise<Admission>((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          resolve(this.inFlightLimit(`; no slot within ${this.policy.wait_max_ms} ms`));
        }, this.policy.wait_max_ms),
      };
      this.waiters.push(waiter);
    });
  }

  /** Admits a request at once (the caller must call `settle` once it ends), or says why not. */
  admit(): Admission {
    const state = this.state;
    if (state === 'open') {
      const wait_s = Math.ceil((this.policy.breaker_open_ms - (this.now_ms() - this.opened_at_ms)) / 1000);
      return {
        admitted: false,
        refusal: {
          reason: `circuit open: the processor failed ${this.failures_in_row} times in a row; tried again in ${wait_s} s`,
          code: 'ECIRCUITOPEN',
        },
      };
    }
    if (state === 'half_open') {
      if (this.probing) {
        return { admitted: false, refusal: { reason: 'circuit half open: one request is testing the processor', code: 'ECIRCUITOPEN' } };
      }
      this.breaker = 'half_open';
    }
    if (this.in_flight_count >= this.policy.max_in_flight) return this.inFlightLimit('');
    this.in_flight_count += 1;
    const probe = state === 'half_open';
    if (probe) this.probing = true;
    return { admitted: true, probe };
  }

  /** The end of an admitted request: `failed` as this file's header defines a failure. */
  settle(admitted: { readonly probe: boolean }, failed: boolean): void {
    this.in_flight_count = Math.max(0, this.in_flight_count - 1);
    if (admitted.probe) this.probing = false;
    this.record(admitted.probe, failed);
    this.handOver();
  }

  private record(probe: boolean, failed: boolean): void {
    if (!failed) {
      this.failures_in_row = 0;
      this.breaker = 'closed';
      return;
    }
    this.failures_in_row += 1;
    if (probe || (this.breaker === 'closed' && this.failures_in_row >= this.policy.breaker_failures)) {
      this.breaker = 'open';
      this.opened_at_ms = this.now_ms();
    }
  }

  /** The refusal of a request past the in-flight limit, `more` appended to its reason. */
  private inFlightLimit(more: string): Admission {
    const reason = `${this.policy.max_in_flight} requests to this processor already in flight${more}`;
    return { admitted: false, refusal: { reason, code: 'EINFLIGHTLIMIT' } };
  }

  /**
   * Hands free slots to the waiters, oldest first. Each is admitted as a new request would be: if
   * the breaker has opened meanwhile, the waiters are refused now rather than at their time-outs,
   * REFUSALS_PER_TURN in each turn of the event loop. Each refused sale is then finished and
   * answered at once; hundreds of them in one turn (a busy gateway's queue when its processor
   * hangs) held every other gateway's sales behind them for a hundred milliseconds and more.
   */
  private handOver(): void {
    let refused = 0;
    while (this.waiters.length > 0 && this.in_flight_count < this.policy.max_in_flight) {
      const admission = this.admit();
      if (!admission.admitted && refused === REFUSALS_PER_TURN) {
        if (!this.hand_over_scheduled) {
          this.hand_over_scheduled = true;
          setImmediate(() => {
            this.hand_over_scheduled = false;
            this.handOver();
          });
        }
        return;
      }
      if (!admission.admitted) refused += 1;
      const waiter = this.waiters.shift()!;
      clearTimeout(waiter.timer);
      waiter.resolve(admission);
    }
  }
}
