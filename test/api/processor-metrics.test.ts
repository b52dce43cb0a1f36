// Per-processor metrics (issue 30 item 5, docs/operations.md §2), through a live gateway and the
// fake Checkout.com: every request the gateway sent to the processor is counted once, by
// connector, gateway and result (the fake's own record of what it answered is the reference),
// with its latency; time-outs, cut connections and 5xx answers also count as errors; processors'
// webhooks are counted by outcome. Then the example alerting rules and Grafana dashboard in
// docs/monitoring/ are read and every metric they name, with every label they match on, must be
// one this running gateway serves: they cannot drift from the code.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { saleA } from '../support/bodies.js';
import { FAILURE_ENV, type LiveCheckout, liveSale, startLiveCheckout } from '../support/live-checkout.js';
import { withLiveGateway } from '../support/live-gateway.js';
import { metricTypes, samples, scrapeMetrics, total } from '../support/metrics-text.js';
import { waitUntil } from '../support/notification-merchant.js';
import { storeKinds } from '../support/stores.js';

/** What the fake's record of a request says the gateway should have counted it as. */
function resultOf(request: { readonly status: number | null; readonly failure: string | null }): string {
  if (request.status !== null) return `${Math.floor(request.status / 100)}xx`;
  return request.failure === 'timeout' ? 'timeout' : 'network';
}

function tally(results: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[result] = (counts[result] ?? 0) + 1;
  return counts;
}

