// The reserve → processor → finish lifecycle when the process is slower than the
// stuck-transaction sweep: the sweep closes the row as error, and the late finish answers
// what the row says instead of crashing or overwriting it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CardData } from '../../src/domain/cards.js';
import { finish, reserve } from '../../src/operations/lifecycle.js';
import { runDueWorkOnce } from '../../src/workers/due-work.js';
import { orderId } from '../support/bodies.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

describe('finish after the stuck-transaction sweep', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers the error the sweep recorded and leaves one notification', async () => {
    const deps = gw.gateway.deps;
    const now_ms = deps.clock.now_ms();
    const card = new CardData('4111111111111111', { month: 12, year: 2035 }, '568');
    const reservation = await reserve(deps, {
      merchant_id: gw.merchant.merchant_id,
      transaction_type: 'sale',
      order_id: orderId('slow'),
      request_fingerprint: 'f',
      api_version: '1.2',
      identity_kind: 'application_key',
      identity_value: gw.merchant.application_key,
      gateway_id: gw.merchant.gateway!,
      payment_processor: 'sandbox',
      payment_method: 'card',
      status: 'pending',
      amount_minor: 100,
      currency: 'USD',
      charge_amount_minor: 100,
      charge_currency: 'USD',
      pin: 'p',
      card_masked: card.masked,
      card_brand: 'VISA',
      card_exp: '12/2035',
      card_fingerprint: null,
      card_token: null,
      reference_id: null,
      return_url: null,
      notification_url: 'https://merchant.example/notify',
      psp_transaction_id: null,
      error_code: null,
      error_details: null,
      description: null,
      redirect_url: null,
      challenge_token_hash: null,
      challenge_expires_at_ms: null,
      challenge_mode: null,
      answer_json: null,
      variables_json: null,
      created_at_ms: now_ms,
      updated_at_ms: now_ms,
    });
    if (reservation.kind !== 'reserved') throw new Error(reservation.kind);
    // The processor call takes "longer" than stuck_processing_seconds.
    gw.gateway.clock.set_offset_ms(gw.gateway.clock.get_offset_ms() + (deps.config.schedules.stuck_processing_seconds + 1) * 1000);
    await runDueWorkOnce({ deps, poll_ms: 50 });
    expect((await deps.store.transactions.get(reservation.row.trace_id))?.status).toBe('error');

    const answer = await finish(
      deps,
      reservation.row,
      {
        kind: 'approved',
        psp_transaction_id: 'late',
        charge_amount_minor: 100,
        charge_currency: 'USD',
        error_code: '0',
        error_details: '[TEST] Approved',
      },
      {},
    );
    expect(answer.transaction_status).toBe('error');
    const row = await deps.store.transactions.get(reservation.row.trace_id);
    expect(row).toMatchObject({ status: 'error', psp_transaction_id: null });
    const notifications = await deps.store.notifications.listOfTransaction(reservation.row.trace_id);
    expect(notifications.map((n) => JSON.parse(n.payload_json).transaction_status)).toEqual(['error']);
  });
});
