// Group commit for the embedded store. SQLite has one writer, and every COMMIT's callers wait for
// the fsync of the WAL after it (wal-sync.ts). Units of work that arrive while a commit is under
// way queue up; the next batch runs them in ONE database transaction, each inside its own
// savepoint (a unit that fails is rolled back alone), then commits once. Each caller is answered
// only after that COMMIT and its fsync, so an answer still means "durably committed". At low load
// a batch holds one unit and nothing waits.
//
// A batch starts on the next turn of the event loop (setImmediate), not at once: better-sqlite3
// is synchronous, so a batch started at once would run to its COMMIT without ever letting the
// requests that already arrived reach their own transactions, and every batch would hold one
// unit. Deferring to the check phase lets every request read in this turn queue its unit first.
//
// The savepoint commands go straight to the connection (`savepoint`, below), not through
// Kysely's savepoint API: two per unit, on the path of every write, and Kysely builds a new
// transaction object for each.
//
// A batch may end with work of the store's own (`BatchEnd`), in the same transaction just before
// its COMMIT: the delivery worker leases the notifications the batch's units made due there
// (sql-store.ts), so that a notification's lease costs no transaction, COMMIT and fsync of its own.
import type { ControlledTransaction, Kysely, Transaction } from 'kysely';

/** Runs one savepoint command (`savepoint "x"`, `release "x"`, `rollback to "x"`) in the open transaction. */
export type SavepointCommand = (command: string) => void;

/**
 * Work run at the end of every batch, after its units and before its COMMIT, in a savepoint of its
 * own: when it throws, what it wrote is rolled back and the batch commits without it. What it
 * returns is told whether the batch then committed (durably) or not.
 */
export type BatchEnd<DB> = (trx: Transaction<DB>) => Promise<((committed: boolean) => void) | null>;

interface Unit<DB> {
  readonly work: (trx: Transaction<DB>) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export class GroupCommitter<DB> {
  private queue: Unit<DB>[] = [];
  private draining = false;
  private scheduled = false;
  /** Batches committed and units in them, for benchmarks and tests. */
  readonly stats = { batches: 0, units: 0 };

  constructor(
    private readonly root: Kysely<DB>,
    private readonly max_batch_units: number,
    private readonly savepoint: SavepointCommand,
    private readonly batch_end: BatchEnd<DB> | null = null,
  ) {
    if (max_batch_units < 1) throw new Error('max_batch_units must be at least 1');
  }

  run<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.draining || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) await this.runBatch(this.queue.splice(0, this.max_batch_units));
    } finally {
      this.draining = false;
    }
  }

  private async runBatch(batch: Unit<DB>[]): Promise<void> {
    let trx: ControlledTransaction<DB>;
    try {
      trx = await this.root.startTransaction().execute();
    } catch (error) {
      for (const unit of batch) unit.reject(error);
      return;
    }
    const outcomes: Outcome[] = [];
    let ended: ((committed: boolean) => void) | null = null;
    try {
      for (const [index, unit] of batch.entries()) {
        const name = `"unit_${index}"`;
        this.savepoint(`savepoint ${name}`);
        try {
          const value = await unit.work(trx);
          this.savepoint(`release ${name}`);
          outcomes.push({ ok: true, value });
        } catch (error) {
          this.savepoint(`rollback to ${name}`);
          this.savepoint(`release ${name}`);
          outcomes.push({ ok: false, error });
        }
      }
      if (this.batch_end) ended = await this.endBatch(trx, this.batch_end);
      await trx.commit().execute();
    } catch (error) {
      // The batch itself failed (COMMIT or a savepoint command): nothing of it is committed.
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      ended?.(false);
      for (const unit of batch) unit.reject(error);
      return;
    }
    // Told before the units' callers: what the end leased is launched before their wakes arrive.
    ended?.(true);
    this.stats.batches += 1;
    this.stats.units += batch.length;
    batch.forEach((unit, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    });
  }

  /** The batch's end in a savepoint of its own: an end that fails is undone alone (it only saves work). */
  private async endBatch(trx: Transaction<DB>, batch_end: BatchEnd<DB>): Promise<((committed: boolean) => void) | null> {
    this.savepoint('savepoint "batch_end"');
    let ended: ((committed: boolean) => void) | null = null;
    try {
      ended = await batch_end(trx);
      this.savepoint('release "batch_end"');
      return ended;
    } catch {
      ended?.(false);
      this.savepoint('rollback to "batch_end"');
      this.savepoint('release "batch_end"');
      return null;
    }
  }
}
