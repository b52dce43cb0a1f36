// A bound on the DNS lookups one kind of outbound traffic may have waiting (issue 29, item 4).
//
// Node resolves names with getaddrinfo on libuv's small thread pool (4 threads), and a lookup
// whose name server does not answer holds a thread for the resolver's whole time-out (seconds,
// retried). A request given up on by its own time-out does not end its lookup: the lookup and
// everything the request held (its socket, its body, its closures) wait in the pool's queue until
// the resolver gives up. So a few merchants whose notification hosts' DNS times out, retried
// over and over, made that queue, and the process's memory, grow without bound, and slowed every
// other lookup, the processors' included. The gate bounds it:
// - lookups of the same name in flight at once are one lookup whose answer they share (at most
//   `max_waiters_per_host` wait for it);
// - at most `max_in_flight` names are being looked up at once; the next ones wait their turn, at
//   most `max_queued` of them; past that a lookup fails at once (ELOOKUPBUSY), and the
//   notification is sent again later on its schedule;
// - a name whose lookup failed is answered with that failure for `failure_cache_ms`, without
//   asking again (a dead name is not asked about on every retry of every notification);
// - at most `max_waiting` callers wait in the gate at once, whatever names they wait for; past
//   that a lookup fails at once (ELOOKUPBUSY). Each waiting caller holds one of the notification
//   worker's slots, so a run of hosts whose DNS hangs can take only that many of them: the other
//   slots keep delivering to merchants whose names answer (measured before this bound: all 32
//   slots waiting on dead names, 17 650 notifications to good hosts overdue after a 10-minute soak).
import dns from 'node:dns';

export interface LookupGateLimits {
  readonly max_in_flight: number;
  /** Names waiting for a free slot, at most. */
  readonly max_queued: number;
  readonly max_waiters_per_host: number;
  readonly failure_cache_ms: number;
  /** Callers waiting in the gate (for a lookup in flight or queued), at most, over all names. */
  readonly max_waiting: number;
}

type LookupAll = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;
export type Resolver = (hostname: string, options: dns.LookupAllOptions, callback: LookupAll) => void;

const defaultResolver: Resolver = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/** The error a lookup refused by the gate answers with. */
export function lookupBusy(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${hostname}: too many DNS lookups waiting`), { code: 'ELOOKUPBUSY' });
}

export class LookupGate {
  private readonly pending = new Map<string, LookupAll[]>();
  private readonly failed = new Map<string, { readonly error: NodeJS.ErrnoException; readonly until_ms: number }>();
  /** Names waiting for a slot, in order, each with its options. */
  private readonly queue: { readonly key: string; readonly hostname: string; readonly options: dns.LookupOptions }[] = [];
  private waiting_callers = 0;

  constructor(
    private readonly limits: LookupGateLimits,
    private readonly resolve: Resolver = defaultResolver,
    private readonly now_ms: () => number = Date.now,
  ) {}

  /** Names being looked up now. */
  get in_flight(): number {
    return this.pending.size - this.queue.length;
  }

  /** Names waiting for a slot. */
  get queued(): number {
    return this.queue.length;
  }

  /** Callers waiting for an answer (any name). */
  get waiting(): number {
    return this.waiting_callers;
  }

  /** All the addresses of `hostname`, as dns.lookup with `all: true` answers them. */
  lookup(hostname: string, options: dns.LookupOptions, callback: LookupAll): void {
    const key = `${hostname}|${options.family ?? 0}`;
    const failure = this.failed.get(key);
    if (failure !== undefined) {
      if (failure.until_ms > this.now_ms()) return callback(failure.error, []);
      this.failed.delete(key);
    }
    if (this.waiting_callers >= this.limits.max_waiting) return callback(lookupBusy(hostname), []);
    const waiting = this.pending.get(key);
    if (waiting !== undefined) {
      if (waiting.length >= this.limits.max_waiters_per_host) return callback(lookupBusy(hostname), []);
      waiting.push(callback);
      this.waiting_callers += 1;
      return;
    }
    if (this.pending.size - this.queue.length >= this.limits.max_in_flight) {
      if (this.queue.length >= this.limits.max_queued) return callback(lookupBusy(hostname), []);
      this.pending.set(key, [callback]);
      this.waiting_callers += 1;
      this.queue.push({ key, hostname, options });
      return;
    }
    this.pending.set(key, [callback]);
    this.waiting_callers += 1;
    this.start(key, hostname, options);
  }

  private start(key: string, hostname: string, options: dns.LookupOptions): void {
    this.resolve(hostname, { ...options, all: true }, (error, addresses) => {
      const callbacks = this.pending.get(key) ?? [];
      this.pending.delete(key);
      this.waiting_callers -= callbacks.length;
      if (error) {
        this.failed.set(key, { error, until_ms: this.now_ms() + this.limits.failure_cache_ms });
        // The cache stays small: entries past their time go when the next failure comes.
        if (this.failed.size > 1_000)
          for (const [name, entry] of this.failed) if (entry.until_ms <= this.now_ms()) this.failed.delete(name);
      }
      // The slot goes to the name that waited longest.
      const next = this.queue.shift();
      if (next !== undefined) this.start(next.key, next.hostname, next.options);
      for (const waiter of callbacks) waiter(error, error ? [] : addresses);
    });
  }
}
