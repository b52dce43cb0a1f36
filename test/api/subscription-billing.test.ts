// Subscription billing driven by the sandbox clock (POST /sandbox/clock): a year of monthly
// renewals with a failure and its recovery, trials, expiration_cycles, retries running out,
// cancellation, a restart, a crash between charge and bookkeeping, and two gateway processes
// on one PostgreSQL renewing 500 subscriptions with no charge missed or doubled.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMonthsAnchored, chargeDueAt, DAY_MS } from '../../src/domain/billing-calendar.js';
import { Sealer } from '../../src/crypto/sealer.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { MerchantDirectory } from '../../src/domain/merchants.js';
import { renewalOrderId, renewSubscription } from '../../src/operations/subscription-renewal.js';
import type { ProcessorResult } from '../../src/processors/processor.js';
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
import { signBody } from '../../src/domain/signing.js';

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
    const due = await deps.store.countDueSubscriptions(deps.clock.now_ms());
    if (pass.claimed === 0 && due === 0) return;
    if (pass.claimed === 0) await sleep(20);
  }
  throw new Error('billing did not drain');
}

async function subscription(gw: TestGateway, created: Record<string, unknown>): Promise<SubscriptionRow> {
  const row = await gw.gateway.deps.store.getSubscription(gw.merchant.merchant_id, String(created.subscription_id));
  if (!row) throw new Error('subscription not found');
  return row;
}

/** Every sale of a subscription, found by the renewal order_ids (cycle 1.., attempt 0..). */
async function salesOf(gw: TestGateway, subscription_id: string, max_cycle = 14, max_attempt = 4): Promise<{ cycle: number; attempt: number; row: TransactionRow }[]> {
  const found: { cycle: number; attempt: number; row: TransactionRow }[] = [];
  for (let cycle = 1; cycle <= max_cycle; cycle += 1) {
    for (let attempt = 0; attempt <= max_attempt; attempt += 1) {
      const row = await gw.gateway.deps.store.findTransactionByKey(gw.merchant.merchant_id, 'sale', renewalOrderId(subscription_id, cycle, attempt));
      if (row) found.push({ cycle, attempt, row });
    }
  }
  return found;
}

