// The store the held-writes tests share (held-writes.test.ts, held-batches.test.ts): a real store
// of either kind whose trace_id draws a test can queue (to make them collide), one merchant, and
// a listener on the notification signal.
import { randomTraceIds } from '../../src/domain/trace-id.js';
import { merchantFixture, openTestStore, type TestStore } from './store-fixture.js';
import type { StoreKind } from './stores.js';

/** Opens the store; `queued` trace_ids are drawn first, then random ones; `onSignal` runs at each notification signal. */
export async function openHeldTestStore(
  kind: StoreKind,
  queued: number[],
  onSignal: () => void,
): Promise<{ handle: TestStore; merchant_id: string }> {
  const handle = await openTestStore(kind, { trace_ids: { next: () => queued.shift() ?? randomTraceIds.next() } });
  const merchant = merchantFixture();
  await handle.store.merchants.insert(merchant);
  handle.store.onNotificationCommitted(onSignal);
  return { handle, merchant_id: merchant.merchant_id };
}