describe.each(storeKinds())('per-processor metrics on %s', (kind) => {
  let live: LiveCheckout;
  withLiveGateway(
    () => startLiveCheckout(kind, { env: FAILURE_ENV }),
    (started) => (live = started),
  );
  const sale = (overrides: Record<string, unknown> = {}) => liveSale(live, saleA(live.merchant, { gateway: live.gateway, ...overrides }));
  const scrape = () => scrapeMetrics(live.gw.url);

  /** The gateway's count of its calls to this gateway's processor, by result. */
  const counted = (text: string): Record<string, number> => {
    const counts: Record<string, number> = {};
    for (const s of samples(text))
      if (s.name === 'paygate_processor_requests_total' && s.labels.gateway_id === live.gateway && s.value > 0) {
        expect(s.labels.connector).toBe('checkout');
        counts[s.labels.result!] = s.value;
      }
    return counts;
  };

  it('counts every call to the processor by connector, gateway and result, with its latency; time-outs, resets and 5xx as errors', async () => {
    const approved = await live.process(sale({ amount: 3100 }));
    expect(approved.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    // The processor's webhooks would settle the failed ones before their answer is given up on.
    live.fake.holdEvents(true);
    live.fake.failNext('POST /payments', 'timeout');
    const timed_out = await live.process(sale({ amount: 3200 }));
    expect(timed_out.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    live.fake.failNext('POST /payments', 'http_500');
    live.fake.failNext('POST /payments', 'http_503');
    const server_errors = await live.process(sale({ amount: 3300 }));
    expect(server_errors.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    live.fake.failNext('POST /payments', 'reset_after_processing');
    const reset = await live.process(sale({ amount: 3400 }));
    expect(reset.body).toMatchObject({ status: 0, transaction_status: 'pending' });
    // Each is settled by the lookups (more calls, counted too).
    await live.settled(timed_out.body.trace_id as number, 'approved');
    await live.settled(server_errors.body.trace_id as number, 'error');
    await live.settled(reset.body.trace_id as number, 'approved');
    live.fake.holdEvents(false);
    await live.fake.releaseHeldEvents();

    // Once nothing is in flight, the gateway's counts are exactly the fake's record of what it received.
    const text = await waitUntil(async () => {
      const scraped = await scrape();
      const expected = tally(live.fake.requests.map(resultOf));
      return JSON.stringify(counted(scraped)) === JSON.stringify(expected) ? scraped : undefined;
    }, 'the counts of the fake');
    const expected = tally(live.fake.requests.map(resultOf));
    expect(expected).toMatchObject({ '2xx': expect.any(Number), '5xx': 2, timeout: 1, network: 1 });
    const labels = { connector: 'checkout', gateway_id: live.gateway };
    const requests = live.fake.requests.length;
    expect(total(text, 'paygate_processor_request_duration_seconds_count', labels)).toBe(requests);
    expect(total(text, 'paygate_processor_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(requests);
    expect(total(text, 'paygate_processor_errors_total', { ...labels, kind: 'timeout' })).toBe(1);
    expect(total(text, 'paygate_processor_errors_total', { ...labels, kind: 'network' })).toBe(1);
    expect(total(text, 'paygate_processor_errors_total', { ...labels, kind: 'http_5xx' })).toBe(2);
    expect(total(text, 'paygate_processor_errors_total', { ...labels, kind: 'http_4xx' })).toBe(expected['4xx'] ?? 0);
  });

  it('counts processor webhooks by connector, gateway and outcome: applied or unchanged, duplicate, refused, unknown gateway', async () => {
    const answer = await live.process(sale({ amount: 3500 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    const payment_id = answer.body.transaction_id as string;
    const captured = await live.fake.waitForEvent((e) => e.payment_id === payment_id && e.type === 'payment_captured');
    const before = await scrape();
    const outcome = (text: string, name: string, gateway_id = live.gateway, connector = 'checkout') =>
      total(text, 'paygate_processor_webhooks_total', { connector, gateway_id, outcome: name });

    expect(await live.fake.redeliver(captured.id)).toBe(200);
    expect(await live.fake.sendRaw(captured.body, 'f'.repeat(64))).toBe(401);
    const post = (path: string) =>
      fetch(`${live.gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await post(`/webhooks/checkout/${'0'.repeat(32)}`)).status).toBe(404);
    expect((await post('/webhooks/no-such-processor/whatever')).status).toBe(404);

    const after = await scrape();
    expect(outcome(after, 'duplicate') - outcome(before, 'duplicate')).toBe(1);
    expect(outcome(after, 'refused') - outcome(before, 'refused')).toBe(1);
    // The URL is anyone's: no label takes an unknown gateway's id or an unknown connector's name.
    expect(outcome(after, 'unknown_gateway', '') - outcome(before, 'unknown_gateway', '')).toBe(1);
    expect(outcome(after, 'unknown_gateway', '', 'unknown') - outcome(before, 'unknown_gateway', '', 'unknown')).toBe(1);
    expect(after).not.toContain('no-such-processor');
    expect(outcome(after, 'applied') + outcome(after, 'unchanged')).toBeGreaterThanOrEqual(1);
    // Every delivery the fake made to the gateway, and the forged one, is counted once.
    const delivered = await waitUntil(async () => {
      const scraped = await scrape();
      const deliveries = live.fake.events.flatMap((e) => e.deliveries).filter((d) => d.status !== null).length;
      return total(scraped, 'paygate_processor_webhooks_total', { gateway_id: live.gateway }) === deliveries + 1 ? deliveries : undefined;
    }, 'every delivery counted');
    expect(delivered).toBeGreaterThanOrEqual(2);
  });

  it('the alerting rules and the Grafana dashboard in docs/monitoring/ name only metrics and labels this gateway serves', async () => {
    // Series of every processor family, whatever ran before: a call answered 500 (retried), a sale, its webhooks.
    live.fake.failNext('POST /payments', 'http_500');
    const answer = await live.process(sale({ amount: 3600 }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'approved' });
    await live.fake.waitForEvent((e) => e.payment_id === answer.body.transaction_id && e.type === 'payment_captured');
    const text = await scrape();
    const alerts = YAML.parse(fs.readFileSync('docs/monitoring/alerts.yml', 'utf8')) as {
      groups: {
        name: string;
        rules: { alert: string; expr: string; for?: string; labels: { severity: string }; annotations: Record<string, string> }[];
      }[];
    };
    const anchors = fs
      .readFileSync('docs/production.md', 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('#'))
      .map((line) =>
        line
          .replace(/^#+\s*/, '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      );
    const alert_exprs = alerts.groups.flatMap((g) => g.rules).map((r) => r.expr);
    for (const rule of alerts.groups.flatMap((g) => g.rules)) {
      expect(rule.alert).toMatch(/^Paygate[A-Za-z0-9]+$/);
      expect(['page', 'ticket']).toContain(rule.labels.severity);
      expect(rule.annotations.summary, rule.alert).toBeTruthy();
      expect(rule.annotations.runbook, rule.alert).toMatch(/^docs\/production\.md#/);
      // Its runbook link lands on a heading of docs/production.md (GitHub's anchors).
      expect(anchors, rule.alert).toContain(rule.annotations.runbook!.slice('docs/production.md#'.length));
    }
    const names = new Set(alerts.groups.flatMap((g) => g.rules).map((r) => r.alert));
    for (const wanted of [
      'PaygateProcessorErrorRate',
      'PaygateProcessorLatencyP99',
      'PaygateNotificationsLate',
      'PaygateDueActionsBacklog',
      'PaygateWebhooksRefused',
      'PaygateInstanceDown',
    ])
      expect(names, wanted).toContain(wanted);

    const dashboard = JSON.parse(fs.readFileSync('docs/monitoring/grafana-dashboard.json', 'utf8')) as Dashboard;
    expect(dashboard).toMatchObject({ title: expect.any(String), uid: expect.any(String), schemaVersion: expect.any(Number) });
    const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const dashboard_exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(dashboard_exprs.length).toBeGreaterThanOrEqual(8);
    for (const panel of panels) if (panel.type !== 'row') expect(panel.targets?.length, panel.title).toBeGreaterThanOrEqual(1);
    const variable_queries = dashboard.templating.list
      .filter((v) => v.type === 'query')
      .map((v) => (typeof v.query === 'string' ? v.query : v.query.query));

    const types = metricTypes(text);
    const all = samples(text);
    const referenced = [...alert_exprs, ...dashboard_exprs, ...variable_queries].flatMap(selectorsOf);
    expect(referenced.length).toBeGreaterThan(10);
    for (const { name, labels } of referenced) {
      // `up` is Prometheus's own series of each scrape (the instance-down alert).
      if (name === 'up') continue;
      const family = familyOf(name, types);
      expect(family, `${name} is served by /metrics`).not.toBeNull();
      const of_family = all.filter((s) => s.name === name);
      if (name.startsWith('paygate_processor_')) expect(of_family.length, `${name} has series`).toBeGreaterThan(0);
      // A family with no series yet (the PostgreSQL pool on SQLite) has no labels to check.
      for (const label of labels)
        if (of_family.length > 0)
          expect(
            of_family.some((s) => label in s.labels),
            `${name} has the label ${label}`,
          ).toBe(true);
    }
  });
});

interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly targets?: { readonly expr: string }[];
  readonly panels?: Panel[];
}
interface Dashboard {
  readonly panels: Panel[];
  readonly templating: { readonly list: { readonly type: string; readonly query: string | { readonly query: string } }[] };
}

/** The family a series name belongs to: itself, or a histogram's (name_bucket, _sum, _count). */
function familyOf(name: string, types: ReadonlyMap<string, string>): string | null {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return base !== name && types.get(base) === 'histogram' ? base : null;
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset']);
/** Labels Prometheus adds to every series it scrapes (the target's), never in /metrics itself. */
const TARGET_LABELS = new Set(['instance', 'job']);

/**
 * The series a PromQL expression (or a Grafana label_values(...) query) selects: each metric name
 * and the label names it matches on, and those it groups by. Strings, ranges, grouping clauses
 * and label matchers are taken out first; what is left that is not a function call or a keyword
 * is a metric name.
 */
function selectorsOf(expr: string): { name: string; labels: string[] }[] {
  const grouped = [...expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !TARGET_LABELS.has(l)),
  );
  const label_values = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{[^}]*\})?\s*,\s*([a-zA-Z_]+)\s*\)$/.exec(expr.trim());
  if (label_values) return [{ name: label_values[1]!, labels: [label_values[2]!] }];
  const found: { name: string; labels: string[] }[] = [];
  const cleaned = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  for (const match of cleaned.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?\s*(\()?/g)) {
    const [, name, matchers, call] = match;
    if (call || PROMQL_WORDS.has(name!)) continue;
    // Grouping labels are checked on every series the expression selects that has series.
    const labels = [...(matchers ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)]
      .map((m) => m[1]!)
      .filter((l) => !TARGET_LABELS.has(l));
    found.push({ name: name!, labels: [...labels, ...grouped.filter((l) => l !== 'le' || name!.endsWith('_bucket'))] });
  }
  return found;
}
