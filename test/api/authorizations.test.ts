// Authorize, capture and void in the sandbox (decisions §16), through the real HTTP server on each
// store: an authorization answered `authorized`, a partial capture (`approved` with the captured
// amount, notified once), the same capture replayed (the same answer, nothing more at the
// processor or to the merchant), a void (`cancelled`), the refusals of §16 with nothing changed,
// a capture whose process died before the answer settled by asking the processor, the expiry that
// voids by itself, and a refund of a captured authorization.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, postSigned } from '../support/client.js';
import { refundC, saleA, saleB } from '../support/bodies.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('authorize, capture and void on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_AUTHORIZATION_TTL_HOURS: '2' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const store = () => gw.gateway.deps.store;
  const process = (body: Record<string, unknown>) => postSigned(gw.url, '/api/process', body, gw.merchant.secret);
  const capture = (fields: Record<string, unknown>, merchant = gw.merchant) =>
    postSigned(
      gw.url,
      '/api/capture',
      {
        merchant_id: merchant.merchant_id,
        application_key: merchant.application_key,
        version: '1.2',
        timestamp: Math.floor(Date.now() / 1000),
        ...fields,
      },
      merchant.secret,
    );
  const voidIt = (fields: Record<string, unknown>) =>
    postSigned(
      gw.url,
      '/api/void',
      {
        merchant_id: gw.merchant.merchant_id,
        frontend: gw.merchant.frontend,
        version: '1.1',
        timestamp: Math.floor(Date.now() / 1000),
        ...fields,
      },
      gw.merchant.secret,
    );
  const notified = async (trace_id: number) =>
    (await store().notifications.listOfTransaction(trace_id)).map((n) => JSON.parse(n.payload_json) as Record<string, unknown>);
  async function authorize(amount = 1000): Promise<number> {
    const answer = await process(saleA(gw.merchant, { transaction_type: 'authorize', amount }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'authorized', payment_processor: 'sandbox' });
    return answer.body.trace_id as number;
  }

  it('authorizes, captures part (the rest released), and answers the same capture again without a second capture or notification', async () => {
    const trace_id = await authorize(1000);
    expect(await store().transactions.get(trace_id)).toMatchObject({
      transaction_type: 'authorize',
      status: 'authorized',
      amount_minor: 1000,
    });
    expect(await notified(trace_id)).toEqual([
      expect.objectContaining({ transaction_type: 'authorize', transaction_status: 'authorized', amount: 1000 }),
    ]);

    const first = await capture({ reference_id: trace_id, amount: 600 });
    expect(first.body).toMatchObject({ status: 0, trace_id, transaction_status: 'approved' });
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'approved', amount_minor: 600, charge_amount_minor: 600 });
    expect(await store().authorizations.getAction(trace_id)).toMatchObject({
      action: 'capture',
      authorized_minor: 1000,
      amount_minor: 600,
      state: 'done',
      origin: 'merchant',
    });
    const after_first = await notified(trace_id);
    expect(after_first).toHaveLength(2);
    expect(after_first[1]).toMatchObject({
      transaction_type: 'authorize',
      transaction_status: 'approved',
      amount: 600,
      charge_amount: 600,
    });

    const again = await capture({ reference_id: String(trace_id), amount: 600 });
    expect(again.body).toMatchObject({ status: 0, trace_id, transaction_status: 'approved' });
    expect(await notified(trace_id)).toHaveLength(2);
    const history = await store().transactions.listStatusChanges(trace_id);
    expect(history.map((h) => h.to_status)).toEqual(['pending', 'authorized', 'approved']);

    // Another amount, or a void, after the capture: refused, nothing changed.
    const other = await capture({ reference_id: trace_id, amount: 500 });
    expect(other.body).toMatchObject({ status: 37, description: 'Capture refused: the authorization was already captured for 600' });
    const late_void = await voidIt({ reference_id: trace_id });
    expect(late_void.body).toMatchObject({ status: 37, description: 'Void refused: the authorization was already captured for 600' });
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'approved', amount_minor: 600 });
  });

  it('captures the whole amount when no amount is given, in the frontend form too', async () => {
    const answer = await process(saleB(gw.merchant, { transaction_type: 'authorize', amount: 2500 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'authorized', version: '1.1' });
    const trace_id = answer.body.trace_id as number;
    const captured = await postSigned(
      gw.url,
      '/api/capture',
      {
        merchant_id: gw.merchant.merchant_id,
        frontend: gw.merchant.frontend,
        reference_id: trace_id,
        version: '1.1',
        timestamp: Math.floor(Date.now() / 1000),
      },
      gw.merchant.secret,
    );
    expect(captured.body).toMatchObject({ status: 0, transaction_status: 'approved', version: '1.1' });
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'approved', amount_minor: 2500 });
  });

  it('voids an authorization (cancelled, notified once) and refuses to capture it afterwards', async () => {
    const trace_id = await authorize(800);
    const voided = await voidIt({ reference_id: trace_id });
    expect(voided.body).toMatchObject({ status: 0, trace_id, transaction_status: 'cancelled' });
    expect((await voidIt({ reference_id: trace_id })).body).toMatchObject({ status: 0, transaction_status: 'cancelled' });
    const notes = await notified(trace_id);
    expect(notes.map((n) => n.transaction_status)).toEqual(['authorized', 'cancelled']);
    expect((await capture({ reference_id: trace_id })).body).toMatchObject({
      status: 37,
      description: 'Capture refused: the authorization was already voided',
    });
  });

  it('ten identical captures at once make one capture and one notification; a capture racing a void: one wins, the other is refused', async () => {
    const trace_id = await authorize(1000);
    const answers = await Promise.all(Array.from({ length: 10 }, () => capture({ reference_id: trace_id, amount: 250 })));
    for (const answer of answers) {
      expect([0, 16]).toContain(answer.body.status);
      if (answer.body.status === 0) expect(answer.body).toMatchObject({ trace_id, transaction_status: 'approved' });
    }
    expect((await notified(trace_id)).filter((n) => n.transaction_status === 'approved')).toHaveLength(1);
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'approved', amount_minor: 250 });

    const raced = await authorize(1000);
    const [captured, voided] = await Promise.all([capture({ reference_id: raced }), voidIt({ reference_id: raced })]);
    const statuses = [captured.body.status, voided.body.status].sort();
    expect(statuses).toEqual([0, 37]);
    const final = (await store().transactions.get(raced))!.status;
    expect(final).toBe(captured.body.status === 0 ? 'approved' : 'cancelled');
    expect((await notified(raced)).map((n) => n.transaction_status)).toEqual(['authorized', final]);
  });

  it('refuses what §16 refuses, with nothing changed', async () => {
    const sale = await process(saleA(gw.merchant, { amount: 700 }));
    const sale_id = sale.body.trace_id as number;
    expect((await capture({ reference_id: sale_id })).body).toMatchObject({
      status: 37,
      description: `Capture refused: transaction ${sale_id} is not an authorized authorization (transaction_type sale, status approved)`,
    });
    expect((await voidIt({ reference_id: sale_id })).body).toMatchObject({
      status: 37,
      description: `Void refused: transaction ${sale_id} is not an authorized authorization (transaction_type sale, status approved)`,
    });
    const trace_id = await authorize(1000);
    expect((await capture({ reference_id: trace_id, amount: 1001 })).body).toMatchObject({
      status: 37,
      description: 'Capture refused: amount exceeds the authorized amount (1000)',
    });
    expect((await capture({ reference_id: 987654321 })).body).toMatchObject({ status: 13, description: 'Transaction not found' });
    const other = await gw.createMerchant();
    expect((await capture({ reference_id: trace_id }, other)).body).toMatchObject({ status: 13, description: 'Transaction not found' });
    expect((await capture({ reference_id: trace_id, amount: 0 })).body).toMatchObject({ status: 10 });
    expect((await capture({ reference_id: 'abc' })).body).toMatchObject({ status: 10 });
    expect(await store().transactions.get(trace_id)).toMatchObject({ status: 'authorized', amount_minor: 1000 });
    expect(await store().authorizations.getAction(trace_id)).toBeNull();
    expect((await store().transactions.listStatusChanges(sale_id)).map((h) => h.to_status)).toEqual(['pending', 'approved']);
  });

  it('an authorization declined by the sandbox is rejected, and a 3-D Secure one is pending_async first', async () => {
    const declined = await process(saleA(gw.merchant, { transaction_type: 'authorize', cvv: '901' }));
    expect(declined.body).toMatchObject({ status: 0, transaction_status: expect.stringMatching(/^(rejected|declined)$/) });
    const challenged = await process(saleA(gw.merchant, { transaction_type: 'authorize', cvv: '333' }));
    expect(challenged.body).toMatchObject({
      status: 0,
      transaction_status: 'pending_async',
      redirect_url: expect.stringContaining('/sandbox/3ds/'),
    });
    const approve = await fetch(`${challenged.body.redirect_url as string}`, {
      method: 'POST',
      body: new URLSearchParams({ action: 'approve' }),
      redirect: 'manual',
    });
    expect(approve.status).toBeLessThan(400);
    const row = await waitUntil(async () => {
      const current = await store().transactions.get(challenged.body.trace_id as number);
      return current?.status === 'authorized' ? current : undefined;
    }, 'the status change');
    expect(row.transaction_type).toBe('authorize');
  });

  it('an authorization the sandbox settles later (CVV 222) is pending, then authorized, notified', async () => {
    const answer = await process(saleA(gw.merchant, { transaction_type: 'authorize', cvv: '222', amount: 1100 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    const trace_id = answer.body.trace_id as number;
    const row = await waitUntil(async () => {
      const current = await store().transactions.get(trace_id);
      return current?.status === 'authorized' ? current : undefined;
    }, 'the authorization settled');
    expect(row.transaction_type).toBe('authorize');
    expect((await notified(trace_id)).map((n) => n.transaction_status)).toEqual(['authorized']);
  });

  it('a capture whose process died before the answer is settled by asking the processor, not guessed', async () => {
    const trace_id = await authorize(900);
    // What a process killed during the processor call leaves: the action reserved, no answer.
    const long_ago_ms = gw.gateway.deps.clock.now_ms() - 10 * 60_000;
    await store().authorizations.reserveAction({
      trace_id,
      action: 'capture',
      authorized_minor: 900,
      amount_minor: 400,
      state: 'requested',
      origin: 'merchant',
      agent: null,
      idempotency_key: `paygate-capture-${trace_id}`,
      psp_action_id: null,
      requested_at_ms: long_ago_ms,
      updated_at_ms: long_ago_ms,
    });
    // The merchant's retry while it is unsettled is not sent to the processor a second time.
    const row = await waitUntil(async () => {
      const current = await store().transactions.get(trace_id);
      return current?.status === 'approved' ? current : undefined;
    }, 'the status change');
    expect(row.amount_minor).toBe(400);
    expect(await store().authorizations.getAction(trace_id)).toMatchObject({ state: 'done', attempts: 1 });
    expect((await notified(trace_id)).map((n) => [n.transaction_status, n.amount])).toEqual([
      ['authorized', 900],
      ['approved', 400],
    ]);
    expect((await capture({ reference_id: trace_id, amount: 400 })).body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });

  it('refunds a captured authorization within what was captured', async () => {
    const trace_id = await authorize(1000);
    await capture({ reference_id: trace_id, amount: 700 });
    const too_much = await process(
      refundC(gw.merchant, trace_id, { amount: 701, currency: 'USD', card_number: '4111111111111111', card_exp: '12/2035' }),
    );
    expect(too_much.body).toMatchObject({ status: 14 });
    const refund = await process(
      refundC(gw.merchant, trace_id, { amount: 700, currency: 'USD', card_number: '4111111111111111', card_exp: '12/2035' }),
    );
    expect(refund.body).toMatchObject({ status: 0, transaction_status: 'approved' });
  });
  it('voids an authorization nobody captured within PAYGATE_AUTHORIZATION_TTL_HOURS, notified', async () => {
    const trace_id = await authorize(300);
    const captured_one = await authorize(310);
    await capture({ reference_id: captured_one });
    const moved = await postJson(gw.url, '/sandbox/clock', { advance_seconds: 2 * 3600 + 5 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(moved.http_status).toBe(200);
    const row = await waitUntil(async () => {
      const current = await store().transactions.get(trace_id);
      return current?.status === 'cancelled' ? current : undefined;
    }, 'the status change');
    expect(row.status).toBe('cancelled');
    expect(await store().authorizations.getAction(trace_id)).toMatchObject({ action: 'void', origin: 'expiry', state: 'done' });
    expect((await notified(trace_id)).at(-1)).toMatchObject({ transaction_type: 'authorize', transaction_status: 'cancelled' });
    expect(await store().transactions.get(captured_one)).toMatchObject({ status: 'approved' });
  });
});
