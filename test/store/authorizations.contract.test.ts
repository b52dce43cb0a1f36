// The store contract of migration 0018 (decisions §16), on a real SQLite file and a real
// PostgreSQL database: one capture or void per authorization (the key refuses a second), the
// action's compare-and-set, the sweep's and the expiry's listings, the CHECKs that keep an action
// within its authorization, and disputes listed by deadline with those without one last.
import { describe, expect, it } from 'vitest';
import type { AuthorizationActionRow } from '../../src/domain/authorization-record.js';
import type { DisputeRow } from '../../src/domain/dispute-record.js';
import type { Store } from '../../src/store/store.js';
import { transactionFixture, uniqueId, withStoreAndMerchant } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

const NOW = 1_800_000_000_000;

describe.each(storeKinds())('authorizations and disputes on %s', (kind) => {
  let store: Store;
  let merchant_id: string;
  withStoreAndMerchant(kind, (started) => ({ store, merchant_id } = started));

  async function authorization(status: 'authorized' | 'approved' = 'authorized', created_at_ms = NOW): Promise<number> {
    const row = await store.transactions.reserve(
      transactionFixture(merchant_id, {
        transaction_type: 'authorize',
        status,
        amount_minor: 1000,
        created_at_ms,
        updated_at_ms: created_at_ms,
      }),
    );
    return row!.trace_id;
  }
  function action(trace_id: number, overrides: Partial<AuthorizationActionRow> = {}): Omit<AuthorizationActionRow, 'attempts'> {
    return {
      trace_id,
      action: 'capture',
      authorized_minor: 1000,
      amount_minor: 600,
      state: 'requested',
      origin: 'merchant',
      agent: null,
      idempotency_key: `paygate-capture-${trace_id}`,
      psp_action_id: null,
      requested_at_ms: NOW,
      updated_at_ms: NOW,
      ...overrides,
    };
  }

  it('one action per authorization: the second, of either kind, is refused and the first is kept', async () => {
    const trace_id = await authorization();
    expect(await store.authorizations.reserveAction(action(trace_id))).toBe(true);
    expect(await store.authorizations.reserveAction(action(trace_id, { action: 'void', amount_minor: 1000 }))).toBe(false);
    expect(await store.authorizations.reserveAction(action(trace_id, { amount_minor: 300 }))).toBe(false);
    expect(await store.authorizations.getAction(trace_id)).toMatchObject({
      action: 'capture',
      amount_minor: 600,
      state: 'requested',
      attempts: 0,
    });
  });

  it('an action changes only from the state it is in; a refused one is removed only from its state', async () => {
    const trace_id = await authorization();
    await store.authorizations.reserveAction(action(trace_id));
    expect(await store.authorizations.updateAction(trace_id, 'accepted', { state: 'done' })).toBe(false);
    expect(await store.authorizations.updateAction(trace_id, 'requested', { state: 'accepted', psp_action_id: 'act_1' })).toBe(true);
    expect(await store.authorizations.deleteAction(trace_id, 'requested')).toBe(false);
    expect(await store.authorizations.getAction(trace_id)).toMatchObject({ state: 'accepted', psp_action_id: 'act_1' });
    expect(await store.authorizations.deleteAction(trace_id, 'accepted')).toBe(true);
    expect(await store.authorizations.getAction(trace_id)).toBeNull();
  });

  it('a capture above the authorized amount, or an unknown state or origin, is refused by the database', async () => {
    const trace_id = await authorization();
    await expect(store.authorizations.reserveAction(action(trace_id, { amount_minor: 1001 }))).rejects.toThrow();
    await expect(store.authorizations.reserveAction(action(trace_id, { state: 'maybe' as 'done' }))).rejects.toThrow();
    await expect(store.authorizations.reserveAction(action(trace_id, { origin: 'someone' as 'merchant' }))).rejects.toThrow();
    expect(await store.authorizations.getAction(trace_id)).toBeNull();
  });

  it('the sweep lists unsettled actions older than asked, oldest first; done ones never', async () => {
    const base = NOW + 10_000_000;
    const old = await authorization();
    const older = await authorization();
    const recent = await authorization();
    const done = await authorization();
    await store.authorizations.reserveAction(action(old, { updated_at_ms: base - 5_000 }));
    await store.authorizations.reserveAction(action(older, { updated_at_ms: base - 9_000, state: 'accepted' }));
    await store.authorizations.reserveAction(action(recent, { updated_at_ms: base - 100 }));
    await store.authorizations.reserveAction(action(done, { updated_at_ms: base - 9_500, state: 'done' }));
    const listed = (await store.authorizations.listUnsettled(base - 1_000, 100))
      .map((a) => a.trace_id)
      .filter((id) => [old, older, recent, done].includes(id));
    expect(listed).toEqual([older, old]);
  });

  it('the expiry lists authorizations still authorized, made before the cut-off, with no action asked', async () => {
    const cut_off = NOW - 1_000;
    const expired = await authorization('authorized', NOW - 50_000);
    const with_action = await authorization('authorized', NOW - 40_000);
    const young = await authorization('authorized', NOW);
    const captured = await authorization('approved', NOW - 60_000);
    await store.authorizations.reserveAction(action(with_action));
    const sale = await store.transactions.reserve(transactionFixture(merchant_id, { status: 'authorized', created_at_ms: NOW - 70_000 }));
    const listed = (await store.authorizations.listExpired(cut_off, 100)).map((t) => t.trace_id);
    expect(listed).toContain(expired);
    for (const other of [with_action, young, captured, sale!.trace_id]) expect(listed).not.toContain(other);
  });

  function dispute(trace_id: number, overrides: Partial<DisputeRow> = {}): DisputeRow {
    return {
      gateway_id: `gw-${merchant_id}`,
      psp_dispute_id: uniqueId('dsp'),
      trace_id,
      merchant_id,
      stage: 'evidence_required',
      amount_minor: 500,
      currency: 'USD',
      reason: 'fraudulent',
      evidence_due_at_ms: NOW + 86_400_000,
      opened_at_ms: NOW,
      updated_at_ms: NOW,
      ...overrides,
    };
  }

  it('a dispute is recorded once per processor id, updated, and listed by deadline with those without one last', async () => {
    const trace_id = await authorization('approved');
    const late = dispute(trace_id, { evidence_due_at_ms: NOW + 9 * 86_400_000 });
    const soon = dispute(trace_id, { evidence_due_at_ms: NOW + 86_400_000 });
    const none = dispute(trace_id, { evidence_due_at_ms: null });
    const won = dispute(trace_id, { stage: 'won', evidence_due_at_ms: NOW });
    for (const row of [late, none, soon, won]) expect(await store.disputes.insertIfAbsent(row)).toBe(true);
    expect(await store.disputes.insertIfAbsent({ ...soon, amount_minor: 1 })).toBe(false);
    await store.disputes.update(soon.gateway_id, soon.psp_dispute_id, { stage: 'under_review', updated_at_ms: NOW + 1 });
    expect(await store.disputes.get(soon.gateway_id, soon.psp_dispute_id)).toMatchObject({ stage: 'under_review', amount_minor: 500 });
    const open = (await store.disputes.list({ merchant_id, stages: ['opened', 'evidence_required', 'under_review'] }, 50)).map(
      (d) => d.psp_dispute_id,
    );
    expect(open).toEqual([soon.psp_dispute_id, late.psp_dispute_id, none.psp_dispute_id]);
    expect((await store.disputes.list({ merchant_id, stages: [] }, 50)).map((d) => d.psp_dispute_id)).toContain(won.psp_dispute_id);
    expect(await store.disputes.list({ merchant_id: 'someone-else', stages: [] }, 50)).toEqual([]);
    expect((await store.disputes.listForTransaction(trace_id, 10)).length).toBe(4);
  });
});
