// bench/compare.ts reads the rows bench/run.ts prints: if run.ts's table changes shape, the
// comparison would silently read nothing, so the parse is pinned here on a real printed table.
import { describe, expect, it } from 'vitest';
import { parseRows } from '../../bench/compare.js';

const PRINTED = `
| run | requests/s | p50 ms | p99 ms | CPU ms/req | peak RSS MB | ratio to ceiling | answers |
|---|---:|---:|---:|---:|---:|---:|---|
| ceiling: bare Fastify, same JSON | 13925 | 3.0 | 10.0 | 0.07 | 131 | 100.0% |  |
| sale on SQLite (CVV 568, new order_id each; group commit on) | 1207 | 39.0 | 75.0 | 0.83 | 267 | 8.7% | status 0: 12070; event-loop delay at most 32.4 ms |
| sale on PostgreSQL, 1 process, pinned to core 0 like the ceiling | 422 | 113.0 | 205.0 | 2.11 | 150 | 1.9% | status 0: 4219; PostgreSQL's own processes: 1.50 CPU ms/req; event-loop delay at most 3.9 ms |
| live sale at 80% of that throughput (723/s spread evenly, up to 500 connections) | 675 | 132.0 | 246.0 |  | 314 |  | status 0: 6752 (approved 6752) |

| target | measured | met |
|---|---:|---|
| SQLite sale p99 ≤ 30 ms at 50 connections (issue 29, item 1) | 75 ms; the floor 40 ms | **no** |
`;

describe('bench:compare reading bench/run.ts', () => {
  it('takes each figure row by name, and no header, separator or target row', () => {
    const rows = parseRows(PRINTED);
    expect([...rows.keys()]).toEqual([
      'ceiling: bare Fastify, same JSON',
      'sale on SQLite (CVV 568, new order_id each; group commit on)',
      'sale on PostgreSQL, 1 process, pinned to core 0 like the ceiling',
      'live sale at 80% of that throughput (723/s spread evenly, up to 500 connections)',
    ]);
    expect(rows.get('sale on SQLite (CVV 568, new order_id each; group commit on)')).toEqual({
      rps: 1207,
      p99_ms: 75,
      cpu_ms: 0.83,
      ratio: '8.7%',
      server_cpu_ms: null,
    });
    // PostgreSQL's rows name the server's own CPU in their answers.
    expect(rows.get('sale on PostgreSQL, 1 process, pinned to core 0 like the ceiling')).toMatchObject({
      cpu_ms: 2.11,
      server_cpu_ms: 1.5,
    });
    // A row without its own CPU figure keeps it empty rather than zero.
    expect(rows.get('live sale at 80% of that throughput (723/s spread evenly, up to 500 connections)')?.cpu_ms).toBeNull();
  });
});
