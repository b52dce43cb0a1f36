// The delivery worker: runs in every gateway instance, leases due notifications from the
// outbox, sends each once (sender.ts) and records the attempt and what comes next (schedule.ts)
// in one database transaction. Everything it needs to know is in the database, so a restart or
// a kill -9 loses nothing: an attempt cut off mid-way keeps its lease until the lease ends, then
// any instance sends it again. Leases are measured on the real wall clock (domain/clock.ts wallClock), due
// times and the resend bound on the gateway clock, which the sandbox moves.
//
//   poll (notify_poll_ms) ─┐
//   wake() after commit ───┼─> pump: lease up to the free slots ─> attempt ─> finish (batched) ─> pump
//   finished attempt ──────┘
//
// A lease round that found fewer due notifications than it had slots for has seen all there were:
// an attempt that ends, or is recorded, after it pumps again only if something may have fallen due
// since (`may_be_due`: a wake, a poll, a full round) or the recording let a later notification of
// the same transaction go (in-order delivery). At even rates each notification used to cost three
// lease rounds, two of them finding nothing.
//
// On SQLite, whose transactions commit in groups, a batch that made a notification due leases in
// its own transaction just before its COMMIT (`leaseAtCommit`, Store.leaseWithCommits): the
// notification's lease then costs no transaction, COMMIT and fsync of its own, and it is sent as
// soon as the batch is on disk. A slot is taken when a lease is written, not when it is launched,
// so two leases in one batch (a round's, then the batch's end) never ask for the same free slot.
// On PostgreSQL a sale's notification is written leased in the sale's own statement instead
// (`claimOnInsert`, Store.leaseOnInsert), when a slot is free: no lease round at all.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { INTERRUPTED, type OutboundPolicy } from '../outbound/post.js';
import type { NotificationRow } from '../domain/notification-record.js';
import type { CommitLease, InsertLease, Store, UnitOfWork } from '../store/store.js';
import { afterFailure, boundFrom, type RetrySchedule } from './schedule.js';
import { type AttemptResult, sendNotification } from './sender.js';
import { startFinishBatch } from './finish-batch.js';

/**
 * Ended attempts wait at most this long to be recorded with others (finish-batch.ts): a
 * notification's next attempt, or its transaction's next notification, is that much later, and
 * a busy PostgreSQL instance records many attempts a statement instead of one (about a dozen in
 * the benchmark's sale, bench/STATEMENTS.md).
 */
export const FINISH_GAP_MS = 10;

/**
 * Ended attempts waiting to be recorded, at most, per slot: a slot is free again once its HTTP
 * attempt has ended, not once it is recorded (the wait for the next recording, about FINISH_GAP_MS,
 * held each slot longer than the send itself, and capped delivery at some 1 400 a second with 32
 * slots whatever the CPU allowed). The row stays leased until recorded, so nobody sends it again
 * meanwhile; this bounds how many may pile up while the database is slow.
 */
const RECORDING_PER_SLOT = 1;

export interface NotificationWorkerOptions {
  readonly store: Store;
  /** The gateway clock (sandbox-movable): due times, the resend bound, attempt times. */
  readonly clock: Clock;
  /**
   * Measures leases: the real wall clock (domain/clock.ts wallClock), never the sandbox clock,
   * so advancing POST /sandbox/clock cannot end the lease of an attempt in flight.
   */
  readonly lease_clock: Clock;
  readonly logger: Logger;
  /** The merchant's secret in clear, or null when the merchant no longer exists. */
  readonly secretOf: (merchant_id: string) => Promise<string | null>;
  readonly policy: OutboundPolicy;
  readonly schedule: RetrySchedule;
  readonly poll_ms: number;
  /** Longer than policy.timeout_ms (config.ts enforces it), so a lease never ends mid-attempt (wall clock). */
  readonly lease_ms: number;
  readonly concurrency: number;
  /** Sandbox: re-read the shared clock offset so instances agree on "now". */
  readonly sync_clock?: (() => Promise<void>) | undefined;
  /** Names this instance in lease_owner; random by default. */
  readonly owner?: string;
  /** stop() waits this long for attempts in flight before cutting them off; the send time-out by default. */
  readonly stop_grace_ms?: number;
  /** At least this long between two recordings of ended attempts (FINISH_GAP_MS by default; finish-batch.ts). */
  readonly finish_gap_ms?: number;
  /** Told of every attempt once recorded: its outcome and how long after it fell due it started (metrics). */
  readonly on_attempt?: (outcome: string, lag_ms: number) => void;
}

