// Two gateway instances on one PostgreSQL database, each with its own connection pool, taking
// the same merchant's requests at once: idempotency and the refund limit must hold because the
// database enforces them (unique key, row lock), not because one process saw both requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, signed } from '../support/client.js';
import { refundC, saleA } from '../support/bodies.js';
import { startTwoInstances, type TestGateway, type TwoInstances } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';

describe.runIf(storeKinds().includes('postgres'))('two gateway instances on one PostgreSQL', () => {
  let both: TwoInstances;
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    both = await startTwoInstances();
    ({ a, b } = both);
  });
  afterAll(async () => {
    await both?.close();
  });

  /** Sends each body to the instances in turn, all at once. */
  const spread = (bodies: Record<string, unknown>[]) =>
    Promise.all(bodies.map((body, i) => postJson((i % 2 === 0 ? a : b).url, '/api/process', body)));

  it('gives 20 concurrent identical sales, split over both instances, one trace_id and one transaction', async () => {
    const body = signed(saleA(a.merchant), a.merchant.secret);
    const answers = await spread(Array.from({ length: 20 }, () => body));
    for (const answer of answers) expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    expect(new Set(answers.map((answer) => answer.body.trace_id)).size).toBe(1);
    const row = await a.gateway.deps.store.transactions.findByKey(a.merchant.merchant_id, 'sale', body.order_id as string);
    expect(row?.trace_id).toBe(answers[0]!.body.trace_id);
    expect(await b.gateway.deps.store.notifications.listOfTransaction(row!.trace_id)).toHaveLength(1);
  });

  it('never lets 20 concurrent partial refunds, split over both instances, exceed the sale', async () => {
    const sale = await postJson(a.url, '/api/process', signed(saleA(a.merchant, { amount: 1000 }), a.merchant.secret));
    expect(sale.body.transaction_status).toBe('approved');
    const trace_id = sale.body.trace_id as number;
    const bodies = Array.from({ length: 20 }, () => signed(refundC(a.merchant, trace_id, { amount: 150 }), a.merchant.secret));
    const answers = await spread(bodies);
    const approved = answers.filter((answer) => answer.body.status === 0 && answer.body.transaction_status === 'approved');
    expect(approved).toHaveLength(6); // 6 x 150 = 900 <= 1000 < 7 x 150
    expect(answers.filter((answer) => answer.body.status === 14)).toHaveLength(14);
    expect((await b.gateway.deps.store.transactions.get(trace_id))?.refund_reserved_minor).toBe(900);
  });
});
