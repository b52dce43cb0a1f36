// Subscription billing driven by the sandbox clock (POST /sandbox/clock): a year of monthly
// renewals charged by the gateway's own billing worker, with a failure made by the sandbox
// (the card expires) and its recovery (the merchant activates the subscription with the
// customer's new card); 3-monthly, 6-monthly and yearly plans on their calendar dates; trials,
// expiration_cycles, retries running out, activation, late charges, cancellation, a restart, a
// crash between charge and bookkeeping, and two gateway processes on one PostgreSQL renewing 500
// subscriptions with no charge missed or doubled.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMonthsAnchored, chargeDueAt, DAY_MS, retryDueAt } from '../../src/domain/billing-calendar.js';
import { Sealer } from '../../src/crypto/sealer.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { MerchantDirectory } from '../../src/operations/merchant-directory.js';
import { renewalOrderId, renewSubscription } from '../../src/operations/subscription-renewal.js';
import type { ProcessorResult } from '../../src/connectors/connector.js';
import { starterGateway } from '../../src/connectors/registry.js';
import type { SubscriptionRow, TransactionRow } from '../../src/store/schema.js';
import { openPostgresStore } from '../../src/store/open.js';
import { runBillingOnce } from '../../src/workers/subscription-billing.js';
import { postJson, postSigned } from '../support/client.js';
import { refundC, VISA } from '../support/bodies.js';
import { ADMIN_TOKEN, startTestGateway, TEST_MASTER_KEY, type TestGateway } from '../support/gateway.js';
import { startMerchantReceiver, type MerchantReceiver } from '../support/merchant-receiver.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { storeKinds } from '../support/stores.js';
import { createPlanVia, sha384, stamp, subscribeVia, tokenize, useClock, v13 } from '../support/v13.js';
import { freePort } from '../support/child-gateway.js';
import { signBody } from '../../src/domain/signing.js';
import { CLI_ENTRY } from '../support/build.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Moves the gateway clock to just past `target_ms` through POST /sandbox/clock. */
async function advanceTo(gw: TestGateway, target_ms: number): Promise<void> {
  const seconds = Math.max(0, Math.ceil((target_ms - gw.gateway.clock.now_ms()) / 1000) + 1);
  const answer = await postJson(gw.url, '/sandbox/clock', { advance_seconds: seconds }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  expect(answer.http_status).toBe(200);
}

async function advanceDays(gw: TestGateway, days: number): Promise<void> {
  await advanceTo(gw, gw.gateway.clock.now_ms() + days * DAY_MS);
}

/** Runs billing passes until nothing is due (the background worker may take part; the result is the same). */
async function drain(gw: TestGateway): Promise<void> {
  const deps = gw.gateway.deps;
  for (let i = 0; i < 500; i += 1) {
    const pass = await runBillingOnce({ deps, poll_ms: 0, lease_ms: 300_000, owner: 'test-driver' });
    const due = await deps.store.subscriptions.countDue(deps.clock.now_ms());
    if (pass.claimed === 0 && due === 0) return;
    if (pass.claimed === 0) await sleep(20);
  }
  throw new Error('billing did not drain');
}

async function subscription(gw: TestGateway, created: Record<string, unknown>): Promise<SubscriptionRow> {
  const row = await gw.gateway.deps.store.subscriptions.get(gw.merchant.merchant_id, String(created.subscription_id));
  if (!row) throw new Error('subscription not found');
  return row;
}

/** Every sale of a subscription, found by the renewal order_ids (cycle 1.., attempt 0..). */
async function salesOf(
  gw: TestGateway,
  subscription_id: string,
  max_cycle = 14,
  max_attempt = 4,
): Promise<{ cycle: number; attempt: number; row: TransactionRow }[]> {
  const found: { cycle: number; attempt: number; row: TransactionRow }[] = [];
  for (let cycle = 1; cycle <= max_cycle; cycle += 1) {
    for (let attempt = 0; attempt <= max_attempt; attempt += 1) {
      const row = await gw.gateway.deps.store.transactions.findByKey(
        gw.merchant.merchant_id,
        'sale',
        renewalOrderId(subscription_id, cycle, attempt),
      );
      if (row) found.push({ cycle, attempt, row });
    }
  }
  return found;
}

/**
 * Counts the merchant-initiated charges that reach the sandbox connector of the test merchant's
 * gateway (a spy: it changes no outcome). The registry builds one connector per gateway and keeps
 * it, so the charges of that gateway go through this instance.
 */
async function countMitCharges(gw: TestGateway): Promise<{ calls: () => number }> {
  const deps = gw.gateway.deps;
  const gateway = (await deps.merchants.findFresh(gw.merchant.merchant_id))!.gateways.find((g) => g.gateway_id === gw.merchant.gateway)!;
  const processor = deps.connectors.forGateway(gateway)!;
  const original = processor.sale.bind(processor);
  let calls = 0;
  processor.sale = async (request): Promise<ProcessorResult> => {
    if (request.initiated_by === 'merchant') calls += 1;
    return original(request);
  };
  return { calls: () => calls };
}

/** Polls (20 ms) until `done` holds for what `probe` reads; fails naming `what` after `timeout_ms`. */
async function waitUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string, timeout_ms = 20_000): Promise<T> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await sleep(20);
  }
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const expiryOf = (ms: number) => `${String(new Date(ms).getUTCMonth() + 1).padStart(2, '0')}/${new Date(ms).getUTCFullYear()}`;
const isLeap = (year: number) => new Date(Date.UTC(year, 1, 29)).getUTCMonth() === 1;

/** The merchant acknowledges every notification (status 0, body-signed; accepted for both kinds). */
function acknowledge(gw: TestGateway) {
  return () => {
    const reply = { status: 0, description: 'OK', version: '1.2', timestamp: stamp() };
    return { status: 200, body: { ...reply, signature: signBody(reply, gw.merchant.secret) } };
  };
}

