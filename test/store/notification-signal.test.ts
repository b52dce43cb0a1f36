// Store.onNotificationCommitted, which wakes the delivery worker: it fires once a notification
// commits (inside a transaction: after the commit), never for a rolled-back one.
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { transactionFixture, withStoreAndMerchant } from '../support/store-fixture.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('notification commit signal on %s', (kind) => {
  let store: Store;
  let merchant_id: string;
  withStoreAndMerchant(kind, (started) => ({ store, merchant_id } = started));

  const notification = (trace_id: number) => ({
    trace_id,
    merchant_id,
    url: 'https://merchant.example/n',
    payload_json: '{}',
    state: 'pending' as const,
    next_attempt_at_ms: 1,
    lease_until_ms: null,
    lease_owner: null,
    last_error: null,
    created_at_ms: 1,
    updated_at_ms: 1,
  });

  it('fires after commit, not before, and not on rollback; resend fires too', async () => {
    let fired = 0;
    const off = store.onNotificationCommitted(() => {
      fired += 1;
    });
    const trace_id = (await store.transactions.insertIfAbsent(transactionFixture(merchant_id)))!;
    let id = 0;
    await store.transaction(async (tx) => {
      id = await tx.notifications.insert(notification(trace_id));
      expect(fired).toBe(0);
    });
    expect(fired).toBe(1);

    await expect(
      store.transaction(async (tx) => {
        await tx.notifications.insert(notification(trace_id));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(fired).toBe(1);

    await store.notifications.insert(notification(trace_id));
    expect(fired).toBe(2);
    expect(await store.notifications.reschedule(id, 5, 5)).toBe(true);
    expect(fired).toBe(3);
    expect(await store.notifications.reschedule(987_654_321, 5, 5)).toBe(false);
    expect(fired).toBe(3);
    off();
    await store.notifications.insert(notification(trace_id));
    expect(fired).toBe(3);
  });
});
