// Backup and restore (issue 30 item 6, docs/production.md "Backup and restore"): scripts/backup.sh
// takes a backup of a running gateway's store WHILE senders keep making sales, restores it into a
// fresh store (a new data folder; a new PostgreSQL database), and a gateway started on it must
// hold every sale acknowledged (status 0, approved) before the backup began, as answered, read
// back through the API. Every sale the backup holds must be whole (its status and its history
// together: a snapshot of one instant, never a torn copy), and the restored gateway takes sales.
// SQLite and PostgreSQL (pg_dump / pg_restore), as storeKinds() names them.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { postSigned } from '../support/client.js';
import { startTestGateway, TEST_MASTER_KEY, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { signedReply, waitUntil } from '../support/notification-merchant.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';

const SENDERS = 6;
/** Sales acknowledged before the backup starts, at least. */
const SALES_BEFORE = 60;
/** Sales after the backup ends, so the load runs through all of it. */
const SALES_AFTER = 20;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Runs scripts/backup.sh with this environment added; resolves with its output, rejects on a non-zero exit. */
function backupScript(args: readonly string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['scripts/backup.sh', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`backup.sh ${args.join(' ')} exited ${code}: ${output}`)),
    );
  });
}

interface Acknowledged {
  readonly order_id: string;
  readonly trace_id: number;
  readonly amount: number;
}

describe.each(storeKinds())('backup and restore under load on %s', (kind) => {
  it('a backup taken while sales are made holds, once restored, every sale acknowledged before it began, whole', async () => {
    const receiver: MerchantReceiver = await startMerchantReceiver();
    cleanups.push(() => receiver.close());
    // The master key comes from the environment: a restore opens the sealed data with the same key.
    const env = { PAYGATE_MASTER_KEY: TEST_MASTER_KEY };
    const source: TestGateway = await startTestGateway(kind, { env });
    let source_open = true;
    cleanups.push(async () => {
      if (source_open) await source.close();
    });
    const merchant = source.merchant;
    receiver.setReply('/notify', signedReply(merchant.secret));
    const store_env: Record<string, string> =
      source.database_url !== null ? { DATABASE_URL: source.database_url } : { PAYGATE_DATA_DIR: source.data_dir };

    const acknowledged: Acknowledged[] = [];
    let stopping = false;
    let amount = 1000;
    const sender = async (): Promise<void> => {
      while (!stopping) {
        const body = saleA(merchant, { amount: (amount += 1), notification_url: `${receiver.url}/notify` });
        const answer = await postSigned(source.url, '/api/process', body, merchant.secret);
        expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 0, transaction_status: 'approved' });
        acknowledged.push({ order_id: body.order_id as string, trace_id: answer.body.trace_id as number, amount: body.amount as number });
      }
    };
    const senders = Array.from({ length: SENDERS }, sender);

    await waitUntil(() => acknowledged.length >= SALES_BEFORE, `${SALES_BEFORE} sales`);
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-backup-'));
    cleanups.push(async () => fs.rmSync(folder, { recursive: true, force: true }));
    const file = path.join(folder, kind === 'postgres' ? 'paygate.dump' : 'paygate-backup.sqlite');
    const before = acknowledged.slice();
    const backed_up = await backupScript(['backup', file], store_env);
    const during = acknowledged.length - before.length;
    await waitUntil(() => acknowledged.length >= before.length + during + SALES_AFTER, 'sales after the backup');
    stopping = true;
    await Promise.all(senders);
    expect(backed_up).toMatch(/backup written to/);
    // Under load: sales were acknowledged while the backup ran.
    expect(during).toBeGreaterThan(0);
    source_open = false;
    await source.close();

    // Restored into a fresh store: a new data folder, or a new database.
    let database: TestDatabase | undefined;
    let restore_env: Record<string, string>;
    let data_dir: string | undefined;
    if (kind === 'postgres') {
      database = await createTestDatabase();
      cleanups.push(() => database!.drop());
      restore_env = { DATABASE_URL: database.url };
    } else {
      data_dir = path.join(folder, 'restored-data');
      restore_env = { PAYGATE_DATA_DIR: data_dir };
    }
    expect(await backupScript(['restore', file], restore_env)).toMatch(/restored/);
    // A second restore over it is refused: a restore never writes over a store in use.
    await expect(backupScript(['restore', file], restore_env)).rejects.toThrow(kind === 'postgres' ? /empty database/ : /exists/);
    const restored = await startTestGateway(kind, { env, database, ...(data_dir !== undefined ? { data_dir } : {}) });
    cleanups.push(() => restored.close());

    // Every sale acknowledged before the backup began is there, as the merchant was answered.
    for (const sale of before) {
      const status = await postSigned(
        restored.url,
        '/api/transaction-status',
        {
          merchant_id: merchant.merchant_id,
          application_key: merchant.application_key,
          trace_id: sale.trace_id,
          timestamp: Math.floor(Date.now() / 1000),
          version: '1.2',
        },
        merchant.secret,
      );
      expect(status.body, `sale ${sale.trace_id}`).toMatchObject({
        status: 0,
        trace_id: sale.trace_id,
        order_id: sale.order_id,
        transaction_status: 'approved',
        amount: sale.amount,
      });
    }
    // Whatever the backup holds is whole: an approved sale with its history; none half-written.
    const store = restored.gateway.deps.store;
    let held = 0;
    for (const sale of acknowledged) {
      const row = await store.transactions.get(sale.trace_id);
      if (!row) continue;
      held += 1;
      const changes = (await store.transactions.listStatusChanges(sale.trace_id)).map((c) => c.to_status);
      if (row.status === 'approved') expect(changes, `sale ${sale.trace_id}`).toEqual(['pending', 'approved']);
      else expect([row.status, changes], `sale ${sale.trace_id}`).toEqual(['pending', ['pending']]);
    }
    expect(held).toBeGreaterThanOrEqual(before.length);
    expect(held).toBeLessThan(acknowledged.length);
    // The restored gateway takes sales for the same merchant, with the secret sealed before the backup.
    const next = await postSigned(restored.url, '/api/process', saleA(merchant, { amount: 4321 }), merchant.secret);
    expect(next.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });
});