describe.each(storeKinds())("billing by the gateway's own worker, driven only by POST /sandbox/clock, on %s", (kind) => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;

  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    // The billing worker polls every 50 ms: nothing in these tests charges but the gateway itself.
    gw = await startTestGateway(kind, { env: { PAYGATE_BILLING_POLL_MS: '50' } });
    useClock(() => Math.floor(gw.gateway.clock.now_ms() / 1000));
  });
  afterAll(async () => {
    useClock(null);
    await gw?.close();
    await receiver?.close();
  });

  const row = (subscription_id: string) => subscription(gw, { subscription_id });
  const read = async (subscription_id: string) => (await v13(gw.url, 'GET', `/api/v1.3/subscription/${subscription_id}`, gw.merchant)).body;
  /** Waits until the worker has charged (or tried) all that is due for these subscriptions. */
  const settled = (ids: readonly string[], what: string) =>
    waitUntil(
      async () => Promise.all(ids.map((id) => row(id))),
      (rows) => rows.every((r) => r.next_charge_at_ms === null || r.next_charge_at_ms > gw.gateway.clock.now_ms()),
      what,
    );

  it(
    'renews monthly for a year: 12 stored, notified, refundable sales; the card expires in month 6, the retries fail, ' +
      'the merchant activates it with the new card and the renewals go on',
    async () => {
      receiver.setReply('/year', acknowledge(gw));
      // Not within two minutes of midnight UTC, so the card's last month is the one computed here.
      if (gw.gateway.clock.now_ms() % DAY_MS > DAY_MS - 120_000) await advanceTo(gw, gw.gateway.clock.now_ms() + 180_000);
      // The customer's card is valid through the month of the fifth charge: the sandbox rejects the sixth ([TEST] Card expired).
      const old_exp = expiryOf(chargeDueAt(gw.gateway.clock.now_ms(), 4, 'monthly'));
      const old_card = await tokenize(gw.url, gw.merchant, 'cust-42', VISA, old_exp);
      const plan = await createPlanVia(gw.url, gw.merchant, { retries_number: 2, retries_delay_days: 2 });
      const created = await subscribeVia(gw.url, gw.merchant, plan, old_card, { notification_url: `${receiver.url}/year` });
      const id = String(created.subscription_id);
      const anchor = (await row(id)).anchor_at_ms;
      const charged = (cycles: number) =>
        waitUntil(
          () => row(id),
          (r) => r.cycles_charged === cycles,
          `charge ${cycles}`,
        );
      await charged(1);

      for (let cycle = 2; cycle <= 5; cycle += 1) {
        const due = chargeDueAt(anchor, cycle - 1, 'monthly');
        expect((await read(id)).next_charge_at, `cycle ${cycle} is due on the anchor day`).toBe(Math.floor(due / 1000));
        await advanceTo(gw, due);
        await charged(cycle);
      }

      // Month 6: the card has expired. Two retries two days apart fail the same way; then it is inactive.
      const due6 = chargeDueAt(anchor, 5, 'monthly');
      expect((await row(id)).next_charge_at_ms).toBe(due6);
      await advanceTo(gw, due6);
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        const failed = await waitUntil(
          () => row(id),
          (r) => r.attempt === attempt,
          `failed attempt ${attempt}`,
        );
        expect(failed).toMatchObject({ status: 'active', cycles_charged: 5, last_error: '[TEST] Card expired' });
        const sale = (await salesOf(gw, id, 6, 2)).find((s) => s.cycle === 6 && s.attempt === attempt - 1)!.row;
        // Retried retries_delay_days after the failure was booked (moments after the sale was made).
        expect(failed.next_charge_at_ms! - retryDueAt(sale.created_at_ms, 2)).toBeGreaterThanOrEqual(0);
        expect(failed.next_charge_at_ms! - retryDueAt(sale.created_at_ms, 2)).toBeLessThan(60_000);
        await advanceTo(gw, failed.next_charge_at_ms!);
      }
      await waitUntil(
        () => row(id),
        (r) => r.status === 'inactive',
        'deactivation after the last retry',
      );
      expect(await read(id)).toMatchObject({ status: 0, subscription_status: 'inactive', next_charge_at: null, cycles_charged: 5 });
      // Inactive: nothing is charged, however long.
      await advanceDays(gw, 10);
      await sleep(300);
      expect((await salesOf(gw, id, 8, 5)).length).toBe(5 + 3);

      // The customer gives the renewed card; the merchant activates the subscription with it.
      const new_card = await tokenize(gw.url, gw.merchant, 'cust-42', VISA, '12/2049');
      expect(new_card).not.toBe(old_card);
      const activated = await v13(gw.url, 'POST', `/api/v1.3/subscription/${id}/activate`, gw.merchant, { card_token: new_card });
      expect(activated.body).toMatchObject({
        status: 0,
        description: 'Subscription activated',
        subscription_status: 'active',
        cycles_charged: 5,
      });
      const restart = (await row(id)).anchor_at_ms;
      expect(activated.body.next_charge_at).toBe(Math.floor(restart / 1000));
      expect(restart).toBeLessThanOrEqual(gw.gateway.clock.now_ms());
      await charged(6);

      for (let cycle = 7; cycle <= 12; cycle += 1) {
        const due = chargeDueAt(restart, cycle - 6, 'monthly');
        expect((await row(id)).next_charge_at_ms, `cycle ${cycle} is due on the new anchor's day`).toBe(due);
        await advanceTo(gw, due);
        await charged(cycle);
      }

      const final = await row(id);
      expect(final).toMatchObject({ status: 'active', cycles_charged: 12, attempt: 0, card_token: new_card });
      expect(final.next_charge_at_ms).toBe(chargeDueAt(restart, 7, 'monthly'));
      const sales = await salesOf(gw, id, 14, 5);
      const approved = sales.filter((s) => s.row.status === 'approved');
      expect(approved.map((s) => [s.cycle, s.attempt])).toEqual([
        [1, 0],
        [2, 0],
        [3, 0],
        [4, 0],
        [5, 0],
        [6, 3],
        [7, 0],
        [8, 0],
        [9, 0],
        [10, 0],
        [11, 0],
        [12, 0],
      ]);
      // The failed attempts are the sandbox's own answer to the expired card, stored like any rejected sale.
      const rejected = sales.filter((s) => s.row.status !== 'approved');
      expect(rejected.map((s) => [s.cycle, s.attempt, s.row.status, s.row.error_details, s.row.card_exp])).toEqual([
        [6, 0, 'rejected', '[TEST] Card expired', old_exp],
        [6, 1, 'rejected', '[TEST] Card expired', old_exp],
        [6, 2, 'rejected', '[TEST] Card expired', old_exp],
      ]);
      for (const { row: sale, cycle, attempt } of approved) {
        expect(sale).toMatchObject({
          transaction_type: 'sale',
          amount_minor: 1999,
          currency: 'USD',
          identity_kind: 'application_key',
          identity_value: gw.merchant.application_key,
          card_masked: '411111******1111',
          card_token: cycle <= 5 ? old_card : new_card,
          card_exp: cycle <= 5 ? old_exp : '12/2049',
          notification_url: `${receiver.url}/year`,
          payment_processor: 'sandbox',
        });
        // Charged by the worker on its due date (the anchor's series, then the new anchor's), not before it and not drifting.
        const due = cycle <= 5 ? chargeDueAt(anchor, cycle - 1, 'monthly') : chargeDueAt(restart, cycle - 6, 'monthly');
        expect(sale.created_at_ms, `cycle ${cycle} attempt ${attempt}`).toBeGreaterThanOrEqual(due);
        expect(sale.created_at_ms - due, `cycle ${cycle} attempt ${attempt}`).toBeLessThan(60_000);
        // Stored with its notification.
        const notifications = await gw.gateway.deps.store.notifications.listOfTransaction(sale.trace_id);
        expect(notifications).toHaveLength(1);
        expect(JSON.parse(notifications[0]!.payload_json)).toMatchObject({
          transaction_type: 'sale',
          transaction_status: 'approved',
          trace_id: sale.trace_id,
        });
      }
      // Every sale, rejected ones included, delivered to the subscription's notification_url like any other notification.
      const delivered = () =>
        new Set(
          receiver
            .requestsTo('/year')
            .map((r) => (r.json as { trace_id?: number }).trace_id)
            .filter((t) => t !== undefined),
        );
      await waitUntil(
        async () => sales.filter(({ row: sale }) => !delivered().has(sale.trace_id)).length,
        (n) => n === 0,
        'sale notifications',
      );

      // Refundable like any sale (spec §4.1 variant C).
      const march = approved.find((s) => s.cycle === 3)!.row;
      const refund = await postSigned(
        gw.url,
        '/api/process',
        refundC(gw.merchant, march.trace_id, {
          amount: 1999,
          currency: 'USD',
          card_number: VISA,
          card_exp: old_exp,
          timestamp: stamp(),
        }),
        gw.merchant.secret,
      );
      expect(refund.body).toMatchObject({ status: 0, transaction_status: 'approved' });

      const changes = await gw.gateway.deps.store.subscriptions.listChanges(id);
      const renewed = (n: number) => Array.from({ length: n }, () => 'subscription.renewed');
      const expected_events = [
        'subscription.created',
        ...renewed(5),
        'subscription.payment_failed',
        'subscription.payment_failed',
        'subscription.deactivated',
        'subscription.activated',
        ...renewed(7),
      ];
      expect(changes.map((c) => c.event)).toEqual(expected_events);
      expect(changes.find((c) => c.event === 'subscription.activated')).toMatchObject({ from_status: 'inactive', to_status: 'active' });
      // One subscription event per change, delivered in order to the same notification_url (notifications.md §5).
      const events = (await gw.gateway.deps.store.notifications.listOfSubscription(id)).map(
        (n) => JSON.parse(n.payload_json) as { event: string; cycle?: number },
      );
      expect(events.map((e) => e.event)).toEqual(expected_events);
      await waitUntil(
        async () => (await gw.gateway.deps.store.notifications.listOfSubscription(id)).filter((n) => n.state !== 'delivered').length,
        (n) => n === 0,
        'subscription events delivered',
      );
      const received = receiver
        .requestsTo('/year')
        .map((r) => r.json as { event?: string; subscription_id?: string })
        .filter((j) => j.event && j.subscription_id === id);
      expect(received.map((j) => j.event)).toEqual(expected_events);

      expect((await v13(gw.url, 'POST', `/api/v1.3/subscription/${id}/cancel`, gw.merchant)).body).toMatchObject({
        status: 0,
        subscription_status: 'canceled',
      });
    },
    120_000,
  );

  it('charges every_3_months, every_6_months and yearly plans on their calendar dates from month-end anchors (Jan 31, Feb 29)', async () => {
    // The next January 31, 10:00 UTC, of a year followed by a leap year (the clock only moves forward).
    let year = new Date(gw.gateway.clock.now_ms()).getUTCFullYear();
    while (Date.UTC(year, 0, 31, 10) <= gw.gateway.clock.now_ms() || !isLeap(year + 1)) year += 1;
    await advanceTo(gw, Date.UTC(year, 0, 31, 10));
    const card = await tokenize(gw.url, gw.merchant, 'cust-42', VISA, `12/${year + 10}`);
    const subscribe = async (billing_cycle: string) => {
      const plan = await createPlanVia(gw.url, gw.merchant, { billing_cycle, name: billing_cycle });
      return String((await subscribeVia(gw.url, gw.merchant, plan, card, { cid: `cal-${billing_cycle}` })).subscription_id);
    };
    const quarterly = await subscribe('every_3_months');
    const half_yearly = await subscribe('every_6_months');
    const yearly = await subscribe('yearly');
    const all = [quarterly, half_yearly, yearly];

    /** Moves the clock from due date to due date, letting the worker charge each, until `until_ms`. */
    const walk = async (ids: string[], until_ms: number) => {
      await settled(ids, 'first charges');
      for (;;) {
        const next = Math.min(...(await Promise.all(ids.map(async (id) => (await row(id)).next_charge_at_ms ?? Infinity))));
        if (next > until_ms) return;
        await advanceTo(gw, next);
        await settled(ids, `charges due at ${new Date(next).toISOString()}`);
      }
    };
    await walk(all, Date.UTC(year + 1, 0, 31, 11));
    for (const id of all) await v13(gw.url, 'POST', `/api/v1.3/subscription/${id}/cancel`, gw.merchant);

    // A yearly plan anchored on February 29 of the leap year: February 28 in the years between.
    await advanceTo(gw, Date.UTC(year + 1, 1, 29, 10));
    const leap = await subscribe('yearly');
    await walk([leap], Date.UTC(year + 5, 1, 29, 11));

    const dates = async (id: string) => {
      const { anchor_at_ms, billing_cycle } = await row(id);
      const sales = await salesOf(gw, id, 8, 0);
      sales.forEach(({ row: sale, cycle }, i) => {
        expect(sale.status).toBe('approved');
        expect(cycle).toBe(i + 1);
        // On its date, at the anchor's time of day, charged within a minute by the worker.
        const due = chargeDueAt(anchor_at_ms, i, billing_cycle as 'monthly');
        expect(sale.created_at_ms).toBeGreaterThanOrEqual(due);
        expect(sale.created_at_ms - due).toBeLessThan(60_000);
      });
      return sales.map(({ row: sale }) => isoDay(sale.created_at_ms));
    };
    const [y, n] = [year, year + 1];
    expect(await dates(quarterly)).toEqual([`${y}-01-31`, `${y}-04-30`, `${y}-07-31`, `${y}-10-31`, `${n}-01-31`]);
    expect(await dates(half_yearly)).toEqual([`${y}-01-31`, `${y}-07-31`, `${n}-01-31`]);
    expect(await dates(yearly)).toEqual([`${y}-01-31`, `${n}-01-31`]);
    expect(await dates(leap)).toEqual([`${n}-02-29`, `${n + 1}-02-28`, `${n + 2}-02-28`, `${n + 3}-02-28`, `${n + 4}-02-29`]);
    // Each charge as the API shows it: cycles counted, the next date on the anchor's series.
    const leap_row = await row(leap);
    expect(isoDay(leap_row.next_charge_at_ms!)).toBe(`${n + 5}-02-28`);
    expect(await read(leap)).toMatchObject({
      status: 0,
      cycles_charged: 5,
      next_charge_at: Math.floor(chargeDueAt(leap_row.anchor_at_ms, 5, 'yearly') / 1000),
    });
  }, 120_000);
});

