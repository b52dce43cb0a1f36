// Observability (issue 19 item 6, decisions.md §15): one log line per API request with who,
// what and how it ended, redacted; /metrics in the Prometheus text format to the operator's token.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA, VISA } from '../support/bodies.js';
import { postSigned } from '../support/client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type MerchantReceiver, startMerchantReceiver } from '../support/merchant-receiver.js';
import { signedReply, waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

function metric(text: string, name: string, labels: Record<string, string>): number | null {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const label_text = line.slice(name.length).split('}')[0] ?? '';
    if (wanted.every((pair) => label_text.includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

describe.each(storeKinds())('observability on %s', (kind) => {
  let gw: TestGateway;
  let receiver: MerchantReceiver;
  beforeAll(async () => {
    receiver = await startMerchantReceiver();
    gw = await startTestGateway(kind, { env: { PAYGATE_LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  const scrape = async (): Promise<string> => {
    const response = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  it('logs each API request once: merchant, route, API status, trace_id, duration, and no card data', async () => {
    receiver.setReply('/notify', signedReply(gw.merchant.secret));
    const sale = await postSigned(
      gw.url,
      '/api/process',
      saleA(gw.merchant, { notification_url: `${receiver.url}/notify` }),
      gw.merchant.secret,
    );
    expect(sale.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const trace_id = sale.body.trace_id as number;
    const lines = await waitUntil(() => {
      const found = fs
        .readFileSync(gw.log_file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request' && l.trace_id === trace_id);
      return found.length > 0 ? found : undefined;
    }, 'the request line');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      method: 'POST',
      route: '/api/process',
      url: '/api/process',
      http_status: 200,
      merchant_id: gw.merchant.merchant_id,
      status: 0,
      trace_id,
    });
    expect(typeof lines[0]!.duration_ms).toBe('number');
    const log = fs.readFileSync(gw.log_file, 'utf8');
    expect(log).not.toContain(VISA);
    expect(log).not.toContain('incoming request');
  });

  it('serves /metrics to the operator token only, with requests, latency, transactions, notifications and backlog', async () => {
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    await waitUntil(() => receiver.requestsTo('/notify').length >= 1, 'the notification');
    await gw.gateway.notifications.idle();
    const text = await scrape();
    expect(
      metric(text, 'http_requests_total', { route: '/api/process', method: 'POST', http_status: '200', api_status: '0' }),
    ).toBeGreaterThanOrEqual(1);
    expect(metric(text, 'http_request_duration_seconds_count', { route: '/api/process', method: 'POST' })).toBeGreaterThanOrEqual(1);
    expect(metric(text, 'paygate_transactions_total', { type: 'sale', status: 'approved' })).toBeGreaterThanOrEqual(1);
    expect(metric(text, 'paygate_notification_attempts_total', { outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
    expect(metric(text, 'paygate_notification_lag_seconds_count', {})).toBeGreaterThanOrEqual(1);
    expect(metric(text, 'paygate_backlog', { queue: 'notifications_pending' })).toBe(0);
    expect(metric(text, 'paygate_backlog', { queue: 'due_actions' })).not.toBeNull();
    expect(metric(text, 'paygate_notification_oldest_due_seconds', {})).toBe(0);
    if (kind === 'postgres') expect(metric(text, 'paygate_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    else expect(metric(text, 'paygate_db_pool_connections', { state: 'total' })).toBeNull();
    // A refused request counts under its API status; route patterns, never raw URLs, label the series.
    await postSigned(gw.url, '/api/process', saleA(gw.merchant, { amount: -1 }), gw.merchant.secret);
    const after = await scrape();
    expect(metric(after, 'http_requests_total', { route: '/api/process', api_status: '10' })).toBeGreaterThanOrEqual(1);
    await fetch(`${gw.url}/operator/payouts/123456`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const patterns = await scrape();
    expect(patterns).toContain('route="/operator/payouts/:trace_id"');
    expect(patterns).not.toContain('/operator/payouts/123456');
  });

  it('counts notifications waiting: the backlog rises while a merchant is down', async () => {
    receiver.setReply('/down', { status: 503, body: {} });
    await postSigned(gw.url, '/api/process', saleA(gw.merchant, { notification_url: `${receiver.url}/down` }), gw.merchant.secret);
    await waitUntil(() => receiver.requestsTo('/down').length >= 1, 'the failed attempt');
    await gw.gateway.notifications.idle();
    const text = await scrape();
    expect(metric(text, 'paygate_backlog', { queue: 'notifications_pending' })).toBeGreaterThanOrEqual(1);
    expect(metric(text, 'paygate_notification_attempts_total', { outcome: 'retry' })).toBeGreaterThanOrEqual(1);
  });
});