export interface NotificationWorker {
  /** Look for due notifications now instead of at the next poll (a status change just committed). */
  wake(): void;
  /** Resolves when no attempt is in flight and nothing due could be leased (tests). */
  idle(): Promise<void>;
  /** Stops leasing and waits for the attempts in flight to be sent and recorded (cut off after stop_grace_ms). */
  stop(): Promise<void>;
  readonly owner: string;
}

export function startNotificationWorker(options: NotificationWorkerOptions): NotificationWorker {
  const owner = options.owner ?? `paygate-${process.pid}-${randomBytes(4).toString('hex')}`;
  const lease_clock = options.lease_clock;
  /**
   * Every attempt until it is recorded; `sending` counts the slots taken: leased notifications
   * from the lease's statement until their HTTP attempt has ended.
   */
  const in_flight = new Set<Promise<void>>();
  let sending = 0;
  /** Notifications that may be leased now: free slots, within the bound on attempts still to be recorded. */
  const leasable = () => Math.min(options.concurrency - sending, options.concurrency * (1 + RECORDING_PER_SLOT) - in_flight.size);
  let stopped = false;
  /** Something may be due that no lease round has seen yet: set by wake, poll and a round that filled every slot it asked for. */
  let may_be_due = true;
  let pumping: Promise<void> | null = null;
  let pump_again = false;
  let timer: NodeJS.Timeout | null = null;
  // One controller per attempt in flight, aborted one by one at shutdown: one shared signal
  // would collect an abort listener per attempt (MaxListenersExceededWarning under load).
  const cut_offs = new Set<AbortController>();
  // Ended attempts are recorded together (finish-batch.ts): one statement for many on PostgreSQL.
  const finishes = startFinishBatch({
    record: (batch, now_ms) => options.store.notifications.finishAttempts(batch, now_ms),
    now_ms: () => options.clock.now_ms(),
    gap_ms: options.finish_gap_ms ?? FINISH_GAP_MS,
  });

  /** A lease round's clocks: due on the gateway clock, leased on the wall clock (LeaseTimes). */
  const leaseTimes = () => ({ due_ms: options.clock.now_ms(), wall_ms: lease_clock.now_ms() });

  /** Sends one leased notification and records the attempt; true when the recording may have let a later notification of its transaction go. */
  async function attempt(row: NotificationRow): Promise<boolean> {
    const started_at_ms = options.clock.now_ms();
    let result: AttemptResult;
    const cut_off = new AbortController();
    cut_offs.add(cut_off);
    try {
      const secret = await options.secretOf(row.merchant_id);
      result =
        secret === null
          ? { outcome: 'retry', reason: 'merchant not found', http_status: null, reply_excerpt: null, duration_ms: 0 }
          : await sendNotification(row, secret, options.policy, cut_off.signal);
    } catch (error) {
      options.logger.error({ err: error, notification_id: row.id }, 'notification attempt failed inside the gateway');
      result = { outcome: 'retry', reason: 'gateway error while sending', http_status: null, reply_excerpt: null, duration_ms: 0 };
    } finally {
      cut_offs.delete(cut_off);
      // The slot is free: another notification may be sent while this one waits to be recorded.
      sending -= 1;
      if (!stopped && may_be_due) pump();
    }
    const now_ms = options.clock.now_ms();
    const attempts = row.attempts + 1;
    let patch: Pick<NotificationRow, 'state' | 'next_attempt_at_ms' | 'last_error'> & { attempts: number };
    if (result.outcome === 'delivered') {
      patch = { state: 'delivered', next_attempt_at_ms: row.next_attempt_at_ms, last_error: null, attempts };
    } else if (result.outcome === 'undeliverable') {
      patch = { state: 'failed', next_attempt_at_ms: row.next_attempt_at_ms, last_error: result.reason, attempts };
    } else if (result.outcome === 'refused') {
      patch = { state: 'refused', next_attempt_at_ms: row.next_attempt_at_ms, last_error: result.reason, attempts };
    } else {
      // Cut off by our own shutdown: not the merchant's fault, due again at once (by any instance).
      const interrupted = result.reason === INTERRUPTED;
      const next = afterFailure(boundFrom(row), attempts, now_ms, options.schedule, interrupted ? 0 : undefined);
      patch =
        next.state === 'failed'
          ? { state: 'failed', next_attempt_at_ms: row.next_attempt_at_ms, last_error: result.reason, attempts }
          : { state: 'pending', next_attempt_at_ms: next.next_attempt_at_ms, last_error: result.reason, attempts };
    }
    const finished = await finishes.finish({
      owner,
      patch,
      attempt: {
        notification_id: row.id,
        attempt_no: attempts,
        started_at_ms,
        duration_ms: result.duration_ms,
        http_status: result.http_status,
        reply_excerpt: result.reply_excerpt,
        outcome: result.outcome,
        reason: result.reason,
      },
    });
    options.on_attempt?.(result.outcome, Math.max(0, started_at_ms - row.next_attempt_at_ms));
    // A later status of the transaction was written meanwhile: this one is not sent again, and no
    // longer holds the later one back (docs/notifications.md §5). finishAttempts decided it.
    if (finished === 'superseded') {
      options.logger.info({ notification_id: row.id, trace_id: row.trace_id }, 'notification superseded by a later status');
      return true;
    }
    const log = {
      notification_id: row.id,
      trace_id: row.trace_id,
      attempt: attempts,
      outcome: result.outcome,
      reason: result.reason,
      state: patch.state,
    };
    if (finished === 'lease_lost') options.logger.warn(log, 'notification lease lost before the attempt was recorded');
    else if (result.outcome === 'undeliverable') options.logger.warn(log, 'notification failed: its destination is not allowed');
    else if (patch.state === 'failed') options.logger.warn(log, 'notification failed: resend bound reached');
    else options.logger.info(log, 'notification attempt');
    // Out of pending with a later notification of its transaction (or subscription) waiting: that
    // one may go now. Still pending (a retry, later), it holds them back; with none waiting (a
    // sale's one notification), a round would find nothing it let go. A lost lease: not known.
    return finished === 'lease_lost' || finished === 'finished_with_next';
  }

  /** Starts the attempt of a leased notification, whose slot its lease already took. */
  function launch(row: NotificationRow): void {
    const running: Promise<void> = attempt(row)
      .catch((error: unknown) => {
        options.logger.error({ err: error, notification_id: row.id }, 'recording a notification attempt failed');
        return true;
      })
      .then((released_next) => {
        in_flight.delete(running);
        // Recorded: this transaction's next notification may now be leasable, and the bound on
        // attempts waiting to be recorded has room again (a round held back by it was a full one).
        if (released_next) may_be_due = true;
        if (!stopped && may_be_due) pump();
      });
    in_flight.add(running);
  }

  async function pumpLoop(): Promise<void> {
    do {
      pump_again = false;
      if (stopped || leasable() <= 0) return;
      // Where transactions commit in groups (SQLite), in a transaction, so that the lease is
      // committed in a group with the requests' transactions (one fsync for all) instead of
      // syncing the disk on its own. Elsewhere (PostgreSQL) the lease's one statement is atomic by
      // itself, and a transaction would only add a BEGIN and a COMMIT round trip. The free slots
      // are counted when the round runs, not before it waited for its group: attempts that ended
      // meanwhile are leased for in the same statement (only this loop launches, so the count can
      // only have grown). `may_be_due` is cleared before the round: a wake while it runs sets it
      // again, and asks for another round.
      may_be_due = false;
      let asked = 0;
      let held = 0;
      let rows: NotificationRow[];
      const round = async (uow: UnitOfWork) => {
        asked = leasable();
        if (asked <= 0) return [];
        const leased = await uow.notifications.lease(leaseTimes(), asked, options.lease_ms, owner);
        // Their slots are taken now: a lease at the end of the same batch counts them (leaseAtCommit).
        held = leased.length;
        sending += held;
        return leased;
      };
      try {
        rows = options.store.groups_commits ? await options.store.transaction(round) : await round(options.store);
      } catch (error) {
        // Not committed: nothing was leased.
        sending -= held;
        throw error;
      }
      // Every slot asked for was filled: more may be due, leased when a slot frees up (launch → pump).
      if (rows.length >= asked) may_be_due = true;
      for (const row of rows) launch(row);
    } while (pump_again);
  }

  /** Store.leaseWithCommits: a lease round in a group-commit batch's transaction, launched once the batch has committed. */
  async function leaseAtCommit(tx: UnitOfWork): Promise<CommitLease> {
    const asked = stopped ? 0 : leasable();
    if (asked <= 0) return { saw_all_due: false, ended: () => undefined };
    const rows = await tx.notifications.lease(leaseTimes(), asked, options.lease_ms, owner);
    sending += rows.length;
    const saw_all_due = rows.length < asked;
    // A full round may have left some due; one that saw all there were makes earlier hints stale.
    may_be_due = !saw_all_due;
    return {
      saw_all_due,
      ended(committed) {
        // Stopped meanwhile: the leases end by themselves and any instance sends them then, as after a crash.
        if (committed && !stopped) {
          for (const row of rows) launch(row);
          return;
        }
        sending -= rows.length;
        if (committed) return;
        may_be_due = true;
        if (!stopped) pump();
      },
    };
  }

  /** Store.leaseOnInsert: a free slot for a held sale's notification, which is written leased to this worker. */
  function claimOnInsert(): InsertLease | null {
    if (stopped || leasable() <= 0) return null;
    sending += 1;
    return {
      owner,
      lease_until_ms: lease_clock.now_ms() + options.lease_ms,
      ended(row) {
        // Stopped meanwhile: the lease ends by itself and any instance sends it then, as after a crash.
        if (row && !stopped) {
          launch(row);
          return;
        }
        sending -= 1;
        // As when an attempt ends: a round held back for want of slots may run now.
        if (!stopped && may_be_due) pump();
      },
    };
  }

  /** One lease round at a time; a wake during a round asks for another round. */
  function pump(): void {
    if (pumping) {
      pump_again = true;
      return;
    }
    pumping = pumpLoop()
      .catch((error: unknown) => {
        may_be_due = true;
        options.logger.error({ err: error }, 'leasing notifications failed');
      })
      .finally(() => {
        pumping = null;
      });
  }

  async function tick(): Promise<void> {
    try {
      if (options.sync_clock) await options.sync_clock();
    } catch (error) {
      options.logger.error({ err: error }, 'reading the sandbox clock failed');
    }
    may_be_due = true;
    if (!stopped) pump();
    if (pumping) await pumping;
    if (!stopped) timer = setTimeout(() => void tick(), options.poll_ms);
  }

  timer = setTimeout(() => void tick(), 0);
  // SQLite commits in groups: what a batch makes due is leased in the batch's own transaction.
  const stop_leasing_with_commits = options.store.leaseWithCommits?.(leaseAtCommit) ?? null;
  // PostgreSQL writes a held sale's notification leased to this worker when a slot is free.
  const stop_leasing_on_insert = options.store.leaseOnInsert?.(claimOnInsert) ?? null;

  return {
    owner,
    wake() {
      may_be_due = true;
      if (!stopped) pump();
    },
    async idle() {
      for (;;) {
        if (pumping) await pumping;
        if (in_flight.size === 0) {
          // Nothing in flight: one more lease round decides whether anything is still due now.
          may_be_due = true;
          pump();
          if (pumping) await pumping;
          if (in_flight.size === 0) return;
        }
        await Promise.all([...in_flight]);
      }
    },
    async stop() {
      stopped = true;
      stop_leasing_with_commits?.();
      stop_leasing_on_insert?.();
      if (timer) clearTimeout(timer);
      if (pumping) await pumping;
      // Attempts end by themselves within the time-out. Past the grace period the rest are cut
      // off; each is recorded as interrupted and due again at once, for any instance.
      const grace_ms = options.stop_grace_ms ?? options.policy.timeout_ms;
      const grace = setTimeout(() => {
        for (const cut_off of cut_offs) cut_off.abort();
      }, grace_ms);
      try {
        while (in_flight.size > 0) await Promise.all([...in_flight]);
      } finally {
        clearTimeout(grace);
      }
    },
  };
}