describe.each(storeKinds())('subscription billing on %s', (kind) => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  let card_token: string;

  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway(kind, { env: { PAYGATE_BILLING_POLL_MS: '60000' } });
    // Requests are stamped with the gateway's clock, which these tests move forward.
    useClock(() => Math.floor(gw.gateway.clock.now_ms() / 1000));
    card_token = await tokenize(gw.url, gw.merchant);
  });
  afterAll(async () => {
    useClock(null);
    await gw?.close();
    await receiver?.close();
  });

  it('sends each subscription event to notification_url with the Gt-Authentication header, resent like other notifications', async () => {
    const secret = gw.merchant.secret;
    let refuse_first = true;
    receiver.setReply('/events', (request) => {
      const timestamp = stamp();
      // The first delivery is answered -1 (merchant error): it must be resent, byte-identical.
      const status = refuse_first ? -1 : 0;
      refuse_first = false;
      void request;
      return {
        status: 200,
        body: { status, description: status === 0 ? 'OK' : 'try later', version: '1.3', timestamp },
        headers: { 'gt-authentication': sha384(`${status}${timestamp}${secret}`) },
      };
    });
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { notification_url: `${receiver.url}/events` });
    const subscription_id = String(created.subscription_id);
    const eventsFor = (event: string) =>
      receiver
        .requestsTo('/events')
        .filter(
          (r) =>
            (r.json as { event?: string; subscription_id?: string }).event === event &&
            (r.json as { subscription_id?: string }).subscription_id === subscription_id,
        );
    const waitEvent = async (event: string, count = 1) => {
      for (let i = 0; i < 200 && eventsFor(event).length < count; i += 1) await sleep(25);
      expect(eventsFor(event).length, event).toBeGreaterThanOrEqual(count);
      return eventsFor(event);
    };
    const [first] = await waitEvent('subscription.created');
    // Resent after the schedule's 300 s (gateway clock), identical.
    await advanceTo(gw, gw.gateway.clock.now_ms() + 300_000);
    const [, again] = await waitEvent('subscription.created', 2);
    expect(again!.body).toBe(first!.body);
    expect(again!.headers['gt-authentication']).toBe(first!.headers['gt-authentication']);

    const body = first!.json as Record<string, unknown>;
    expect(body).toMatchObject({
      event: 'subscription.created',
      merchant_id: gw.merchant.merchant_id,
      application_key: gw.merchant.application_key,
      subscription_id,
      plan_id: plan.plan_id,
      cid: 'cust-42',
      subscription_status: 'active',
      price: created.price,
      cycles_charged: 0,
      version: '1.3',
    });
    expect(body.signature).toBeUndefined();
    expect(first!.headers['gt-authentication']).toBe(
      sha384(
        `subscription.created${gw.merchant.merchant_id}${gw.merchant.application_key}cust-42` +
          `${String(plan.plan_id)}${subscription_id}active${String(body.timestamp)}${secret}`,
      ),
    );

    await drain(gw);
    const [renewed] = await waitEvent('subscription.renewed');
    const sale = (await salesOf(gw, subscription_id, 1))[0]!.row;
    expect(renewed!.json).toMatchObject({
      event: 'subscription.renewed',
      subscription_status: 'active',
      cycle: 1,
      trace_id: sale.trace_id,
      cycles_charged: 1,
    });
    await v13(gw.url, 'POST', `/api/v1.3/subscription/${subscription_id}/cancel`, gw.merchant);
    const [canceled] = await waitEvent('subscription.canceled');
    expect(canceled!.json).toMatchObject({ subscription_status: 'canceled', next_charge_at: null });
    expect(canceled!.headers['gt-authentication']).toBe(
      sha384(
        `subscription.canceled${gw.merchant.merchant_id}${gw.merchant.application_key}cust-42` +
          `${String(plan.plan_id)}${subscription_id}canceled${String((canceled!.json as { timestamp: number }).timestamp)}${secret}`,
      ),
    );

    const outbox = await gw.gateway.deps.store.notifications.listOfSubscription(subscription_id);
    expect(outbox.map((n) => [n.kind, JSON.parse(n.payload_json).event, n.trace_id])).toEqual([
      ['subscription_event', 'subscription.created', null],
      ['subscription_event', 'subscription.renewed', null],
      ['subscription_event', 'subscription.canceled', null],
    ]);
    for (
      let i = 0;
      i < 100 && (await gw.gateway.deps.store.notifications.listOfSubscription(subscription_id)).some((n) => n.state !== 'delivered');
      i += 1
    )
      await sleep(25);
    expect((await gw.gateway.deps.store.notifications.listOfSubscription(subscription_id)).map((n) => n.state)).toEqual([
      'delivered',
      'delivered',
      'delivered',
    ]);
  });

  it('accepts a body-signed event reply, and resends an unsigned one', async () => {
    receiver.setReply('/events-body', (request) => {
      const json = request.json as { event: string };
      const reply: Record<string, unknown> = { status: 0, description: 'OK', version: '1.3', timestamp: stamp() };
      return {
        status: 200,
        body: json.event === 'subscription.created' ? { ...reply, signature: signBody(reply, gw.merchant.secret) } : reply,
      };
    });
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, {
      notification_url: `${receiver.url}/events-body`,
      activate: false,
    });
    await v13(gw.url, 'POST', `/api/v1.3/subscription/${String(created.subscription_id)}/cancel`, gw.merchant);
    const states = async () =>
      (await gw.gateway.deps.store.notifications.listOfSubscription(String(created.subscription_id))).map((n) => [n.state, n.attempts > 0]);
    for (
      let i = 0;
      i < 200 &&
      JSON.stringify(await states()) !==
        JSON.stringify([
          ['delivered', true],
          ['pending', true],
        ]);
      i += 1
    )
      await sleep(25);
    expect(await states()).toEqual([
      ['delivered', true],
      ['pending', true],
    ]);
  });

  it('charges nothing during a trial in days, then charges and keeps the cycle from the trial end', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, { trial_period: 14, trial_period_cycle: 'days' });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    const row = await subscription(gw, created);
    expect(row.anchor_at_ms).toBe(row.created_at_ms + 14 * DAY_MS);
    await drain(gw);
    await advanceDays(gw, 13);
    await drain(gw);
    expect(await salesOf(gw, row.subscription_id, 2)).toHaveLength(0);
    await advanceTo(gw, row.anchor_at_ms);
    await drain(gw);
    expect((await salesOf(gw, row.subscription_id, 2)).map((s) => [s.cycle, s.row.status])).toEqual([[1, 'approved']]);
    expect((await subscription(gw, created)).next_charge_at_ms).toBe(addMonthsAnchored(row.anchor_at_ms, 1));
  });

  it('a trial in months ends on the same day of a later month', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, { trial_period: 1, trial_period_cycle: 'months', billing_cycle: 'weekly' });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    const row = await subscription(gw, created);
    expect(row.anchor_at_ms).toBe(addMonthsAnchored(row.created_at_ms, 1));
    await advanceTo(gw, row.anchor_at_ms);
    await drain(gw);
    const charged = await subscription(gw, created);
    expect(charged.cycles_charged).toBe(1);
    expect(charged.next_charge_at_ms).toBe(row.anchor_at_ms + 7 * DAY_MS);
  });

  it('expires after expiration_cycles charges once the last period ends, and charges no more', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, { expiration_cycles: 3 });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    await drain(gw);
    for (let i = 0; i < 2; i += 1) {
      await advanceTo(gw, (await subscription(gw, created)).next_charge_at_ms!);
      await drain(gw);
    }
    const third = await subscription(gw, created);
    expect(third).toMatchObject({ status: 'active', cycles_charged: 3 });
    await advanceTo(gw, third.next_charge_at_ms!);
    await drain(gw);
    const expired = await subscription(gw, created);
    expect(expired).toMatchObject({ status: 'expired', cycles_charged: 3, next_charge_at_ms: null });
    await advanceDays(gw, 70);
    await drain(gw);
    expect((await salesOf(gw, expired.subscription_id, 6)).map((s) => s.cycle)).toEqual([1, 2, 3]);
    const cancel = await v13(gw.url, 'POST', `/api/v1.3/subscription/${expired.subscription_id}/cancel`, gw.merchant);
    expect(cancel.body).toMatchObject({ status: 35, subscription_status: 'expired' });
    // Expired is final: it cannot be activated again.
    const activate = await v13(gw.url, 'POST', `/api/v1.3/subscription/${expired.subscription_id}/activate`, gw.merchant);
    expect(activate.body).toMatchObject({
      status: 35,
      description: 'Subscription has ended (expired); it cannot be activated',
      subscription_status: 'expired',
    });
    expect(await subscription(gw, created)).toMatchObject({ status: 'expired', next_charge_at_ms: null, version: expired.version });
  });

  it('retries a failing charge retries_number times every retries_delay_days, then makes it inactive (sandbox MIT amount 1402)', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, {
      prices: [{ amount: 1402, currency: 'USD' }],
      retries_number: 2,
      retries_delay_days: 3,
    });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    await drain(gw);
    const first = await subscription(gw, created);
    expect(first).toMatchObject({ status: 'active', attempt: 1, cycles_charged: 0 });
    expect(first.next_charge_at_ms! - gw.gateway.clock.now_ms()).toBeGreaterThan(3 * DAY_MS - 60_000);
    await advanceDays(gw, 2);
    await drain(gw);
    expect((await subscription(gw, created)).attempt).toBe(1);
    await advanceTo(gw, first.next_charge_at_ms!);
    await drain(gw);
    await advanceTo(gw, (await subscription(gw, created)).next_charge_at_ms!);
    await drain(gw);
    const inactive = await subscription(gw, created);
    expect(inactive).toMatchObject({ status: 'inactive', next_charge_at_ms: null, cycles_charged: 0 });
    expect(inactive.last_error).toMatch(/\[TEST\] Insufficient funds/);
    await advanceDays(gw, 40);
    await drain(gw);
    const sales = await salesOf(gw, inactive.subscription_id, 2);
    expect(sales.map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([
      [1, 0, 'rejected'],
      [1, 1, 'rejected'],
      [1, 2, 'rejected'],
    ]);
    const changes = await gw.gateway.deps.store.subscriptions.listChanges(inactive.subscription_id);
    expect(changes.map((c) => c.event)).toEqual([
      'subscription.created',
      'subscription.payment_failed',
      'subscription.payment_failed',
      'subscription.deactivated',
    ]);
    const read = await v13(gw.url, 'GET', `/api/v1.3/subscription/${inactive.subscription_id}`, gw.merchant);
    expect(read.body).toMatchObject({ status: 0, subscription_status: 'inactive' });

    // Activated again (same card): charged at once, with a whole new series of tries whose
    // attempt numbers continue (a3, a4, a5), so no earlier sale's order_id is reused.
    const activated = await v13(gw.url, 'POST', `/api/v1.3/subscription/${inactive.subscription_id}/activate`, gw.merchant);
    expect(activated.body).toMatchObject({ status: 0, description: 'Subscription activated', subscription_status: 'active' });
    expect(Number(activated.body.next_charge_at)).toBeLessThanOrEqual(Math.floor(gw.gateway.clock.now_ms() / 1000));
    await drain(gw);
    const retried = await subscription(gw, created);
    expect(retried).toMatchObject({ status: 'active', attempt: 4, cycles_charged: 0 });
    for (let i = 0; i < 2; i += 1) {
      await advanceTo(gw, (await subscription(gw, created)).next_charge_at_ms!);
      await drain(gw);
    }
    expect(await subscription(gw, created)).toMatchObject({ status: 'inactive', attempt: 6, next_charge_at_ms: null });
    const all = await salesOf(gw, inactive.subscription_id, 2, 7);
    expect(all.map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([0, 1, 2, 3, 4, 5].map((attempt) => [1, attempt, 'rejected']));
    expect((await gw.gateway.deps.store.subscriptions.listChanges(inactive.subscription_id)).map((c) => c.event).slice(4)).toEqual([
      'subscription.activated',
      'subscription.payment_failed',
      'subscription.payment_failed',
      'subscription.deactivated',
    ]);
  });

  it('counts a processor error as a failed attempt too (sandbox MIT amount 1444); retries_number 0 deactivates at once', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, { prices: [{ amount: 1444, currency: 'USD' }], retries_number: 0 });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    await drain(gw);
    const row = await subscription(gw, created);
    expect(row).toMatchObject({ status: 'inactive' });
    expect((await salesOf(gw, row.subscription_id, 1)).map((s) => s.row.status)).toEqual(['error']);
  });

  it('a charge made later than its date (the gateway was stopped) is made once; the next one is on the following date, not at once', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, { billing_cycle: 'weekly' });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    await drain(gw);
    const anchor = (await subscription(gw, created)).anchor_at_ms;
    // Nobody charged for 20 days: the dates of day 7 and day 14 have passed.
    await advanceTo(gw, anchor + 20 * DAY_MS);
    await drain(gw);
    const late = await subscription(gw, created);
    expect(late).toMatchObject({ status: 'active', cycles_charged: 2 });
    expect(late.next_charge_at_ms).toBe(anchor + 21 * DAY_MS);
    expect((await salesOf(gw, late.subscription_id, 4)).map((s) => s.cycle)).toEqual([1, 2]);
    await advanceTo(gw, anchor + 21 * DAY_MS);
    await drain(gw);
    expect(await subscription(gw, created)).toMatchObject({ cycles_charged: 3, next_charge_at_ms: anchor + 28 * DAY_MS });
  });

  it('a weekly charge that fails and recovers on its retry after the week has passed (sandbox MIT amount 1403): the next charge is at the next weekly date, not straight away', async () => {
    // 1403: the sandbox declines a first merchant-initiated try and approves its retry.
    const plan = await createPlanVia(gw.url, gw.merchant, {
      prices: [{ amount: 1403, currency: 'USD' }],
      billing_cycle: 'weekly',
      retries_number: 3,
      retries_delay_days: 10,
    });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    await drain(gw);
    const failed = await subscription(gw, created);
    const anchor = failed.anchor_at_ms;
    expect(failed).toMatchObject({ status: 'active', cycles_charged: 0, attempt: 1 });
    expect(failed.last_error).toMatch(/\[TEST\] Insufficient funds/);
    expect(failed.next_charge_at_ms! - anchor).toBeGreaterThanOrEqual(10 * DAY_MS);
    // Day 10: the retry is approved. Day 7 has passed: the next charge is on day 14, not at once.
    await advanceTo(gw, failed.next_charge_at_ms!);
    await drain(gw);
    const recovered = await subscription(gw, created);
    expect(recovered).toMatchObject({ status: 'active', cycles_charged: 1, attempt: 0, last_error: null });
    expect(recovered.next_charge_at_ms).toBe(anchor + 14 * DAY_MS);
    await drain(gw);
    expect((await salesOf(gw, recovered.subscription_id, 3, 4)).map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([
      [1, 0, 'rejected'],
      [1, 1, 'approved'],
    ]);
    // Day 14: the next cycle's first try fails again, and its retry recovers it the same way.
    await advanceTo(gw, anchor + 14 * DAY_MS);
    await drain(gw);
    await advanceTo(gw, (await subscription(gw, created)).next_charge_at_ms!);
    await drain(gw);
    expect(await subscription(gw, created)).toMatchObject({ cycles_charged: 2, attempt: 0, next_charge_at_ms: anchor + 28 * DAY_MS });
    expect((await salesOf(gw, recovered.subscription_id, 3, 4)).map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([
      [1, 0, 'rejected'],
      [1, 1, 'approved'],
      [2, 0, 'rejected'],
      [2, 1, 'approved'],
    ]);
  });

  it('cancellation stops future charges', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    await drain(gw);
    await advanceTo(gw, (await subscription(gw, created)).next_charge_at_ms!);
    await drain(gw);
    const cancel = await v13(gw.url, 'POST', `/api/v1.3/subscription/${String(created.subscription_id)}/cancel`, gw.merchant);
    expect(cancel.body).toMatchObject({ status: 0, subscription_status: 'canceled' });
    await advanceDays(gw, 95);
    await drain(gw);
    expect((await salesOf(gw, String(created.subscription_id), 6)).map((s) => s.cycle)).toEqual([1, 2]);
  });

  it('never charges an inactive (activate false) subscription', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { activate: 'false' });
    await advanceDays(gw, 35);
    await drain(gw);
    expect(await salesOf(gw, String(created.subscription_id), 3)).toHaveLength(0);
  });

  it('a crash between charge and bookkeeping: the next claim books the existing sale, never charging twice', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    const deps = gw.gateway.deps;
    const spy = await countMitCharges(gw);
    // The dead instance's claim holds for 1.5 s of real time (claims are on the wall clock).
    const wall_ms = deps.wall_clock.now_ms();
    const [claimed] = await deps.store.transaction((tx) =>
      tx.subscriptions.claimDue({ due_ms: deps.clock.now_ms(), wall_ms }, 500, wall_ms + 1_500, 'crashed-instance'),
    );
    const mine = claimed && claimed.subscription_id === created.subscription_id ? claimed : null;
    expect(mine).not.toBeNull();
    // The sale goes through, the bookkeeping is lost (as if the process died right after the charge).
    const lost = await renewSubscription(deps, { ...mine!, version: mine!.version + 1000 }, 'crashed-instance');
    expect(lost.kind).toBe('superseded');
    expect(spy.calls()).toBe(1);
    expect((await subscription(gw, created)).cycles_charged).toBe(0);
    // Nothing happens while the dead instance's claim holds; once it runs out, any instance books the sale.
    expect((await runBillingOnce({ deps, poll_ms: 0, lease_ms: 300_000, owner: 'survivor' })).claimed).toBe(0);
    // Moving the sandbox clock does not end it: only real time does.
    await advanceDays(gw, 1);
    expect((await runBillingOnce({ deps, poll_ms: 0, lease_ms: 300_000, owner: 'survivor' })).claimed).toBe(0);
    await sleep(Math.max(0, wall_ms + 1_600 - deps.wall_clock.now_ms()));
    await drain(gw);
    expect(spy.calls()).toBe(1);
    expect(await subscription(gw, created)).toMatchObject({ cycles_charged: 1, attempt: 0 });
    expect((await salesOf(gw, String(created.subscription_id), 2)).map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([
      [1, 0, 'approved'],
    ]);
  });

  it('two renewals of the same claim at once charge once and book once', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { activate: false });
    const deps = gw.gateway.deps;
    // Activated by hand so no other pass claims it first: the row as the worker would claim it.
    const row = await subscription(gw, created);
    await deps.store.transaction((tx) =>
      tx.subscriptions.updateIfVersion(row.subscription_id, row.version, { status: 'active', next_charge_at_ms: deps.clock.now_ms() }),
    );
    const claimed = await subscription(gw, created);
    const spy = await countMitCharges(gw);
    const outcomes = await Promise.all([renewSubscription(deps, claimed, 'a'), renewSubscription(deps, claimed, 'b')]);
    // The second either found the first's sale in flight (waiting: looked at again later) or booked after it (superseded).
    const kinds = outcomes.map((o) => o.kind).sort();
    expect(kinds[0]).toBe('renewed');
    expect(['superseded', 'waiting']).toContain(kinds[1]);
    // A sandbox sale is decided before its key is claimed (store/sql/held-writes.ts, both stores):
    // a second renewal that got that far asked the sandbox too, whose decision was dropped when its
    // write found the key taken. The sandbox moves no money; one sale is stored and booked.
    expect(spy.calls()).toBeGreaterThanOrEqual(1);
    expect(spy.calls()).toBeLessThanOrEqual(2);
    expect((await subscription(gw, created)).cycles_charged).toBe(1);
    expect(await salesOf(gw, row.subscription_id, 2)).toHaveLength(1);
  });
});

