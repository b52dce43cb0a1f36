// Reading the Prometheus text format a gateway's /metrics answers, for tests: its samples (name,
// labels, value) and the type each metric family declares. Enough of the format for prom-client's
// output: one sample a line, label values quoted with \" and \\ and \n escaped.
import { expect } from 'vitest';
import { ADMIN_TOKEN } from './gateway.js';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function samples(text: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL))
      labels[name!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    found.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return found;
}

/** Each metric family's declared type (# TYPE lines): counter, gauge, histogram... */
export function metricTypes(text: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (match) types.set(match[1]!, match[2]!);
  }
  return types;
}

/** The sum of the samples of `name` whose labels include all of `labels` (0 when none). */
export function total(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** GET /metrics of a gateway with the operator's token. */
export async function scrapeMetrics(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(response.status).toBe(200);
  return response.text();
}
