// The embedded store's WAL checkpoints, on a thread of their own (issue 29).
//
// A checkpoint copies the WAL's committed pages back into the database file and syncs both files,
// so that the WAL can start over. SQLite runs one by itself inside the COMMIT that takes the WAL
// past 1000 pages (wal_autocheckpoint), on whichever connection made that commit: for the
// gateway, the writer on the event loop. Profiles of the live rows found those COMMITs blocking
// the event loop for 20 to 37 ms each, several times a second (two fsyncs and megabytes written),
// about 45% of all the time spent in COMMIT and straight on the tail of every answer.
//
// So the writer runs with wal_autocheckpoint=0, and a worker thread with a connection of its own
// runs `PRAGMA wal_checkpoint(PASSIVE)` every `interval_ms`: PASSIVE copies what it can without
// waiting for, or holding up, the writer or any reader, and SQLite syncs the WAL before copying and
// the database after, as in its own checkpoints. When nothing is new it reads the WAL index and
// returns. The writer restarts the WAL from its beginning at its next transaction once a
// checkpoint has copied everything no reader still uses, as it did before.
//
// Started at the store's first commit (a command that only reads never starts it) and unref'd: it
// never keeps a process alive. Should the thread fail (the file unreadable from it, the thread
// ended), `on_failure` is told once, and the store hands checkpoints back to the writer
// (open.ts), so the WAL never grows without bound.
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { startStoreThread } from './store-thread.js';

/** How often the thread checkpoints; at sale rates about SQLite's own 1000 pages or fewer each. */
export const CHECKPOINT_INTERVAL_MS = 200;
/** How long `close` waits for a checkpoint under way to end before it stops the thread anyway. */
const CLOSE_WAIT_MS = 5_000;

// The worker's whole program. Counts go to shared memory, not messages: the event loop hears
// nothing of a checkpoint that worked. A failure is posted once, and the thread ends.
const CHECKPOINT_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const counts = new Int32Array(workerData.counts);
const fail = (error) => parentPort.postMessage({ failed: String((error && error.message) || error) });
function run() {
  let db;
  try {
    const Database = require(workerData.module_path);
    db = new Database(workerData.file_path, { fileMustExist: true });
  } catch (error) {
    fail(error);
    return;
  }
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const timer = setInterval(() => {
    try {
      const result = checkpoint.get();
      Atomics.add(counts, 0, 1);
      if (result.log > 0 && result.checkpointed === result.log) Atomics.add(counts, 1, 1);
    } catch (error) {
      clearInterval(timer);
      db.close();
      fail(error);
    }
  }, workerData.interval_ms);
  parentPort.on('message', (message) => {
    if (message !== 'stop') return;
    clearInterval(timer);
    db.close();
    parentPort.close();
  });
}
run();
`;

export interface WalCheckpointerOptions {
  readonly interval_ms?: number;
  /** Told once when the thread cannot checkpoint (it has stopped): the caller takes checkpoints back. */
  readonly on_failure: (error: Error) => void;
}

export class WalCheckpointer {
  private worker: Worker | null = null;
  /** Resolves when the thread has ended, whatever ended it. */
  private ended: Promise<void> = Promise.resolve();
  private failed = false;
  private closed = false;
  private readonly counts = new Int32Array(new SharedArrayBuffer(8));

  constructor(
    private readonly file_path: string,
    private readonly options: WalCheckpointerOptions,
  ) {}

  /** Checkpoint calls made, and those that found every frame of the WAL copied back (tests, benchmarks). */
  get stats(): { readonly runs: number; readonly complete: number } {
    return { runs: Atomics.load(this.counts, 0), complete: Atomics.load(this.counts, 1) };
  }

  /** Whether the thread is checkpointing (false before the first commit, after a failure, once closed). */
  get running(): boolean {
    return this.worker !== null && !this.failed;
  }

  /** Called at each commit: starts the thread the first time. */
  notice(): void {
    if (this.worker !== null || this.failed || this.closed) return;
    const worker = startStoreThread(CHECKPOINT_WORKER_SOURCE, {
      file_path: this.file_path,
      module_path: createRequire(import.meta.url).resolve('better-sqlite3'),
      interval_ms: this.options.interval_ms ?? CHECKPOINT_INTERVAL_MS,
      counts: this.counts.buffer,
    });
    worker.on('message', (message: { failed?: string }) => {
      if (typeof message?.failed === 'string') this.fail(new Error(message.failed));
    });
    worker.on('error', (error) => this.fail(error));
    this.ended = new Promise((resolve) =>
      worker.on('exit', () => {
        if (!this.closed) this.fail(new Error('the checkpoint thread ended'));
        resolve();
      }),
    );
    this.worker = worker;
  }

  /** Stops the thread once a checkpoint under way has ended (the store is closing). */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (worker === null) return;
    worker.postMessage('stop');
    const waited = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
    await this.ended;
    clearTimeout(waited);
  }

  private fail(error: Error): void {
    if (this.failed || this.closed) return;
    this.failed = true;
    void this.worker?.terminate();
    this.options.on_failure(error);
  }
}