/** Makes the sandbox reject the next `count` merchant-initiated charges (a failure in the middle of a year). */
function failNextMitCharges(gw: TestGateway, count: number): { calls: () => number } {
  const processor = gw.gateway.deps.processors.get('sandbox')!;
  const original = processor.sale.bind(processor);
  let left = count;
  let calls = 0;
  processor.sale = async (request): Promise<ProcessorResult> => {
    if (request.initiated_by === 'merchant') calls += 1;
    if (request.initiated_by === 'merchant' && left > 0) {
      left -= 1;
      return { kind: 'rejected', psp_transaction_id: 'sbx_test_decline', error_code: '1', error_details: '[TEST] Insufficient funds' };
    }
    return original(request);
  };
  return { calls: () => calls };
}

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

  it('renews monthly for a year: 12 stored, notified, refundable sales; a failure in month 6 retried and recovered', async () => {
    // The merchant acknowledges every notification (status 0, body-signed; accepted for both kinds).
    receiver.setReply('/year', () => {
      const reply = { status: 0, description: 'OK', version: '1.2', timestamp: stamp() };
      return { status: 200, body: { ...reply, signature: signBody(reply, gw.merchant.secret) } };
    });
    const plan = await createPlanVia(gw.url, gw.merchant, { retries_number: 2, retries_delay_days: 2 });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { notification_url: `${receiver.url}/year` });
    const anchor = (await subscription(gw, created)).anchor_at_ms;
    await drain(gw);
    expect((await subscription(gw, created)).cycles_charged).toBe(1);

    for (let cycle = 2; cycle <= 12; cycle += 1) {
      const due = (await subscription(gw, created)).next_charge_at_ms!;
      expect(due, `cycle ${cycle} is due on the anchor day`).toBe(chargeDueAt(anchor, cycle - 1, 'monthly'));
      if (cycle === 6) failNextMitCharges(gw, 1);
      await advanceTo(gw, due);
      await drain(gw);
      if (cycle === 6) {
        const failed = await subscription(gw, created);
        expect(failed).toMatchObject({ status: 'active', cycles_charged: 5, attempt: 1 });
        expect(failed.last_error).toMatch(/Insufficient funds/);
        expect(failed.next_charge_at_ms).toBeGreaterThanOrEqual(due + 2 * DAY_MS);
        await advanceTo(gw, failed.next_charge_at_ms!);
        await drain(gw);
      }
      expect((await subscription(gw, created)).cycles_charged, `after cycle ${cycle}`).toBe(cycle);
    }

    const final = await subscription(gw, created);
    expect(final).toMatchObject({ status: 'active', cycles_charged: 12, attempt: 0 });
    expect(final.next_charge_at_ms).toBe(chargeDueAt(anchor, 12, 'monthly'));
    const sales = await salesOf(gw, final.subscription_id);
    const approved = sales.filter((s) => s.row.status === 'approved');
    expect(approved.map((s) => s.cycle)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(sales.filter((s) => s.row.status !== 'approved').map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([[6, 0, 'rejected']]);
    expect(approved.find((s) => s.cycle === 6)!.attempt).toBe(1);
    for (const { row, cycle, attempt } of approved) {
      expect(row).toMatchObject({
        transaction_type: 'sale', amount_minor: 1999, currency: 'USD', identity_kind: 'application_key', identity_value: gw.merchant.application_key,
        card_masked: '411111******1111', card_token, notification_url: `${receiver.url}/year`, payment_processor: 'sandbox',
      });
      // Charged at its due date (the retry two days after the failure), not drifting.
      const due = cycle === 6 ? final.next_charge_at_ms! : chargeDueAt(anchor, cycle - 1, 'monthly');
      if (cycle !== 6) expect(row.created_at_ms - due, `cycle ${cycle} attempt ${attempt}`).toBeLessThan(60_000);
      expect(row.created_at_ms).toBeGreaterThanOrEqual(cycle === 6 ? row.created_at_ms : due);
      // Stored with its notification.
      const notifications = await gw.gateway.deps.store.listNotifications(row.trace_id);
      expect(notifications).toHaveLength(1);
      expect(JSON.parse(notifications[0]!.payload_json)).toMatchObject({ transaction_type: 'sale', transaction_status: 'approved', trace_id: row.trace_id });
    }
    // Delivered to the subscription's notification_url like any other notification.
    const delivered = () => new Set(receiver.requestsTo('/year').map((r) => (r.json as { trace_id?: number }).trace_id).filter((t) => t !== undefined));
    for (let i = 0; i < 600 && sales.some(({ row }) => !delivered().has(row.trace_id)); i += 1) await sleep(50);
    for (const { row } of sales) expect(delivered().has(row.trace_id), `trace ${row.trace_id} notified`).toBe(true);

    // Refundable like any sale (spec §4.1 variant C).
    const march = approved.find((s) => s.cycle === 3)!.row;
    const refund = await postSigned(gw.url, '/api/process', refundC(gw.merchant, march.trace_id, {
      amount: 1999, currency: 'USD', card_number: VISA, card_exp: '12/2035', timestamp: stamp(),
    }), gw.merchant.secret);
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'approved' });

    const changes = await gw.gateway.deps.store.listSubscriptionChanges(final.subscription_id);
    expect(changes.filter((c) => c.event === 'subscription.renewed')).toHaveLength(12);
    expect(changes.filter((c) => c.event === 'subscription.payment_failed')).toHaveLength(1);
    // And one subscription event per change, to the same notification_url.
    const events = (await gw.gateway.deps.store.listSubscriptionEvents(final.subscription_id)).map((n) => JSON.parse(n.payload_json) as { event: string; cycle?: number });
    expect(events.map((e) => e.event)).toEqual(['subscription.created', ...Array.from({ length: 5 }, () => 'subscription.renewed'),
      'subscription.payment_failed', ...Array.from({ length: 7 }, () => 'subscription.renewed')]);
    // Delivered in order, one subscription's events one after the other (notifications.md §5).
    const undelivered = async () => (await gw.gateway.deps.store.listSubscriptionEvents(final.subscription_id)).filter((n) => n.state !== 'delivered').length;
    for (let i = 0; i < 600 && (await undelivered()) > 0; i += 1) await sleep(50);
    expect(await undelivered()).toBe(0);
    expect(new Set(receiver.requestsTo('/year').map((r) => (r.json as { event?: string; cycle?: number }).event && `${(r.json as { event: string }).event}/${(r.json as { cycle?: number }).cycle ?? 0}`)
      .filter(Boolean)).size).toBe(new Set(events.map((e) => `${e.event}/${e.cycle ?? 0}`)).size);
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
      return { status: 200, body: { status, description: status === 0 ? 'OK' : 'try later', version: '1.3', timestamp },
        headers: { 'gt-authentication': sha384(`${status}${timestamp}${secret}`) } };
    });
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { notification_url: `${receiver.url}/events` });
    const subscription_id = String(created.subscription_id);
    const eventsFor = (event: string) => receiver.requestsTo('/events').filter((r) => (r.json as { event?: string; subscription_id?: string }).event === event
      && (r.json as { subscription_id?: string }).subscription_id === subscription_id);
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
      event: 'subscription.created', merchant_id: gw.merchant.merchant_id, application_key: gw.merchant.application_key, subscription_id,
      plan_id: plan.plan_id, cid: 'cust-42', subscription_status: 'active', price: created.price, cycles_charged: 0, version: '1.3',
    });
    expect(body.signature).toBeUndefined();
    expect(first!.headers['gt-authentication']).toBe(sha384(`subscription.created${gw.merchant.merchant_id}${gw.merchant.application_key}cust-42`
      + `${String(plan.plan_id)}${subscription_id}active${String(body.timestamp)}${secret}`));

    await drain(gw);
    const [renewed] = await waitEvent('subscription.renewed');
    const sale = (await salesOf(gw, subscription_id, 1))[0]!.row;
    expect(renewed!.json).toMatchObject({ event: 'subscription.renewed', subscription_status: 'active', cycle: 1, trace_id: sale.trace_id, cycles_charged: 1 });
    await v13(gw.url, 'POST', `/api/v1.3/subscription/${subscription_id}/cancel`, gw.merchant);
    const [canceled] = await waitEvent('subscription.canceled');
    expect(canceled!.json).toMatchObject({ subscription_status: 'canceled', next_charge_at: null });
    expect(canceled!.headers['gt-authentication']).toBe(sha384(`subscription.canceled${gw.merchant.merchant_id}${gw.merchant.application_key}cust-42`
      + `${String(plan.plan_id)}${subscription_id}canceled${String((canceled!.json as { timestamp: number }).timestamp)}${secret}`));

    const outbox = await gw.gateway.deps.store.listSubscriptionEvents(subscription_id);
    expect(outbox.map((n) => [n.kind, JSON.parse(n.payload_json).event, n.trace_id])).toEqual([
      ['subscription_event', 'subscription.created', null], ['subscription_event', 'subscription.renewed', null], ['subscription_event', 'subscription.canceled', null],
    ]);
    for (let i = 0; i < 100 && (await gw.gateway.deps.store.listSubscriptionEvents(subscription_id)).some((n) => n.state !== 'delivered'); i += 1) await sleep(25);
    expect((await gw.gateway.deps.store.listSubscriptionEvents(subscription_id)).map((n) => n.state)).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('accepts a body-signed event reply, and resends an unsigned one', async () => {
    receiver.setReply('/events-body', (request) => {
      const json = request.json as { event: string };
      const reply: Record<string, unknown> = { status: 0, description: 'OK', version: '1.3', timestamp: stamp() };
      return { status: 200, body: json.event === 'subscription.created' ? { ...reply, signature: signBody(reply, gw.merchant.secret) } : reply };
    });
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { notification_url: `${receiver.url}/events-body`, activate: false });
    await v13(gw.url, 'POST', `/api/v1.3/subscription/${String(created.subscription_id)}/cancel`, gw.merchant);
    const states = async () => (await gw.gateway.deps.store.listSubscriptionEvents(String(created.subscription_id))).map((n) => [n.state, n.attempts > 0]);
    for (let i = 0; i < 200 && JSON.stringify(await states()) !== JSON.stringify([['delivered', true], ['pending', true]]); i += 1) await sleep(25);
    expect(await states()).toEqual([['delivered', true], ['pending', true]]);
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
  });

  it('retries a failing charge retries_number times every retries_delay_days, then makes it inactive (sandbox MIT amount 1402)', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, { prices: [{ amount: 1402, currency: 'USD' }], retries_number: 2, retries_delay_days: 3 });
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
    expect(sales.map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([[1, 0, 'rejected'], [1, 1, 'rejected'], [1, 2, 'rejected']]);
    const changes = await gw.gateway.deps.store.listSubscriptionChanges(inactive.subscription_id);
    expect(changes.map((c) => c.event)).toEqual(['subscription.created', 'subscription.payment_failed', 'subscription.payment_failed', 'subscription.deactivated']);
    const read = await v13(gw.url, 'GET', `/api/v1.3/subscription/${inactive.subscription_id}`, gw.merchant);
    expect(read.body).toMatchObject({ status: 0, subscription_status: 'inactive' });
  });

  it('counts a processor error as a failed attempt too (sandbox MIT amount 1444); retries_number 0 deactivates at once', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant, { prices: [{ amount: 1444, currency: 'USD' }], retries_number: 0 });
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token);
    await drain(gw);
    const row = await subscription(gw, created);
    expect(row).toMatchObject({ status: 'inactive' });
    expect((await salesOf(gw, row.subscription_id, 1)).map((s) => s.row.status)).toEqual(['error']);
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
    const spy = failNextMitCharges(gw, 0);
    const now_ms = deps.clock.now_ms();
    const [claimed] = await deps.store.transaction((tx) => tx.claimDueSubscriptions(now_ms, 500, now_ms + 300_000, 'crashed-instance'));
    const mine = claimed && claimed.subscription_id === created.subscription_id ? claimed : null;
    expect(mine).not.toBeNull();
    // The sale goes through, the bookkeeping is lost (as if the process died right after the charge).
    const lost = await renewSubscription(deps, { ...mine!, version: mine!.version + 1000 }, 'crashed-instance');
    expect(lost.kind).toBe('superseded');
    expect(spy.calls()).toBe(1);
    expect((await subscription(gw, created)).cycles_charged).toBe(0);
    // Nothing happens while the dead instance's claim holds; once it runs out, any instance books the sale.
    expect((await runBillingOnce({ deps, poll_ms: 0, lease_ms: 300_000, owner: 'survivor' })).claimed).toBe(0);
    await advanceTo(gw, now_ms + 300_000);
    await drain(gw);
    expect(spy.calls()).toBe(1);
    expect(await subscription(gw, created)).toMatchObject({ cycles_charged: 1, attempt: 0 });
    expect((await salesOf(gw, String(created.subscription_id), 2)).map((s) => [s.cycle, s.attempt, s.row.status])).toEqual([[1, 0, 'approved']]);
  });

  it('two renewals of the same claim at once charge once and book once', async () => {
    const plan = await createPlanVia(gw.url, gw.merchant);
    const created = await subscribeVia(gw.url, gw.merchant, plan, card_token, { activate: false });
    const deps = gw.gateway.deps;
    // Activated by hand so no other pass claims it first: the row as the worker would claim it.
    const row = await subscription(gw, created);
    await deps.store.transaction((tx) => tx.updateSubscriptionIfVersion(row.subscription_id, row.version, { status: 'active', next_charge_at_ms: deps.clock.now_ms() }));
    const claimed = await subscription(gw, created);
    const spy = failNextMitCharges(gw, 0);
    const outcomes = await Promise.all([renewSubscription(deps, claimed, 'a'), renewSubscription(deps, claimed, 'b')]);
    // The second either found the first's sale in flight (waiting: looked at again later) or booked after it (superseded).
    const kinds = outcomes.map((o) => o.kind).sort();
    expect(kinds[0]).toBe('renewed');
    expect(['superseded', 'waiting']).toContain(kinds[1]);
    expect(spy.calls()).toBe(1);
    expect((await subscription(gw, created)).cycles_charged).toBe(1);
    expect(await salesOf(gw, row.subscription_id, 2)).toHaveLength(1);
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
        const row = await second.gateway.deps.store.getSubscription(merchant.merchant_id, String(created.subscription_id));
        if (row?.cycles_charged === 1) break;
        await sleep(25);
      }
      const row = await second.gateway.deps.store.getSubscription(merchant.merchant_id, String(created.subscription_id));
      expect(row).toMatchObject({ status: 'active', cycles_charged: 1 });
    } finally {
      await second.close();
    }
  });
});

