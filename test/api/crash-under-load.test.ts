// Crash safety under load (issue 7 §4): a gateway process takes a stream of signed sales from
// several concurrent senders and is killed with SIGKILL at random moments, then restarted on the
// same database. Every sale that was answered with status 0 must be in the database with the
// status it was answered with, and with the notification of that status; no order_id may have
// two transactions. A test of outcomes: nothing here is timed, every wait is bounded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyBody } from '../../src/domain/signing.js';
import { type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { saleA } from '../support/bodies.js';
import { signed } from '../support/client.js';
import { TEST_MASTER_KEY } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { signedReply, sleep } from '../support/notification-merchant.js';
import { createTestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';

const SENDERS = 10;
/** Upper bounds of the run: whichever comes first ends the load. */
const MAX_SALES = 1_500;
const KILLS = 3;
/** Each life of the gateway lasts a random 300-1,300 ms of load before its SIGKILL. */
const LIFE_MIN_MS = 300;
const LIFE_SPREAD_MS = 1_000;
/** Load after the last restart, so sales also finish on a process that is not killed. */
const LAST_LIFE_MS = 800;
const REQUEST_TIMEOUT_MS = 10_000;

/** The CVVs of the run and the status each is answered with (decisions §7). */
const OUTCOMES: readonly (readonly [cvv: string, status: string])[] = [
  ['568', 'approved'],
  ['568', 'approved'],
  ['801', 'rejected'],
  ['444', 'error'],
];

const cleanups: (() => Promise<void>)[] = [];
const children: ChildGateway[] = [];
afterAll(async () => {
  for (const child of children) await child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Answered {
  readonly order_id: string;
  readonly trace_id: number;
  readonly transaction_status: string;
}

interface DatabaseView {
  transactions(): Promise<{ order_id: string; trace_id: number; status: string; answer_json: string | null }[]>;
  notifications(): Promise<{ trace_id: number; payload_json: string }[]>;
  duplicateOrders(): Promise<{ order_id: string; n: number }[]>;
  /** Transactions without the status change that created them: a reservation committed in part. */
  unrecorded(): Promise<{ trace_id: number }[]>;
  close(): Promise<void>;
}

async function openView(kind: string, env: Record<string, string>): Promise<DatabaseView> {
  const duplicates = `select order_id, count(*) as n from transactions group by merchant_id, transaction_type, order_id having count(*) > 1`;
  const unrecorded = `select trace_id from transactions t where not exists (select 1 from status_changes s where s.trace_id = t.trace_id and s.to_status = 'pending')`;
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    return {
      transactions: async () =>
        (await client.query('select order_id, trace_id::int as trace_id, status, answer_json from transactions')).rows,
      notifications: async () => (await client.query('select trace_id::int as trace_id, payload_json from notifications')).rows,
      duplicateOrders: async () =>
        (
          await client.query(
            `select order_id, count(*)::int as n from transactions group by merchant_id, transaction_type, order_id having count(*) > 1`,
          )
        ).rows,
      unrecorded: async () => (await client.query(unrecorded)).rows,
      close: () => client.end(),
    };
  }
  const db = new BetterSqlite3(path.join(env.PAYGATE_DATA_DIR!, 'paygate.sqlite'), { readonly: true });
  return {
    transactions: async () => db.prepare('select order_id, trace_id, status, answer_json from transactions').all() as never,
    notifications: async () => db.prepare('select trace_id, payload_json from notifications').all() as never,
    duplicateOrders: async () => db.prepare(duplicates).all() as never,
    unrecorded: async () => db.prepare(unrecorded).all() as never,
    close: async () => {
      db.close();
    },
  };
}

describe.each(storeKinds())('SIGKILL under a load of sales on %s', (kind) => {
  it('keeps every sale answered with status 0, with its notification, and never two transactions for one order_id', async () => {
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-crash-'));
    cleanups.push(async () => fs.rmSync(data_dir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      PAYGATE_DATA_DIR: data_dir,
      PAYGATE_LOG_LEVEL: 'warn',
      PAYGATE_LOG_FILE: path.join(data_dir, 'gateway.log'),
      PAYGATE_NOTIFY_POLL_MS: '100',
      PAYGATE_DUE_WORK_POLL_MS: '100',
    };
    if (kind === 'postgres') {
      const database = await createTestDatabase();
      cleanups.push(() => database.drop());
      env.DATABASE_URL = database.url;
      env.PAYGATE_MASTER_KEY = TEST_MASTER_KEY;
    }
    // The merchant acknowledges every notification (signed status 0).
    const receiver: MerchantReceiver = await startMerchantReceiver();
    cleanups.push(() => receiver.close());

    let gateway = await spawnGateway(env, { expect_demo: true });
    children.push(gateway);
    const merchant = gateway.demo! as unknown as Parameters<typeof saleA>[0];
    receiver.setReply('/notify', signedReply(merchant.secret));
    const notification_url = `${receiver.url}/notify`;

    const answered: Answered[] = [];
    const sent_orders: string[] = [];
    let refused_connections = 0;
    let bad_answers = 0;
    let stop = false;
    let sequence = 0;
    /** Resolves when the current gateway process is up; replaced while one is being restarted. */
    let up: Promise<void> = Promise.resolve();

    async function sender(): Promise<void> {
      while (!stop && sequence < MAX_SALES) {
        const [cvv, expected] = OUTCOMES[sequence % OUTCOMES.length]!;
        sequence += 1;
        const body = signed(saleA(merchant, { cvv, notification_url }), merchant.secret);
        sent_orders.push(body.order_id as string);
        let text: string;
        try {
          const response = await fetch(`${gateway.url}/api/process`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          text = await response.text();
        } catch {
          // Killed before or while answering: the sale may or may not exist, but it was not acknowledged.
          refused_connections += 1;
          await sleep(20);
          await up;
          continue;
        }
        const answer = JSON.parse(text) as Record<string, unknown>;
        if (answer.status !== 0) continue;
        if (!verifyBody(answer, merchant.secret) || answer.transaction_status !== expected || typeof answer.trace_id !== 'number') {
          bad_answers += 1;
          continue;
        }
        answered.push({ order_id: body.order_id as string, trace_id: answer.trace_id, transaction_status: answer.transaction_status });
      }
    }

    const load = Promise.all(Array.from({ length: SENDERS }, () => sender()));
    for (let kill = 0; kill < KILLS && sequence < MAX_SALES; kill += 1) {
      await sleep(LIFE_MIN_MS + Math.floor(Math.random() * LIFE_SPREAD_MS));
      let restarted!: () => void;
      up = new Promise<void>((resolve) => {
        restarted = resolve;
      });
      await gateway.kill('SIGKILL');
      // Restarted on the same database (a new port; the senders follow `gateway.url`).
      gateway = await spawnGateway(env);
      children.push(gateway);
      restarted();
    }
    await sleep(LAST_LIFE_MS);
    stop = true;
    await load;

    console.log(
      `[crash under load, ${kind}] ${sent_orders.length} sales sent, ${answered.length} answered with status 0, ` +
        `${refused_connections} cut off by the kills, ${KILLS} kills`,
    );
    expect(bad_answers).toBe(0);
    expect(answered.length).toBeGreaterThan(0);
    // Some requests must have met a dead process, or the kills tested nothing.
    expect(refused_connections).toBeGreaterThan(0);

    const view = await openView(kind, env);
    cleanups.push(() => view.close());
    try {
      const rows = new Map((await view.transactions()).map((row) => [row.order_id, row]));
      const notified = new Set(
        (await view.notifications()).map((n) => {
          const payload = JSON.parse(n.payload_json) as { transaction_status: string };
          return `${n.trace_id}:${payload.transaction_status}`;
        }),
      );
      for (const sale of answered) {
        const row = rows.get(sale.order_id);
        expect(row, `answered sale ${sale.order_id}`).toBeDefined();
        expect(row!.trace_id).toBe(sale.trace_id);
        expect(row!.status).toBe(sale.transaction_status);
        expect(JSON.parse(row!.answer_json!)).toMatchObject({ trace_id: sale.trace_id, transaction_status: sale.transaction_status });
        expect(
          notified.has(`${sale.trace_id}:${sale.transaction_status}`),
          `notification of ${sale.order_id} (${sale.transaction_status})`,
        ).toBe(true);
      }
      expect(await view.duplicateOrders()).toEqual([]);
      expect(await view.unrecorded()).toEqual([]);
      // Nothing the gateway holds came from anywhere but these senders.
      const sent = new Set(sent_orders);
      for (const order_id of rows.keys()) expect(sent.has(order_id)).toBe(true);
    } finally {
      await gateway.kill('SIGTERM');
    }
  });
});
