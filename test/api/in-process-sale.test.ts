// A sale through a connector that decides in this process (the sandbox) is written as one unit
// (operations/sale.ts, issue 29): on a store that commits in groups (SQLite) one database
// transaction, reservation, decision and finish in one commit unit instead of three; on PostgreSQL
// one statement that writes the row once, in its final status (store/sql/held-writes.ts). What it
// must not change: the answer, the stored row and its status history, replays of it, twins sent at
// once (one sale, never two), and the sales the unit cannot hold, which go the usual way.
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqlCardStore } from '../../src/store/sql/cards.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { postSigned } from '../support/client.js';
import { orderId, saleA } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { countTransactionUpdates } from '../support/transaction-updates.js';

describe.each(storeKinds())('an in-process (sandbox) sale on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The request log writes in batches of its own, and the background pollers commit their claims:
    // the log off and the pollers slowed to once a minute here, so that the commit units counted
    // are the sales'. (Polling every 50 ms, two claims once landed inside one replay on CI.)
    gw = await startTestGateway(kind, {
      env: { PAYGATE_REQUEST_LOG_DAYS: '0', PAYGATE_DUE_WORK_POLL_MS: '60000', PAYGATE_BILLING_POLL_MS: '60000' },
    });
    await gw.gateway.notifications.stop();
  });
  const closers: (() => void)[] = [];
  afterAll(async () => {
    for (const close of closers) close();
    await gw?.close();
  });

  const sale = (body: Record<string, unknown>) => postSigned(gw.url, '/api/process', body, gw.merchant.secret);

  it('writes the reservation, the decision and the finish together, and answers as before, on both stores', async () => {
    const store = gw.gateway.deps.store as SqlStore;
    expect(store.groups_commits).toBe(kind === 'sqlite');
    const SALES = 20;
    const updates = kind === 'sqlite' ? countTransactionUpdates(path.join(gw.data_dir, 'paygate.sqlite')) : null;
    if (updates) closers.push(() => updates.close());
    const before = store.groupCommitStats();
    const answers = [];
    for (let i = 0; i < SALES; i++) answers.push(await sale(saleA(gw.merchant, { order_id: orderId(), pin: `in-process-${i % 3}` })));
    const after = store.groupCommitStats();
    for (const answer of answers) {
      expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', payment_processor: 'sandbox' });
      const trace_id = answer.body.trace_id as number;
      const row = await store.transactions.get(trace_id);
      expect(row).toMatchObject({ status: 'approved', card_token: answer.body.card_token });
      expect(JSON.parse(row!.answer_json!)).toMatchObject({ trace_id, transaction_status: 'approved' });
      expect((await store.transactions.listStatusChanges(trace_id)).map((c) => [c.from_status, c.to_status])).toEqual([
        ['', 'pending'],
        ['pending', 'approved'],
      ]);
      expect((await store.notifications.listOfTransaction(trace_id)).map((n) => n.state)).toEqual(['pending']);
    }
    if (kind === 'sqlite') {
      // Three units a sale before (reserve, card vault, final change); one now, plus whatever the
      // background pollers committed meanwhile.
      expect(after!.units - before!.units).toBeGreaterThanOrEqual(SALES);
      expect(after!.units - before!.units).toBeLessThan(SALES * 2);
      // Each row inserted in its final status and never updated (a trigger of the test's counts updates).
      for (const answer of answers) expect(updates!.of(answer.body.trace_id as number)).toBe(0);
      expect(updates!.all()).toBe(0);
    } else {
      expect(before).toBeNull();
      // One PostgreSQL transaction wrote each sale's row, both its status changes and its
      // notification (the same xmin), and nothing updated the row after (an UPDATE gives the row
      // the updating transaction's xmin, which the reservation's status change would not share).
      const writers = await writersOf(answers.map((answer) => answer.body.trace_id as number));
      expect(writers).toHaveLength(SALES);
      for (const writer of writers) expect(new Set([writer.row, ...writer.changes, ...writer.notifications]).size).toBe(1);
    }
  });

  /** Per transaction, the PostgreSQL transaction ids that wrote its row, its status changes and its notifications. */
  async function writersOf(trace_ids: number[]): Promise<{ row: string; changes: string[]; notifications: string[] }[]> {
    const client = new pg.Client({ connectionString: gw.database_url! });
    await client.connect();
    try {
      const result = await client.query<{ row: string; changes: string[]; notifications: string[] }>(
        `select t.xmin::text as row,
                array(select c.xmin::text from status_changes c where c.trace_id = t.trace_id order by c.id) as changes,
                array(select n.xmin::text from notifications n where n.trace_id = t.trace_id order by n.id) as notifications
           from transactions t where t.trace_id = any($1::bigint[])`,
        [trace_ids],
      );
      return result.rows;
    } finally {
      await client.end();
    }
  }

  it('a card seen before is answered from what the store saw committed: no vault statement, the same token', async () => {
    const store = gw.gateway.deps.store;
    const pin = `known-card-${orderId()}`;
    const first = await sale(saleA(gw.merchant, { order_id: orderId(), pin }));
    expect(first.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const token = first.body.card_token as string;
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    // Every vault look-up goes through SqlCardStore.tokenFor, in a transaction or not, or on SQLite
    // through find, whose card if new is held and written with the sale (store/sql/held-writes.ts).
    const vault = vi.spyOn(SqlCardStore.prototype, kind === 'sqlite' ? 'find' : 'tokenFor');
    try {
      const again = [];
      for (let i = 0; i < 3; i++) again.push(await sale(saleA(gw.merchant, { order_id: orderId(), pin })));
      expect(vault).not.toHaveBeenCalled();
      for (const answer of again) {
        expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved', card_token: token });
        expect(await store.transactions.get(answer.body.trace_id as number)).toMatchObject({ status: 'approved', card_token: token });
      }
      // Another customer's card is new: the vault is asked, and a new token stored.
      const other = await sale(saleA(gw.merchant, { order_id: orderId(), pin: `${pin}-other` }));
      expect(vault).toHaveBeenCalledTimes(1);
      expect(other.body.card_token).not.toBe(token);
      expect(await store.cards.get(gw.merchant.merchant_id, other.body.card_token as string)).toMatchObject({ pin: `${pin}-other` });
    } finally {
      vault.mockRestore();
    }
  });

  it('a sale the unit cannot hold (a 3-D Secure challenge, with its due time-out) goes the usual way, as before', async () => {
    const answer = await sale(saleA(gw.merchant, { order_id: orderId(), cvv: '333' }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending_async' });
    const trace_id = answer.body.trace_id as number;
    const store = gw.gateway.deps.store;
    expect(await store.transactions.get(trace_id)).toMatchObject({ status: 'pending_async', challenge_mode: 'interactive' });
    expect((await store.transactions.listStatusChanges(trace_id)).map((c) => [c.from_status, c.to_status])).toEqual([
      ['', 'pending'],
      ['pending', 'pending_async'],
    ]);
    if (kind === 'postgres') {
      // The usual way: reserved by one PostgreSQL transaction, changed by another.
      const [writer] = await writersOf([trace_id]);
      expect(writer!.changes).toHaveLength(2);
      expect(writer!.changes[0]).not.toBe(writer!.changes[1]);
      expect(writer!.row).toBe(writer!.changes[1]);
    }
  });

  it('a replay answers the stored answer without a transaction of its own, and a changed body is a duplicate', async () => {
    const body = saleA(gw.merchant, { order_id: orderId() });
    const first = await sale(body);
    const store = gw.gateway.deps.store as SqlStore;
    const before = store.groupCommitStats();
    const again = await sale(body);
    expect(again.body).toEqual({ ...first.body, timestamp: again.body.timestamp, signature: again.body.signature });
    if (kind === 'sqlite') expect(store.groupCommitStats()!.units - before!.units).toBeLessThan(2);
    const changed = await sale({ ...body, amount: 2999 });
    expect(changed.body.status).toBe(12); // duplicate order (docs/errors.md)
    // Neither wrote anything: the one row, its two status changes and its one notification.
    const trace_id = first.body.trace_id as number;
    expect((await store.transactions.listStatusChanges(trace_id)).map((c) => c.to_status)).toEqual(['pending', 'approved']);
    expect(await store.notifications.listOfTransaction(trace_id)).toHaveLength(1);
    expect(await store.transactions.findByKey(gw.merchant.merchant_id, 'sale', body.order_id as string)).toMatchObject({
      trace_id,
      amount_minor: 1999,
    });
  });

  it('twins sent at once make one sale: every answer is that sale or says it is still in progress', async () => {
    const body = saleA(gw.merchant, { order_id: orderId() });
    const answers = await Promise.all(Array.from({ length: 8 }, () => sale(body)));
    const trace_ids = new Set(answers.filter((a) => a.body.status === 0).map((a) => a.body.trace_id));
    expect(trace_ids.size).toBe(1);
    for (const answer of answers) {
      if (answer.body.status === 0) expect(answer.body.transaction_status).toBe('approved');
      else expect(answer.body.error_details ?? answer.body.description).toBeDefined();
    }
    const [trace_id] = [...trace_ids];
    const row = await gw.gateway.deps.store.transactions.get(trace_id as number);
    expect(row).toMatchObject({ status: 'approved', order_id: body.order_id });
  });
});
