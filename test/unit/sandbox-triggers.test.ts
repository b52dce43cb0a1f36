// The flow triggers' one table (domain/sandbox-triggers.ts) against what uses it: every trigger has
// a flow (operations/sandbox-flows.ts) and no flow is unnamed, the names are unique and fit the
// endpoint's path, and docs/triggers.md lists each with its summary, so the page, `--list` and the
// endpoint cannot disagree.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { endLabel, findTrigger, SANDBOX_TRIGGERS } from '../../src/domain/sandbox-triggers.js';
import { FLOWS } from '../../src/operations/sandbox-flows.js';

describe('sandbox triggers', () => {
  it('each trigger has its flow, and each flow its trigger; names are unique, path-safe and found', () => {
    const names = SANDBOX_TRIGGERS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(FLOWS).sort()).toEqual([...names].sort());
    for (const name of names) {
      expect(name).toMatch(/^[a-z0-9_]+\.[a-z0-9_]+$/);
      expect(findTrigger(name)?.name).toBe(name);
    }
    expect(findTrigger('sale.nothing')).toBeNull();
  });

  it('the status changes issue 28 names are all there', () => {
    const ends = SANDBOX_TRIGGERS.map((t) => endLabel(t.ends_in));
    for (const end of [
      'sale approved',
      'sale rejected',
      'refund approved',
      'payout approved',
      'payout rejected',
      'payout reversed',
      'sale chargeback',
      'sale reversed',
      'subscription.renewed',
      'subscription.payment_failed',
      'subscription.canceled',
    ]) {
      expect(ends).toContain(end);
    }
    expect(findTrigger('sale.pending_then_approved')).toMatchObject({ wait: 'async_settle', ends_in: { status: 'approved' } });
    expect(findTrigger('sale.3ds_timed_out')).toMatchObject({ wait: 'issuer_timeout', ends_in: { status: 'rejected' } });
  });

  it('docs/triggers.md has one row per trigger, with its summary, in the same order', () => {
    const page = fs.readFileSync('docs/triggers.md', 'utf8');
    const section = page.slice(page.indexOf('\n## The triggers\n'), page.indexOf('\n## ', page.indexOf('\n## The triggers\n') + 1));
    const rows = [...section.matchAll(/^\| `([a-z0-9_.]+)` \| ([^|]+) \|/gm)].map((m) => ({ name: m[1]!, summary: m[2]!.trim() }));
    expect(rows).toEqual(SANDBOX_TRIGGERS.map((t) => ({ name: t.name, summary: t.summary })));
  });
});
