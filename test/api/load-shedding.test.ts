// Load shedding at the HTTP edge (issue 29, item 3; http/load-shedding.ts): while the process's
// event loop lags past PAYGATE_SHED_EVENT_LOOP_DELAY_MS, API requests are answered HTTP 503,
// status 29, with Retry-After, before anything is recorded, so the same request sent again once
// the lag has passed is a new sale, not a replay. Probes, pages and the metrics still answer.
//
// The gateway runs in this process, so the test makes the lag itself: a timer that keeps the
// event loop busy 80 ms in every 90, as a saturated core would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { type Answer, postSigned, signed } from '../support/client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';

const LAG_THRESHOLD_MS = 30;
const WAIT_MS = 8_000;

function busyFor(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // the core stays busy, as under load
  }
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${WAIT_MS} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('load shedding', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_SHED_EVENT_LOOP_DELAY_MS: String(LAG_THRESHOLD_MS) } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('refuses API requests 503 with status 29 and Retry-After while the event loop lags, records nothing, and takes them again after', async () => {
    const merchant = await gw.createMerchant();
    const sale = saleA(merchant);
    const findOrder = () =>
      postSigned(
        gw.url,
        '/api/find-order',
        {
          merchant_id: merchant.merchant_id,
          frontend: merchant.frontend,
          order_id: 'nothing-here',
          timestamp: sale.timestamp,
          version: '1.1',
        },
        merchant.secret,
      );
    // Not lagging: an API call is answered as usual (waited for: a loaded machine can lag a test process too).
    await until('an API call to be answered', async () => (await findOrder()).http_status === 200);

    const lag = setInterval(() => busyFor(80), 90);
    let refused: Answer;
    let refused_headers: Headers;
    let health_status: number;
    let page_status: number;
    try {
      await until('a request to be shed', async () => (await findOrder()).http_status === 503);
      const response = await fetch(`${gw.url}/api/process`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signed(sale, merchant.secret)),
      });
      refused = { http_status: response.status, body: (await response.json()) as Record<string, unknown> };
      refused_headers = response.headers;
      health_status = (await fetch(`${gw.url}/healthz`)).status;
      page_status = (await fetch(`${gw.url}/backoffice/`, { redirect: 'manual' })).status;
    } finally {
      clearInterval(lag);
    }

    expect(refused.http_status).toBe(503);
    expect(refused.body).toMatchObject({ status: 29, description: 'Gateway busy: retry in 1 s' });
    expect(refused_headers.get('retry-after')).toBe('1');
    // Never shed: the probe, and a person's page.
    expect(health_status).toBe(200);
    expect(page_status).not.toBe(503);
    // Nothing of the refused sale was recorded.
    expect(await gw.gateway.deps.store.transactions.findByKey(merchant.merchant_id, 'sale', String(sale.order_id))).toBeNull();
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(Number(/^paygate_requests_shed_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
    expect(metrics).toMatch(/^paygate_event_loop_delay_ms \d/m);

    // The lag over, the same request is taken and processed as a new sale.
    await until('requests to be taken again', async () => (await findOrder()).http_status === 200);
    const approved = await postSigned(gw.url, '/api/process', sale, merchant.secret);
    expect(approved.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const row = await gw.gateway.deps.store.transactions.findByKey(merchant.merchant_id, 'sale', String(sale.order_id));
    expect(row?.trace_id).toBe(approved.body.trace_id);
  });
});

describe('load shedding off (PAYGATE_SHED_EVENT_LOOP_DELAY_MS=0)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_SHED_EVENT_LOOP_DELAY_MS: '0' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('takes API calls however late the event loop is, and shows no delay gauge', async () => {
    const merchant = await gw.createMerchant();
    const lag = setInterval(() => busyFor(80), 90);
    let answer: Answer;
    try {
      // Past the lag reading's second, a shedding gateway would refuse by now.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      answer = await postSigned(gw.url, '/api/process', saleA(merchant), merchant.secret);
    } finally {
      clearInterval(lag);
    }
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).not.toMatch(/^paygate_event_loop_delay_ms /m);
    expect(metrics).toMatch(/^paygate_requests_shed_total 0$/m);
  });
});