// Its own gateway: it moves the sandbox clock by two weeks, which would move other tests' weekly
// dates relative to the clock, and the crash test above counts every claim.
describe.each(storeKinds())("a disabled merchant's subscriptions on %s", (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_BILLING_POLL_MS: '60000' } });
    useClock(() => Math.floor(gw.gateway.clock.now_ms() / 1000));
  });
  afterAll(async () => {
    useClock(null);
    await gw?.close();
  });

  it("holds a disabled merchant's renewals: nothing charged, failed or due while disabled; enabled again, one charge for that period and the next on the following date", async () => {
    const shop = await gw.createMerchant();
    const store = gw.gateway.deps.store;
    const setDisabled = async (disabled: boolean) => {
      const answer = await fetch(`${gw.url}/operator/merchants/${encodeURIComponent(shop.merchant_id)}/disabled`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ disabled }),
      });
      expect(answer.status).toBe(200);
    };
    const plan = await createPlanVia(gw.url, shop, { billing_cycle: 'weekly' });
    const id = String((await subscribeVia(gw.url, shop, plan, await tokenize(gw.url, shop))).subscription_id);
    const rowOf = async () => (await store.subscriptions.get(shop.merchant_id, id))!;
    const sales = async () => {
      const found: string[] = [];
      for (let cycle = 1; cycle <= 4; cycle += 1) {
        for (let attempt = 0; attempt <= 2; attempt += 1) {
          const sale = await store.transactions.findByKey(shop.merchant_id, 'sale', renewalOrderId(id, cycle, attempt));
          if (sale) found.push(`c${cycle}-a${attempt} ${sale.status}`);
        }
      }
      return found;
    };
    await drain(gw);
    const first = await rowOf();
    expect(first).toMatchObject({ status: 'active', cycles_charged: 1 });
    const anchor = first.anchor_at_ms;

    await setDisabled(true);
    // Days 7 and 14 pass while it is disabled: no charge, no failed attempt, not due work.
    await advanceTo(gw, anchor + 15 * DAY_MS);
    await drain(gw);
    const held = await rowOf();
    expect(held).toMatchObject({
      status: 'active',
      cycles_charged: 1,
      attempt: 0,
      version: first.version,
      next_charge_at_ms: anchor + 7 * DAY_MS,
      lease_until_ms: null,
    });
    expect(await store.subscriptions.countDue(gw.gateway.deps.clock.now_ms())).toBe(0);
    // A claim made just before the merchant was disabled: the renewal itself holds it too.
    expect(await renewSubscription(gw.gateway.deps, held, 'claimed-before-disable')).toEqual({ kind: 'held' });
    expect(await sales()).toEqual(['c1-a0 approved']);
    expect((await store.subscriptions.listChanges(id)).map((c) => c.event)).not.toContain('subscription.payment_failed');

    // Enabled on day 15: the charge of day 7 is made once, covering the period it is made in;
    // day 14's period passed without one and is not billed; the next charge is on day 21.
    await setDisabled(false);
    await drain(gw);
    expect(await rowOf()).toMatchObject({ status: 'active', cycles_charged: 2, attempt: 0, next_charge_at_ms: anchor + 21 * DAY_MS });
    expect(await sales()).toEqual(['c1-a0 approved', 'c2-a0 approved']);
  });
});

