// The embedded store's helper threads (the WAL's fsync, wal-sync.ts; its checkpoints,
// wal-checkpoint.ts): a worker running a short program given as source, with its V8 heap bounded.
//
// Each runs a few lines and keeps almost nothing, so a bound far below Node's defaults (which size
// a worker's heap from the machine's memory, as the main thread's) costs them nothing and makes a
// runaway thread fail at a known size instead of growing with the gateway's RSS: it then ends with
// ERR_WORKER_OUT_OF_MEMORY, which its owner already treats as the thread failing. With 4 MB of
// old space a worker does not even start (measured on Node 20); 16 leaves it room.
import { Worker } from 'node:worker_threads';

/** The V8 heap each store thread may use. */
export const STORE_THREAD_LIMITS = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 } as const;

/** Starts `source` (CommonJS, `require` available) on a bounded thread that never keeps the process alive by itself. */
export function startStoreThread(source: string, workerData?: unknown): Worker {
  const worker = new Worker(source, { eval: true, resourceLimits: STORE_THREAD_LIMITS, workerData });
  worker.unref();
  return worker;
}
