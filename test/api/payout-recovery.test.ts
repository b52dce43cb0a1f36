// A released payout whose process stopped while its processor was being asked (issue 3 §4 with
// issue 4 §5): it was written `in progress` first, so it is neither lost nor closed blindly. Due
// work asks the processor what became of it once it has been in progress longer than
// stuck_processing_seconds, and applies the answer through the state machine with its
// notification; a processor that cannot be asked leaves it for the operator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeStatus } from '../../src/transitions/transaction.js';
import type { Connector } from '../../src/connectors/connector.js';
import type { DueWorkDeps } from '../../src/workers/due-work.js';
import type { TransactionRow } from '../../src/store/schema.js';
import { runDueWorkOnce } from '../../src/workers/due-work.js';
import { postSigned } from '../support/client.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { payoutE } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

describe.each(storeKinds())('payouts interrupted during the processor call, on %s', (kind) => {
  let gw: TestGateway;
  let held: CreatedMerchant;
  beforeAll(async () => {
    // Only the test's own sweeps do due work: the gateway's worker, with the real connectors,
    // would otherwise race the sweep that cannot ask the processor (CI once saw it settle the
    // payout between two reads). Its first pass comes a minute after start, after these tests.
    gw = await startTestGateway(kind, { env: { PAYGATE_DUE_WORK_POLL_MS: '60000' } });
    held = await gw.createMerchant();
    expect(await gw.gateway.deps.store.merchants.setGatewayHoldPayouts(held.gateway!, true)).toBe(true);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const deps = () => gw.gateway.deps;
  const stuck_ms = () => deps().config.schedules.stuck_processing_seconds * 1000;
  const advance = (ms: number) => gw.gateway.clock.set_offset_ms(gw.gateway.clock.get_offset_ms() + ms);
  const sweep = (connectors: DueWorkDeps['connectors'] = deps().connectors) =>
    runDueWorkOnce({ deps: { ...deps(), connectors }, poll_ms: 50 });
  /** Signed requests carry the gateway's (moved) sandbox clock. */
  const timestamp = () => Math.floor(deps().clock.now_ms() / 1000);
  const statusesNotified = async (trace_id: number) =>
    (await deps().store.notifications.listOfTransaction(trace_id)).map(
      (n) => (JSON.parse(n.payload_json) as { transaction_status: string }).transaction_status,
    );

  /** A held payout, released by the operator, whose process then died before the processor answered. */
  async function interruptedPayout(amount: number): Promise<TransactionRow> {
    const answer = await postSigned(gw.url, '/api/process', payoutE(held, { amount, timestamp: timestamp() }), held.secret);
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'requested' });
    const trace_id = answer.body.trace_id as number;
    const now_ms = deps().clock.now_ms();
    await deps().store.transaction(async (tx) => {
      for (const to of ['authorized', 'in progress'] as const) {
        const row = (await tx.transactions.lock(trace_id))!;
        expect((await changeStatus(tx, row, { to, reason: 'released by the operator (test)' }, now_ms)).kind).toBe('changed');
      }
    });
    return (await deps().store.transactions.get(trace_id))!;
  }

  it('asks the processor once the payout has been in progress too long, and applies its answer with a notification', async () => {
    const approved = await interruptedPayout(2500);
    const rejected = await interruptedPayout(1400);
    // Not yet: the process might still be waiting for the processor.
    await sweep();
    expect((await deps().store.transactions.get(approved.trace_id))?.status).toBe('in progress');

    advance(stuck_ms() + 1000);
    await sweep();
    expect(await deps().store.transactions.get(approved.trace_id)).toMatchObject({
      status: 'approved',
      error_code: '0',
      psp_transaction_id: expect.stringMatching(/^sbx_/),
    });
    expect(await deps().store.transactions.get(rejected.trace_id)).toMatchObject({
      status: 'rejected',
      psp_transaction_id: expect.any(String),
    });
    expect(await statusesNotified(approved.trace_id)).toEqual(['requested', 'authorized', 'in progress', 'approved']);
    expect(await statusesNotified(rejected.trace_id)).toEqual(['requested', 'authorized', 'in progress', 'rejected']);
    // The request's stored answer stays what was answered (requested): a replay repeats it.
    const replay = await postSigned(
      gw.url,
      '/api/process',
      payoutE(held, { amount: 2500, order_id: approved.order_id, timestamp: timestamp() }),
      held.secret,
    );
    expect(replay.body).toMatchObject({ status: 0, trace_id: approved.trace_id, transaction_status: 'requested' });

    // Settled once: a second sweep changes nothing and notifies nothing more.
    await sweep();
    expect(await statusesNotified(approved.trace_id)).toHaveLength(4);
  });

  it('a processor still working on it (sandbox 1313) leaves it in progress with its reference, and its later result settles it', async () => {
    const later = await interruptedPayout(1313);
    advance(stuck_ms() + 1000);
    await sweep();
    const waiting = await deps().store.transactions.get(later.trace_id);
    expect(waiting).toMatchObject({ status: 'in progress', psp_transaction_id: expect.stringMatching(/^sbx_/) });
    advance(deps().config.schedules.sandbox_async_settle_seconds * 1000 + 1000);
    await sweep();
    expect((await deps().store.transactions.get(later.trace_id))?.status).toBe('approved');
    expect(await statusesNotified(later.trace_id)).toEqual(['requested', 'authorized', 'in progress', 'approved']);
  });

  it('a processor that cannot be asked leaves the payout in progress for the operator', async () => {
    const unknown = await interruptedPayout(2600);
    advance(stuck_ms() + 1000);
    // The sandbox's own connector, except that its processor cannot be reached when asked.
    const cannot_ask = async (store: Parameters<DueWorkDeps['connectors']['forGatewayId']>[0], gateway_id: string) => {
      const found = await deps().connectors.forGatewayId(store, gateway_id);
      if (!found) return null;
      const connector: Connector = Object.create(found.connector, {
        lookup: { value: async () => ({ kind: 'unavailable', reason: 'unreachable (test)' }) },
      }) as Connector;
      return { gateway: found.gateway, connector };
    };
    await sweep({ forGatewayId: cannot_ask });
    expect(await deps().store.transactions.get(unknown.trace_id)).toMatchObject({ status: 'in progress', psp_transaction_id: null });
    expect(await statusesNotified(unknown.trace_id)).toEqual(['requested', 'authorized', 'in progress']);
  });
});
