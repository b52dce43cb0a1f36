// The bound on the notification worker's DNS lookups (outbound/lookup-gate.ts, issue 29 item 4): a
// resolver the test controls stands in for getaddrinfo, whose lookups of a name with a dead name
// server hang for seconds. Lookups of one name are shared, at most max_in_flight names are looked
// up at once, a bounded number wait their turn and the rest fail at once, a failed name is
// answered from memory for a while, and at most max_waiting callers wait in all (each holds one of
// the notification worker's slots); through postJson, a burst of notifications to hanging names
// keeps the lookups started and waiting within those bounds, and the rest fail at once, to be sent
// again on their schedule.
import type dns from 'node:dns';
import { describe, expect, it } from 'vitest';
import { LookupGate, type Resolver } from '../../src/outbound/lookup-gate.js';
import { postJson } from '../../src/outbound/post.js';

/** A resolver whose lookups wait until the test answers them. */
function heldResolver() {
  const held: { hostname: string; answer: (error: NodeJS.ErrnoException | null) => void }[] = [];
  const resolver: Resolver = (hostname, _options, callback) => {
    held.push({
      hostname,
      answer: (error) => callback(error, error ? [] : [{ address: '203.0.113.10', family: 4 }]),
    });
  };
  return { resolver, held };
}

const LIMITS = { max_in_flight: 2, max_queued: 1, max_waiters_per_host: 3, failure_cache_ms: 30_000, max_waiting: 100 };
const lookupOf = (gate: LookupGate, hostname: string) =>
  new Promise<{ error: NodeJS.ErrnoException | null; addresses: dns.LookupAddress[] }>((resolve) =>
    gate.lookup(hostname, {}, (error, addresses) => resolve({ error, addresses })),
  );

describe('the lookup gate', () => {
  it('shares one lookup among the requests for the same name, up to its waiters', async () => {
    const { resolver, held } = heldResolver();
    const gate = new LookupGate(LIMITS, resolver);
    const waiting = [lookupOf(gate, 'shop.example'), lookupOf(gate, 'shop.example'), lookupOf(gate, 'shop.example')];
    expect((await lookupOf(gate, 'shop.example')).error?.code).toBe('ELOOKUPBUSY');
    expect(held).toHaveLength(1);
    held[0]!.answer(null);
    for (const answer of await Promise.all(waiting))
      expect(answer).toEqual({ error: null, addresses: [{ address: '203.0.113.10', family: 4 }] });
    expect(gate.in_flight).toBe(0);
  });

  it('looks up at most max_in_flight names at once; the next waits its turn, and past the queue one fails at once', async () => {
    const { resolver, held } = heldResolver();
    const gate = new LookupGate(LIMITS, resolver);
    const first = lookupOf(gate, 'a.example');
    void lookupOf(gate, 'b.example');
    const third = lookupOf(gate, 'c.example');
    expect([gate.in_flight, gate.queued]).toEqual([2, 1]);
    expect((await lookupOf(gate, 'd.example')).error?.code).toBe('ELOOKUPBUSY');
    expect(held.map((h) => h.hostname)).toEqual(['a.example', 'b.example']);
    held[0]!.answer(null);
    await first;
    // a.example's slot went to c.example, which waited.
    expect(held.map((h) => h.hostname)).toEqual(['a.example', 'b.example', 'c.example']);
    expect([gate.in_flight, gate.queued]).toEqual([2, 0]);
    held[2]!.answer(null);
    expect((await third).error).toBeNull();
  });

  it('answers a name that failed from memory for failure_cache_ms, then asks again', async () => {
    const { resolver, held } = heldResolver();
    let now_ms = 1_000;
    const gate = new LookupGate(LIMITS, resolver, () => now_ms);
    const failed = lookupOf(gate, 'dead.example');
    held[0]!.answer(Object.assign(new Error('queryA ETIMEOUT dead.example'), { code: 'EAI_AGAIN' }));
    expect((await failed).error?.code).toBe('EAI_AGAIN');
    now_ms += 29_999;
    expect((await lookupOf(gate, 'dead.example')).error?.code).toBe('EAI_AGAIN');
    expect(held).toHaveLength(1);
    now_ms += 1;
    void lookupOf(gate, 'dead.example');
    expect(held).toHaveLength(2);
  });

  it('holds at most max_waiting callers over all names, so hanging names cannot take every slot of the worker', async () => {
    const { resolver, held } = heldResolver();
    const gate = new LookupGate({ ...LIMITS, max_in_flight: 2, max_queued: 10, max_waiters_per_host: 10, max_waiting: 4 }, resolver);
    // Two names hang: three callers wait on the first, one on the second.
    const waiting = [lookupOf(gate, 'hang-a.example'), lookupOf(gate, 'hang-a.example'), lookupOf(gate, 'hang-a.example')];
    waiting.push(lookupOf(gate, 'hang-b.example'));
    expect(gate.waiting).toBe(4);
    // The fifth caller, for a name already being looked up or a new one, is refused at once.
    expect((await lookupOf(gate, 'hang-a.example')).error?.code).toBe('ELOOKUPBUSY');
    expect((await lookupOf(gate, 'shop.example')).error?.code).toBe('ELOOKUPBUSY');
    expect(held.map((h) => h.hostname)).toEqual(['hang-a.example', 'hang-b.example']);
    // Once a hanging name gives up, its callers are answered and the gate takes callers again.
    held[0]!.answer(Object.assign(new Error('queryA ETIMEOUT hang-a.example'), { code: 'EAI_AGAIN' }));
    for (const answer of (await Promise.all(waiting.slice(0, 3))).map((a) => a.error?.code)) expect(answer).toBe('EAI_AGAIN');
    expect(gate.waiting).toBe(1);
    const shop = lookupOf(gate, 'shop.example');
    expect(gate.waiting).toBe(2);
    held[2]!.answer(null);
    expect((await shop).error).toBeNull();
    expect(gate.waiting).toBe(1);
  });

  it('through postJson: a burst of notifications to hanging names keeps two lookups started and one waiting; the rest fail at once', async () => {
    const { resolver, held } = heldResolver();
    const gate = new LookupGate(LIMITS, resolver);
    const policy = { timeout_ms: 200, max_reply_bytes: 1024, allow_private: true, lookups: gate };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => postJson(`http://hang-${i}.example/notify`, '{}', policy)));
    expect(held).toHaveLength(2);
    expect([gate.in_flight, gate.queued]).toEqual([2, 1]);
    expect(results.filter((r) => r.kind === 'failed' && r.reason === 'timed out')).toHaveLength(3);
    expect(results.filter((r) => r.kind === 'failed' && r.reason.startsWith('DNS lookups busy'))).toHaveLength(17);
  });
});
