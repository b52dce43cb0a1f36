// The embedded store's helper threads run with a bounded V8 heap (store/store-thread.ts): a thread
// that outgrows it ends with ERR_WORKER_OUT_OF_MEMORY and the gateway goes on, and both of the
// store's threads (the WAL's fsync and its checkpoints) are started that way.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startStoreThread, STORE_THREAD_LIMITS } from '../../src/store/store-thread.js';
import { openSqliteStore } from '../../src/store/open.js';

// Watches the real function (it still starts real threads) to see which threads the store starts.
vi.mock('../../src/store/store-thread.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/store/store-thread.js')>();
  return { ...original, startStoreThread: vi.fn(original.startStoreThread) };
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-store-thread-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** How the thread ended: its error's code, or 'exit' when it ended without one. */
function ending(worker: Worker): Promise<string> {
  return new Promise((resolve) => {
    worker.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    worker.once('exit', () => resolve('exit'));
  });
}

describe('startStoreThread', () => {
  it('runs its program, and ends a thread that outgrows its heap bound without harming the process', async () => {
    const small = startStoreThread(
      `require('node:worker_threads').parentPort.postMessage(require('node:worker_threads').workerData * 2);`,
      21,
    );
    expect(await new Promise((resolve) => small.once('message', resolve))).toBe(42);
    await small.terminate();

    // Keeps 1 MB arrays until the heap is full: 48 MB would fit under Node's own default for a worker.
    const greedy = startStoreThread(
      `const kept = []; for (let i = 0; i < 48; i++) kept.push(new Array(131072).fill(i + 0.5)); require('node:worker_threads').parentPort.postMessage(kept.length);`,
    );
    const messages: unknown[] = [];
    greedy.on('message', (message) => messages.push(message));
    expect(await ending(greedy)).toBe('ERR_WORKER_OUT_OF_MEMORY');
    expect(messages).toEqual([]);
  });

  it('is how the store starts its fsync and checkpoint threads, each with the bound', async () => {
    const started = vi.mocked(startStoreThread);
    started.mockClear();
    const store = openSqliteStore(path.join(dir, 'paygate.sqlite'), { checkpoint_interval_ms: 25 });
    await store.migrate();
    await store.sandboxClock.setOffset(1_000);
    const workers = started.mock.results.map((result) => result.value as Worker);
    expect(workers).toHaveLength(2);
    for (const worker of workers) expect(worker.resourceLimits).toMatchObject(STORE_THREAD_LIMITS);
    await store.close();
  });
});