describe.each(storeKinds())('subscription billing across a restart on %s', (kind) => {
  let database: TestDatabase | undefined;
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-billing-restart-'));
  afterAll(async () => {
    await database?.drop();
    fs.rmSync(data_dir, { recursive: true, force: true });
  });

  it('finds due subscriptions in the database after a restart', async () => {
    if (kind === 'postgres') database = await createTestDatabase();
    const options = { data_dir, database, env: { PAYGATE_BILLING_POLL_MS: '50' } };
    const first = await startTestGateway(kind, options);
    useClock(() => Math.floor(first.gateway.clock.now_ms() / 1000));
    const merchant = first.merchant;
    const token = await tokenize(first.url, merchant);
    const plan = await createPlanVia(first.url, merchant, { trial_period: 3 });
    const created = await subscribeVia(first.url, merchant, plan, token);
    await first.close();

    const second = await startTestGateway(kind, options);
    useClock(null);
    try {
      await advanceDays(second, 3);
      // The background worker (50 ms) charges it; nothing in memory survived the restart.
      for (let i = 0; i < 200; i += 1) {
        const row = await second.gateway.deps.store.subscriptions.get(merchant.merchant_id, String(created.subscription_id));
        if (row?.cycles_charged === 1) break;
        await sleep(25);
      }
      const row = await second.gateway.deps.store.subscriptions.get(merchant.merchant_id, String(created.subscription_id));
      expect(row).toMatchObject({ status: 'active', cycles_charged: 1 });
    } finally {
      await second.close();
    }
  });
});