// ---- two gateway processes, one PostgreSQL -------------------------------------------------------

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

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
  const child = spawn('nice', ['-n', '10', process.execPath, '--import', 'tsx', path.resolve('src/cli.ts'), 'start'], {
    env: {
      ...process.env, DATABASE_URL: database_url, PAYGATE_MASTER_KEY: TEST_MASTER_KEY, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      PORT: String(port), HOST: '127.0.0.1', PAYGATE_DATA_DIR: dir, PAYGATE_LOG_FILE: log_file, PAYGATE_LOG_LEVEL: 'warn',
      PAYGATE_BILLING_POLL_MS: '50', PAYGATE_PG_POOL_MAX: '12',
      // The notifications (to a closed port) are not what this test is about: fewer at once, less load.
      PAYGATE_NOTIFY_CONCURRENCY: '2',
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
    url, process: child, log_file,
    stop: () => new Promise<void>((resolve) => {
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
      const outcome = await new MerchantDirectory(store, new Sealer(Buffer.from(TEST_MASTER_KEY, 'hex'))).create({}, Date.now());
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
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const created = await subscribeVia(i % 2 === 0 ? a.url : b.url, merchant, plan, token, { cid: `c${i}`, notification_url: 'http://127.0.0.1:9/n' });
        ids.push(String(created.subscription_id));
      }
    }));

    const charged = async (cycles: number) => Number((await client.query(
      'select count(*) as n from subscriptions where merchant_id = $1 and cycles_charged >= $2', [merchant.merchant_id, cycles],
    )).rows[0].n);
    const waitFor = async (cycles: number) => {
      for (let i = 0; i < 2400 && (await charged(cycles)) < SUBSCRIPTIONS; i += 1) await sleep(100);
      expect(await charged(cycles)).toBe(SUBSCRIPTIONS);
    };
    await waitFor(1);
    for (let cycle = 2; cycle <= CYCLES; cycle += 1) {
      // One month on; the other process follows through the shared offset.
      const answer = await postJson((cycle % 2 === 0 ? a : b).url, '/sandbox/clock', { advance_seconds: 31 * 86_400 + 60 },
        { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(answer.http_status).toBe(200);
      await waitFor(cycle);
    }
    await sleep(500);

    const sales = (await client.query<{ order_id: string; status: string }>(
      "select order_id, status from transactions where merchant_id = $1 and transaction_type = 'sale'", [merchant.merchant_id],
    )).rows;
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
    const owners = (await client.query<{ owner: string }>(
      "select distinct substring(reason from '\\((billing-[0-9]+)-') as owner from subscription_changes where event = 'subscription.renewed'",
    )).rows.map((r) => r.owner);
    expect(owners.length).toBe(2);
  }, 600_000);
});
