// The embedded store's commits made durable off the event loop (issue 29).
//
// better-sqlite3 is synchronous: with synchronous=FULL every COMMIT waits for fsync of the WAL on
// the event loop, and while the disk works nothing else of the gateway runs: no request is read,
// no signature checked, no answer written. Profiles put up to a third of the main thread of the
// live rows (two gateways, sales spread evenly) in it. The writer connection now runs with
// synchronous=NORMAL (a COMMIT writes its WAL frames and returns; SQLite still syncs the WAL
// before each checkpoint and the database after it; checkpoints run on a thread of their own,
// wal-checkpoint.ts) and this class does FULL's one remaining
// sync, the WAL's after each commit, on a thread of its own, before any caller of that commit is
// answered:
//
//   - `committed()` is called right after a COMMIT has returned; it resolves once an fsync of the
//     WAL that began after that COMMIT has ended, so the commit's frames are on disk;
//   - one fsync at a time; commits made while one runs are covered by the next (group commit's own
//     idea, applied to the disk: under load one fsync makes many commits durable);
//   - `durable()` is for readers: a plain SELECT may see a commit whose fsync has not ended (SQLite
//     makes a commit visible at COMMIT, before any sync NORMAL leaves out), so whatever answers
//     from a read first waits until everything committed so far is on disk (http/app.ts, onSend);
//   - a failed fsync is final, as in PostgreSQL, which stops on one: what the kernel dropped cannot
//     be known, so every waiter and every later commit is refused, and nothing more is
//     acknowledged until the gateway is restarted (SQLite then recovers what reached the WAL).
//
// The fsync runs on a worker thread of its own (`fsyncThread`), not on libuv's pool: that pool
// has four threads, and DNS lookups whose name server does not answer hold one each for seconds
// (outbound/lookup-gate.ts); a commit must not wait behind them.
import fs from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startStoreThread } from './store-thread.js';
import type { WalCheckpointer } from './wal-checkpoint.js';

/** Flushes one open file to disk (`sync`: resolves when it is there); `close` lets go of what it holds. */
export interface FileSyncer {
  sync(fd: number): Promise<void>;
  close(): Promise<void>;
}

interface Waiter {
  /** The commit it waits for: resolved once `synced` reaches it. */
  readonly commit_number: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export class WalSync {
  /** Commits reported so far, and how many of them an ended fsync covers. */
  private committed_count = 0;
  private synced_count = 0;
  private syncing = false;
  private failure: Error | null = null;
  private waiters: Waiter[] = [];
  private fd: number | null = null;
  /** fsyncs ended and commits they covered, for benchmarks and tests. */
  readonly stats = { syncs: 0, commits: 0 };

  constructor(
    /** The database's WAL file (`<database>-wal`): where a commit's frames are. */
    private readonly wal_path: string,
    private readonly syncer: FileSyncer,
    /** The WAL's checkpoints, on a thread of their own too (wal-checkpoint.ts): started at the first commit. */
    private readonly checkpointer: WalCheckpointer | null = null,
  ) {}

  /** Call right after a COMMIT returned: resolves once the WAL that holds it is on disk. */
  committed(): Promise<void> {
    this.committed_count += 1;
    this.checkpointer?.notice();
    return this.waitFor(this.committed_count);
  }

  /** Resolves once everything committed so far is on disk; null when it already is (nothing to wait for). */
  durable(): Promise<void> | null {
    if (this.failure === null && this.synced_count >= this.committed_count) return null;
    return this.waitFor(this.committed_count);
  }

  /** Waits for the fsync in flight, if any, then closes the WAL file (the store is closing). */
  async close(): Promise<void> {
    await this.durable()?.catch(() => undefined);
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    await this.syncer.close();
    await this.checkpointer?.close();
  }

  private waitFor(commit_number: number): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ commit_number, resolve, reject });
      this.startSync();
    });
  }

  private startSync(): void {
    if (this.syncing || this.failure !== null || this.synced_count >= this.committed_count) return;
    // Every commit counted now returned from its COMMIT before this line: its frames are in the file.
    const covers = this.committed_count;
    let fd: number;
    try {
      fd = this.walFile();
    } catch (error) {
      this.fail(error);
      return;
    }
    this.syncing = true;
    this.syncer.sync(fd).then(
      () => {
        this.syncing = false;
        this.stats.syncs += 1;
        this.stats.commits += covers - this.synced_count;
        this.synced_count = covers;
        const still_waiting: Waiter[] = [];
        for (const waiter of this.waiters) {
          if (waiter.commit_number <= covers) waiter.resolve();
          else still_waiting.push(waiter);
        }
        this.waiters = still_waiting;
        this.startSync();
      },
      (error: unknown) => {
        this.syncing = false;
        this.fail(error);
      },
    );
  }

  private walFile(): number {
    // SQLite deletes the WAL only when the last connection to the file closes, and the writer is
    // open for the store's life; a deleted file (no links) is reopened all the same, never synced in vain.
    if (this.fd !== null && fs.fstatSync(this.fd).nlink > 0) return this.fd;
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    this.fd = fs.openSync(this.wal_path, 'r+');
    return this.fd;
  }

  private fail(error: unknown): void {
    this.failure = new Error(`the database's write-ahead log could not be synced to disk: ${(error as Error)?.message ?? String(error)}`);
    for (const waiter of this.waiters) waiter.reject(this.failure);
    this.waiters = [];
  }
}

// The worker's whole program: fsync each descriptor it is sent (the process's descriptors are
// shared with its threads), answer null or the error's message, in order.
const FSYNC_WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', (fd) => {
  try { fs.fsyncSync(fd); parentPort.postMessage(null); }
  catch (error) { parentPort.postMessage(String(error && error.message || error)); }
});
`;

/**
 * fsync on a thread of its own, started at the first sync (a command that only reads never starts
 * it). The thread keeps the process alive only while an fsync is in flight; `close` ends it.
 */
export function fsyncThread(): FileSyncer {
  let worker: Worker | null = null;
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let ended: Error | null = null;
  const endAll = (error: Error) => {
    ended = error;
    for (const waiter of pending.splice(0)) waiter.reject(error);
  };
  const started = (): Worker => {
    if (worker !== null) return worker;
    const thread = startStoreThread(FSYNC_WORKER_SOURCE);
    thread.on('message', (answer: string | null) => {
      const waiter = pending.shift();
      if (pending.length === 0) thread.unref();
      if (waiter === undefined) return;
      if (answer === null) waiter.resolve();
      else waiter.reject(new Error(answer));
    });
    thread.on('error', (error) => endAll(error));
    thread.on('exit', () => endAll(new Error('the fsync thread ended')));
    worker = thread;
    return thread;
  };
  return {
    sync(fd: number): Promise<void> {
      if (ended !== null) return Promise.reject(ended);
      const thread = started();
      return new Promise<void>((resolve, reject) => {
        pending.push({ resolve, reject });
        thread.ref();
        thread.postMessage(fd);
      });
    },
    async close(): Promise<void> {
      if (worker === null) return;
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}