// ---- two gateway processes, one PostgreSQL -------------------------------------------------------

interface ChildGateway {
  readonly url: string;
  readonly process: ChildProcess;
  readonly log_file: string;
  stop(): Promise<void>;
}

async function startChild(database_url: string, dir: string, name: string): Promise<ChildGateway> {
  const port = await freePort();
  const log_file = path.join(dir, `${name}.log`);
  // Niced: this load test must not starve the other test files running beside it on a small machine.
  const child = spawn('nice', ['-n', '10', process.execPath, CLI_ENTRY, 'start'], {
    env: {
      ...process.env,
      DATABASE_URL: database_url,
      PAYGATE_MASTER_KEY: TEST_MASTER_KEY,
      PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      PORT: String(port),
      HOST: '127.0.0.1',
      PAYGATE_DATA_DIR: dir,
      PAYGATE_LOG_FILE: log_file,
      PAYGATE_LOG_LEVEL: 'warn',
      PAYGATE_BILLING_POLL_MS: '50',
      PAYGATE_PG_POOL_MAX: '12',
      // The notifications (to a closed port) are not what this test is about: fewer at once, less load.
      PAYGATE_NOTIFY_CONCURRENCY: '2',
      // Niced beside other test files, a child's event loop lags by design: its requests must not
      // be shed (HTTP 503, status 29), which load-shedding.test.ts tests on its own.
      PAYGATE_SHED_EVENT_LOOP_DELAY_MS: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || i > 300) throw new Error(`gateway ${name} did not start: ${stderr}`);
    await sleep(100);
  }
  return {
    url,
    process: child,
    log_file,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

describe.runIf(storeKinds().includes('postgres'))('two gateway processes on one PostgreSQL', () => {
  const SUBSCRIPTIONS = 500;
  const CYCLES = 2;
  let database: TestDatabase;
  let dir: string;
  let children: ChildGateway[] = [];
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-two-'));
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await client?.end();
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`charges ${SUBSCRIPTIONS} subscriptions for ${CYCLES} cycles (first charge, then renewals) with no charge missed or doubled`, async () => {
    // The merchant exists before either process starts (so neither creates the demo merchant).
    const store = openPostgresStore(database.url, 2);
    let merchant: CreatedMerchant;
    try {
      await store.migrate();
      const outcome = await new MerchantDirectory(store, new Sealer(Buffer.from(TEST_MASTER_KEY, 'hex'))).create(
        {},
        Date.now(),
        starterGateway('sandbox'),
      );
      if (outcome.kind !== 'created') throw new Error('merchant not created');
      merchant = outcome.merchant;
    } finally {
      await store.close();
    }
    children = await Promise.all([startChild(database.url, dir, 'a'), startChild(database.url, dir, 'b')]);
    const [a, b] = children as [ChildGateway, ChildGateway];

    const token = await tokenize(a.url, merchant);
    const plan = await createPlanVia(b.url, merchant);
    // Created on both processes at once; the first charge of each is due at once, so billing runs meanwhile.
    const ids: string[] = [];
    const queue = Array.from({ length: SUBSCRIPTIONS }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const created = await subscribeVia(i % 2 === 0 ? a.url : b.url, merchant, plan, token, {
            cid: `c${i}`,
            notification_url: 'http://127.0.0.1:9/n',
          });
          ids.push(String(created.subscription_id));
        }
      }),
    );

    const charged = async (cycles: number) =>
      Number(
        (
          await client.query('select count(*) as n from subscriptions where merchant_id = $1 and cycles_charged >= $2', [
            merchant.merchant_id,
            cycles,
          ])
        ).rows[0].n,
      );
    const waitFor = async (cycles: number) => {
      for (let i = 0; i < 2400 && (await charged(cycles)) < SUBSCRIPTIONS; i += 1) await sleep(100);
      expect(await charged(cycles)).toBe(SUBSCRIPTIONS);
    };
    await waitFor(1);
    for (let cycle = 2; cycle <= CYCLES; cycle += 1) {
      // One month on; the other process follows through the shared offset.
      const answer = await postJson(
        (cycle % 2 === 0 ? a : b).url,
        '/sandbox/clock',
        { advance_seconds: 31 * 86_400 + 60 },
        { authorization: `Bearer ${ADMIN_TOKEN}` },
      );
      expect(answer.http_status).toBe(200);
      await waitFor(cycle);
    }
    await sleep(500);

    const sales = (
      await client.query<{ order_id: string; status: string }>(
        "select order_id, status from transactions where merchant_id = $1 and transaction_type = 'sale'",
        [merchant.merchant_id],
      )
    ).rows;
    const per_cycle = new Map<string, number>();
    for (const sale of sales) {
      const match = /^(sub_[0-9a-f]+)-c(\d+)-a(\d+)$/.exec(sale.order_id);
      expect(match, sale.order_id).not.toBeNull();
      expect(sale.status).toBe('approved');
      const key = `${match![1]}/${match![2]}`;
      per_cycle.set(key, (per_cycle.get(key) ?? 0) + 1);
    }
    for (const id of ids) {
      for (let cycle = 1; cycle <= CYCLES; cycle += 1) expect(per_cycle.get(`${id}/${cycle}`), `${id} cycle ${cycle}`).toBe(1);
    }
    expect(sales).toHaveLength(SUBSCRIPTIONS * CYCLES);
    const states = (await client.query('select cycles_charged, status, count(*) as n from subscriptions group by 1, 2')).rows;
    expect(states).toEqual([{ cycles_charged: CYCLES, status: 'active', n: String(SUBSCRIPTIONS) }]);
    // Both processes charged: each renewal records which instance booked it.
    const owners = (
      await client.query<{ owner: string }>(
        "select distinct substring(reason from '\\((billing-[0-9]+)-') as owner from subscription_changes where event = 'subscription.renewed'",
      )
    ).rows.map((r) => r.owner);
    expect(owners.length).toBe(2);
  }, 600_000);
});
