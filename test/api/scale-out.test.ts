// Scale-out (issue 7 §3, docs/scale-out.md): `paygate start` with PAYGATE_WORKERS=2 on one
// PostgreSQL runs two gateway processes behind one address. Sales sent to that address are
// served by both; each notification reaches the merchant once; a worker killed with SIGKILL is
// replaced by the primary; SIGTERM to the primary stops every worker. PostgreSQL only: the
// embedded SQLite store is single-process (the configuration refuses PAYGATE_WORKERS > 1 there).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { saleA } from '../support/bodies.js';
import { postSigned } from '../support/client.js';
import { TEST_MASTER_KEY } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { merchantVerify, notificationOf, signedReply, waitUntil } from '../support/notification-merchant.js';
import { createTestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';

const WORKERS = 2;
const SENDERS = 8;
const SALES_PER_ROUND = 120;

const cleanups: (() => Promise<void>)[] = [];
let primary: ChildGateway | null = null;
afterAll(async () => {
  await primary?.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** pino lines of the primary and its workers (one log file, appended to by every process). */
let log_file = '';
function logLines(_child: ChildGateway): Record<string, unknown>[] {
  if (!fs.existsSync(log_file)) return [];
  return fs
    .readFileSync(log_file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

function listeningPids(child: ChildGateway): number[] {
  return logLines(child)
    .filter((line) => line.msg === 'paygate listening')
    .map((line) => line.pid as number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.runIf(storeKinds().includes('postgres'))(`PAYGATE_WORKERS=${WORKERS} on one PostgreSQL`, () => {
  it('serves sales from every worker through one address and delivers each notification once', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-scale-'));
    cleanups.push(async () => fs.rmSync(data_dir, { recursive: true, force: true }));
    const receiver: MerchantReceiver = await startMerchantReceiver();
    cleanups.push(() => receiver.close());

    log_file = path.join(data_dir, 'gateway.log');
    primary = await spawnGateway(
      {
        DATABASE_URL: database.url,
        PAYGATE_MASTER_KEY: TEST_MASTER_KEY,
        PAYGATE_DATA_DIR: data_dir,
        PAYGATE_WORKERS: String(WORKERS),
        PAYGATE_LOG_FILE: log_file,
        PAYGATE_LOG_LEVEL: 'info',
        PAYGATE_NOTIFY_POLL_MS: '100',
        PAYGATE_NOTIFY_CONCURRENCY: '16',
        // A lease of a killed worker ends soon, so its notifications go out within the test.
        PAYGATE_OUTBOUND_TIMEOUT_MS: '2000',
        PAYGATE_NOTIFY_LEASE_MS: '3000',
      },
      { expect_demo: true },
    );
    const gateway = primary;
    const merchant = gateway.demo! as unknown as Parameters<typeof saleA>[0];
    // The demo merchant is created and announced once, by the primary.
    expect(gateway.output().match(/Demo sandbox merchant created/g)).toHaveLength(1);
    const first_pids = await waitUntil(() => {
      const pids = new Set(listeningPids(gateway));
      return pids.size === WORKERS ? [...pids] : undefined;
    }, `${WORKERS} workers listening`);
    expect(first_pids).not.toContain(gateway.process.pid);
    // The first screen (where to go next) and the sandbox's admin token: once, by the primary, not by each worker.
    await waitUntil(() => /Admin token /.test(gateway.output()), 'the first screen');
    expect(gateway.output().match(/Where to go next:/g)).toHaveLength(1);
    expect(gateway.output().match(/Sandbox admin token created/g)).toHaveLength(1);

    const deliveries = new Map<string, number>();
    let bad_signatures = 0;
    receiver.setReply('/notify', (request) => {
      const body = notificationOf(request);
      if (!merchantVerify(body, merchant.secret)) bad_signatures += 1;
      const key = `${String(body.trace_id)}:${String(body.transaction_status)}`;
      deliveries.set(key, (deliveries.get(key) ?? 0) + 1);
      return signedReply(merchant.secret);
    });
    const notification_url = `${receiver.url}/notify`;

    const trace_ids: number[] = [];
    async function round(): Promise<void> {
      let left = SALES_PER_ROUND;
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          while (left > 0) {
            left -= 1;
            const answer = await postSigned(gateway.url, '/api/process', saleA(merchant, { notification_url }), merchant.secret);
            expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
            trace_ids.push(answer.body.trace_id as number);
          }
        }),
      );
    }

    await round();
    // Every worker served sales (the primary hands connections round-robin). pino writes
    // asynchronously, so the log may lag the answers a little.
    const serving = await waitUntil(
      () => {
        const pids = new Set(
          logLines(gateway)
            .filter((line) => line.msg === 'request' && line.route === '/api/process')
            .map((line) => line.pid as number),
        );
        return pids.size === WORKERS ? pids : undefined;
      },
      'sales logged by every worker',
      10_000,
    );
    expect([...serving].sort()).toEqual([...first_pids].sort());

    // A worker killed with SIGKILL is replaced; the address keeps serving. It is killed once the
    // first round is notified, so no attempt of it is cut off: the "never twice" check below stays
    // exact (an attempt cut off mid-way may repeat, by design; test/api/notifications-processes
    // covers that case).
    const first_round = new Set(trace_ids.map((trace_id) => `${trace_id}:approved`));
    await waitUntil(() => [...first_round].every((key) => deliveries.has(key)), 'the first round notified', 30_000);
    await waitUntil(
      async () => {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          return (
            (await client.query<{ n: number }>(`select count(*)::int as n from notifications where state <> 'delivered'`)).rows[0]!.n === 0
          );
        } finally {
          await client.end();
        }
      },
      'the first round recorded as delivered',
      30_000,
    );
    process.kill(first_pids[0]!, 'SIGKILL');
    await waitUntil(() => listeningPids(gateway).filter((pid) => !first_pids.includes(pid)).length === 1, 'a replacement worker');
    await round();

    const expected = new Set(trace_ids.map((trace_id) => `${trace_id}:approved`));
    expect(expected.size).toBe(2 * SALES_PER_ROUND);
    await waitUntil(() => [...expected].every((key) => deliveries.has(key)), 'every approved notification', 30_000);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    let states: Record<string, number>;
    let failed_attempts: number;
    try {
      const recorded = await waitUntil(
        async () => {
          const rows = (
            await client.query<{ state: string; n: number }>('select state, count(*)::int as n from notifications group by state')
          ).rows;
          const by_state = Object.fromEntries(rows.map((r) => [r.state, r.n]));
          return by_state.delivered === expected.size && Object.keys(by_state).length === 1 ? by_state : undefined;
        },
        'every notification recorded as delivered',
        30_000,
      );
      states = recorded;
      failed_attempts = (
        await client.query<{ n: number }>(`select count(*)::int as n from notification_attempts where outcome <> 'delivered'`)
      ).rows[0]!.n;
    } finally {
      await client.end();
    }
    expect(states).toEqual({ delivered: expected.size });
    expect(bad_signatures).toBe(0);
    expect(deliveries.size).toBe(expected.size);
    // At-least-once: a notification reaches the merchant twice only after a recorded failed attempt.
    const twice = [...deliveries.values()].filter((n) => n > 1).length;
    expect(twice).toBeLessThanOrEqual(failed_attempts);
    expect(twice).toBe(0);

    // SIGTERM to the primary stops every worker, then the primary.
    const worker_pids = [...new Set(listeningPids(gateway))];
    await gateway.kill('SIGTERM');
    expect(gateway.process.exitCode).toBe(0);
    await waitUntil(() => worker_pids.every((pid) => !alive(pid)), 'workers gone after SIGTERM', 10_000);
    primary = null;
  });
});
