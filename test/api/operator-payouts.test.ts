// The payout lifecycle of spec §3.1 through the operator API (PAYGATE_ADMIN_TOKEN): a gateway
// holding payouts, approve / submit / cancel / reject / reverse, each allowed transition
// succeeding with its notification and every other one refused with 409, changing nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { saleA } from '../support/bodies.js';
import { nowSeconds, postSigned } from '../support/client.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.js';
import { direct, payoutD, payoutE } from '../support/payout-bodies.js';
import { storeKinds } from '../support/stores.js';

type Fixture =
  'requested' | 'authorized' | 'in progress' | 'approved' | 'rejected' | 'error' | 'cancelled' | 'reversed' | 'pending' | 'pending_async';
type Action = 'approve' | 'submit' | 'cancel' | 'reject' | 'reverse';

/** Which statuses each action accepts (docs/payouts.md); every other pair must be refused. */
const ACCEPTS: Readonly<Record<Action, readonly Fixture[]>> = {
  approve: ['requested'],
  submit: ['authorized'],
  cancel: ['requested', 'authorized'],
  reject: ['requested', 'authorized'],
  reverse: ['approved'],
};
const FIXTURES: readonly Fixture[] = [
  'requested',
  'authorized',
  'in progress',
  'approved',
  'rejected',
  'error',
  'cancelled',
  'reversed',
  'pending',
  'pending_async',
];
const ACTIONS = Object.keys(ACCEPTS) as Action[];

interface OpAnswer {
  readonly http_status: number;
  readonly body: Record<string, unknown>;
}

describe.each(storeKinds())('operator payouts on %s', (kind) => {
  let gw: TestGateway;
  /** Its gateway holds payouts for approval. */
  let held: CreatedMerchant;
  /** The clock skew after the sandbox clock was moved (last test only). */
  let skew_s = 0;

  beforeAll(async () => {
    // Asynchronous sandbox results (amount 1313) wait an hour: "in progress" and "pending" stay put until the clock moves.
    gw = await startTestGateway(kind, { env: { PAYGATE_SANDBOX_SETTLE_SECONDS: '3600' } });
    held = await gw.createMerchant();
    const set = await op('POST', `/operator/gateways/${held.gateway}`, { hold_payouts: true });
    expect(set.http_status).toBe(200);
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function op(method: string, path: string, body?: unknown, token: string | null = ADMIN_TOKEN): Promise<OpAnswer> {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${gw.url}${path}`, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
    return { http_status: response.status, body: (await response.json()) as Record<string, unknown> };
  }
  const act = (trace_id: number, action: Action, body: Record<string, unknown> = {}) =>
    op('POST', `/operator/payouts/${trace_id}/${action}`, body);
  const process = (merchant: CreatedMerchant, body: Record<string, unknown>) => postSigned(gw.url, '/api/process', body, merchant.secret);
  const directPost = (merchant: CreatedMerchant, body: Record<string, unknown>) => postSigned(gw.url, '/api/direct', body, merchant.secret);
  const row = (trace_id: number) => gw.gateway.deps.store.transactions.get(trace_id);
  const notified = async (trace_id: number) =>
    (await gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).map(
      (n) => (JSON.parse(n.payload_json) as { transaction_status: string }).transaction_status,
    );
  const history = async (trace_id: number) =>
    (await gw.gateway.deps.store.transactions.listStatusChanges(trace_id)).map((c) => `${c.from_status || '∅'}→${c.to_status}`);

  async function heldPayout(amount = 5000): Promise<number> {
    const answer = await process(held, payoutE(held, { amount, timestamp: nowSeconds(skew_s) }));
    expect(answer.body).toMatchObject({ status: 0, transaction_status: 'requested' });
    return answer.body.trace_id as number;
  }

  async function fixture(status: Fixture): Promise<number> {
    switch (status) {
      case 'requested':
        return heldPayout();
      case 'authorized': {
        const trace_id = await heldPayout();
        expect((await act(trace_id, 'approve', { submit: false })).body).toMatchObject({ transaction_status: 'authorized' });
        return trace_id;
      }
      case 'in progress': {
        const trace_id = await heldPayout(1313);
        expect((await act(trace_id, 'approve')).body).toMatchObject({ transaction_status: 'in progress' });
        return trace_id;
      }
      case 'cancelled': {
        const trace_id = await heldPayout();
        expect((await act(trace_id, 'cancel')).body).toMatchObject({ transaction_status: 'cancelled' });
        return trace_id;
      }
      case 'reversed': {
        const trace_id = await fixture('approved');
        expect((await act(trace_id, 'reverse')).body).toMatchObject({ transaction_status: 'reversed' });
        return trace_id;
      }
      case 'pending_async': {
        const answer = await directPost(gw.merchant, direct(gw.merchant, { data_method: 'ewallet' }));
        expect(answer.body.transaction_status).toBe('pending_async');
        return answer.body.trace_id as number;
      }
      default: {
        const amount = { approved: 5000, rejected: 1400, error: 1500, pending: 1313 }[status];
        const answer = await process(gw.merchant, payoutE(gw.merchant, { amount }));
        expect(answer.body.transaction_status).toBe(status);
        return answer.body.trace_id as number;
      }
    }
  }

  describe('authentication and gateway setting', () => {
    it('refuses a missing or wrong admin token with 401', async () => {
      const trace_id = await heldPayout();
      for (const token of [null, 'wrong-token-0123456789']) {
        for (const [method, path, body] of [
          ['POST', `/operator/payouts/${trace_id}/approve`, {}],
          ['GET', `/operator/payouts/${trace_id}`, undefined],
          ['GET', '/operator/payouts', undefined],
          ['POST', `/operator/gateways/${held.gateway}`, { hold_payouts: false }],
        ] as const) {
          const answer = await op(method, path, body, token);
          expect(answer.http_status, `${method} ${path}`).toBe(401);
        }
      }
      expect(await row(trace_id)).toMatchObject({ status: 'requested' });
      expect((await op('GET', `/operator/gateways/${held.gateway}`)).body).toMatchObject({ hold_payouts: true });
    });

    it('reads and sets hold_payouts; an unknown gateway is 404, a bad body 400', async () => {
      expect((await op('GET', `/operator/gateways/${gw.merchant.gateway}`)).body).toMatchObject({
        status: 0,
        gateway_id: gw.merchant.gateway,
        merchant_id: gw.merchant.merchant_id,
        hold_payouts: false,
      });
      expect((await op('POST', '/operator/gateways/nope', { hold_payouts: true })).http_status).toBe(404);
      expect((await op('GET', '/operator/gateways/nope')).http_status).toBe(404);
      expect((await op('POST', `/operator/gateways/${held.gateway}`, { hold_payouts: 'yes' })).http_status).toBe(400);
      expect((await op('POST', `/operator/gateways/${held.gateway}`, {})).http_status).toBe(400);
      // Off: the next payout goes straight to the processor; on again: held.
      const other = await gw.createMerchant();
      const on = await op('POST', `/operator/gateways/${other.gateway}`, { hold_payouts: true });
      expect(on.body).toMatchObject({ status: 0, hold_payouts: true });
      expect((await process(other, payoutE(other))).body).toMatchObject({ transaction_status: 'requested' });
      await op('POST', `/operator/gateways/${other.gateway}`, { hold_payouts: false });
      expect((await process(other, payoutE(other))).body).toMatchObject({ transaction_status: 'approved' });
    });
  });

  describe('held payouts', () => {
    it('stops a held payout in requested before the processor, answers so, and notifies it', async () => {
      const body = payoutE(held);
      const answer = await process(held, body);
      expect(answer.body).toMatchObject({
        status: 0,
        description: 'Payout requested: held for operator approval',
        transaction_status: 'requested',
        transaction_id: '',
      });
      const stored = await row(answer.body.trace_id as number);
      expect(stored).toMatchObject({ status: 'requested', psp_transaction_id: null });
      expect(stored!.card_token).toMatch(/^[0-9a-f]{32}$/); // the card waits sealed in the vault
      expect(await notified(stored!.trace_id)).toEqual(['requested']);
      const listed = await op('GET', '/operator/payouts?status=requested&limit=100');
      expect((listed.body.payouts as { trace_id: number }[]).map((p) => p.trace_id)).toContain(stored!.trace_id);
      const read = await op('GET', `/operator/payouts/${stored!.trace_id}`);
      expect(read.body).toMatchObject({ status: 0, payout: { transaction_status: 'requested', card_number: '411111******1111' } });
      expect(read.body.actions).toEqual(['approve', 'cancel', 'reject']);
    });

    it('pages the list with after = the last trace_id seen: every payout once, oldest first, though trace_ids are random', async () => {
      const made = [await heldPayout(), await heldPayout(), await heldPayout(), await heldPayout(), await heldPayout()];
      const rows = await Promise.all(made.map((trace_id) => row(trace_id)));
      // Oldest first is by creation time (then trace_id), not by the random trace_ids.
      const expected = rows
        .map((r) => r!)
        .sort((a, b) => a.created_at_ms - b.created_at_ms || a.trace_id - b.trace_id)
        .map((r) => r.trace_id);
      const seen: number[] = [];
      let after = '0';
      for (let page = 0; page < 200; page += 1) {
        const listed = await op('GET', `/operator/payouts?status=requested&after=${after}&limit=2`);
        expect(listed.http_status).toBe(200);
        const ids = (listed.body.payouts as { trace_id: number }[]).map((p) => p.trace_id);
        seen.push(...ids);
        if (ids.length < 2) break;
        after = String(ids[ids.length - 1]);
      }
      expect(seen.filter((trace_id) => made.includes(trace_id))).toEqual(expected);
      expect(new Set(seen).size).toBe(seen.length);
      // `after` names a payout: a sale's trace_id, or one no transaction has, is refused.
      const sale = await postSigned(gw.url, '/api/process', saleA(gw.merchant), gw.merchant.secret);
      for (const after_bad of [String(sale.body.trace_id), '99999999', 'abc']) {
        const refused = await op('GET', `/operator/payouts?status=requested&after=${after_bad}`);
        expect(refused.http_status).toBe(400);
        expect(refused.body.description).toMatch(/^Invalid field: after \(expected (the trace_id of a payout|a trace_id)\)$/);
      }
    });

    it('approve: requested → authorized → in progress → approved, each notified; a replay still answers requested', async () => {
      const body = payoutE(held, { variable1: 'held-1' });
      const trace_id = (await process(held, body)).body.trace_id as number;
      const approved = await act(trace_id, 'approve', { note: 'checked by Sam' });
      expect(approved.http_status).toBe(200);
      expect(approved.body).toMatchObject({ status: 0, trace_id, previous_status: 'requested', transaction_status: 'approved' });
      expect(await history(trace_id)).toEqual([
        '∅→pending',
        'pending→requested',
        'requested→authorized',
        'authorized→in progress',
        'in progress→approved',
      ]);
      expect(await notified(trace_id)).toEqual(['requested', 'authorized', 'in progress', 'approved']);
      const [last] = (await gw.gateway.deps.store.notifications.listOfTransaction(trace_id)).slice(-1);
      expect(JSON.parse(last!.payload_json)).toMatchObject({
        transaction_type: 'payout',
        variable1: 'held-1',
        card_number: '411111******1111',
      });
      expect((await row(trace_id))!.psp_transaction_id).toMatch(/^sbx_/);
      const replay = await process(held, { ...body, timestamp: nowSeconds(skew_s) + 1 });
      expect(replay.body).toMatchObject({ status: 0, trace_id, transaction_status: 'requested' });
    });

    it('approve with submit false stops at authorized; submit sends it on', async () => {
      const trace_id = await heldPayout();
      expect((await act(trace_id, 'approve', { submit: false })).body).toMatchObject({
        previous_status: 'requested',
        transaction_status: 'authorized',
      });
      expect((await row(trace_id))!.psp_transaction_id).toBeNull();
      const submitted = await act(trace_id, 'submit');
      expect(submitted.body).toMatchObject({ status: 0, previous_status: 'authorized', transaction_status: 'approved' });
      expect(await notified(trace_id)).toEqual(['requested', 'authorized', 'in progress', 'approved']);
    });

    it.each([
      [1400, 'rejected'],
      [1500, 'error'],
      [1313, 'in progress'],
    ])('approve of amount %s ends %s', async (amount, status) => {
      const trace_id = await heldPayout(amount);
      expect((await act(trace_id, 'approve')).body).toMatchObject({ status: 0, transaction_status: status });
      expect(await row(trace_id)).toMatchObject({ status });
      expect((await notified(trace_id)).at(-1)).toBe(status);
    });

    it('approves a held encrypted payout with the card kept in the vault', async () => {
      const answer = await process(held, payoutD(held, { timestamp: nowSeconds(skew_s) }));
      expect(answer.body).toMatchObject({ transaction_status: 'requested' });
      const trace_id = answer.body.trace_id as number;
      expect((await act(trace_id, 'approve')).body).toMatchObject({ transaction_status: 'approved' });
    });

    it('approves held direct payouts: bank, and e-wallet without a customer at the page', async () => {
      for (const data_method of ['bank', 'ewallet']) {
        const answer = await directPost(held, direct(held, { data_method, timestamp: nowSeconds(skew_s) }));
        expect(answer.body).toMatchObject({ status: 0, transaction_status: 'requested', payment_method: data_method, redirect_url: null });
        const trace_id = answer.body.trace_id as number;
        const approved = await act(trace_id, 'approve');
        expect(approved.body, data_method).toMatchObject({ transaction_status: 'approved', payout: { payment_method: data_method } });
        expect((await op('GET', `/operator/payouts/${trace_id}`)).body).toMatchObject({
          payout: { data: { data_account_number: 'DE89370400440532013000', data_method } },
        });
      }
    });

    it('cancel and reject: from requested and from authorized, notified', async () => {
      for (const [start, action, to] of [
        ['requested', 'cancel', 'cancelled'],
        ['authorized', 'cancel', 'cancelled'],
        ['requested', 'reject', 'rejected'],
        ['authorized', 'reject', 'rejected'],
      ] as const) {
        const trace_id = await fixture(start);
        const answer = await act(trace_id, action, { note: 'customer asked' });
        expect(answer.http_status, `${action} ${start}`).toBe(200);
        expect(answer.body).toMatchObject({ previous_status: start, transaction_status: to });
        expect(await row(trace_id)).toMatchObject({
          status: to,
          error_details: `${action === 'cancel' ? 'Cancelled' : 'Rejected'} by the operator: customer asked`,
        });
        expect((await notified(trace_id)).at(-1)).toBe(to);
        expect((await history(trace_id)).at(-1)).toBe(`${start}→${to}`);
      }
    });

    it('reverse: approved → reversed, for a direct payout too, notified', async () => {
      for (const trace_id of [await fixture('approved'), (await directPost(gw.merchant, direct(gw.merchant))).body.trace_id as number]) {
        const answer = await act(trace_id, 'reverse');
        expect(answer.body).toMatchObject({ status: 0, previous_status: 'approved', transaction_status: 'reversed' });
        expect((await notified(trace_id)).at(-1)).toBe('reversed');
      }
    });
  });

  describe('refused transitions', () => {
    it('answers 409 with the current status for every action a status does not accept, changing nothing', async () => {
      const trace_ids = new Map<Fixture, number>();
      for (const status of FIXTURES) trace_ids.set(status, await fixture(status));
      let refused = 0;
      for (const status of FIXTURES) {
        const trace_id = trace_ids.get(status)!;
        for (const action of ACTIONS) {
          if (ACCEPTS[action].includes(status)) continue;
          const before = { row: await row(trace_id), history: await history(trace_id), notified: await notified(trace_id) };
          const answer = await act(trace_id, action);
          expect(answer.http_status, `${action} on ${status}`).toBe(409);
          expect(answer.body).toMatchObject({ status: 19, trace_id, transaction_status: status });
          expect(answer.body.description).toMatch(new RegExp(`^Transition refused: cannot ${action} a payout that is ${status}`));
          expect(
            { row: await row(trace_id), history: await history(trace_id), notified: await notified(trace_id) },
            `${action} on ${status}`,
          ).toEqual(before);
          refused += 1;
        }
      }
      expect(refused).toBe(FIXTURES.length * ACTIONS.length - 7);
    });

    it('lets only one of several concurrent approvals through, and the processor is asked once', async () => {
      const trace_id = await heldPayout();
      const answers = await Promise.all(Array.from({ length: 6 }, () => act(trace_id, 'approve')));
      expect(answers.filter((a) => a.http_status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.http_status === 409)).toHaveLength(5);
      expect((await history(trace_id)).filter((h) => h.endsWith('→approved'))).toHaveLength(1);
    });

    it('a racing cancel and approve: one wins, the other is refused, and the record agrees', async () => {
      const trace_id = await heldPayout();
      const [approve, cancel] = await Promise.all([act(trace_id, 'approve'), act(trace_id, 'cancel')]);
      expect([approve.http_status, cancel.http_status].sort()).toEqual([200, 409]);
      const final = (await row(trace_id))!.status;
      expect(final).toBe(approve.http_status === 200 ? 'approved' : 'cancelled');
    });

    it('404 for a sale or an unknown trace_id, 400 for a bad trace_id or body', async () => {
      const sale = await postSigned(gw.url, '/api/process', saleA(gw.merchant), gw.merchant.secret);
      expect((await act(sale.body.trace_id as number, 'approve')).http_status).toBe(404);
      expect((await op('GET', `/operator/payouts/${sale.body.trace_id}`)).http_status).toBe(404);
      expect((await act(99_999_999, 'cancel')).http_status).toBe(404);
      expect((await op('POST', '/operator/payouts/abc/approve', {})).http_status).toBe(400);
      const trace_id = await heldPayout();
      expect((await act(trace_id, 'approve', { submit: 'no' })).http_status).toBe(400);
      expect((await act(trace_id, 'cancel', { submit: false })).http_status).toBe(400);
      expect((await act(trace_id, 'cancel', { note: 'n'.repeat(201) })).http_status).toBe(400);
      expect((await op('GET', '/operator/payouts?status=bogus')).http_status).toBe(400);
      expect(await row(trace_id)).toMatchObject({ status: 'requested' });
    });
  });

  // Last: moves the gateway's clock an hour on.
  it('an in-progress payout settles when the processor reports (amount 1313), notified', async () => {
    const trace_id = await fixture('in progress');
    const moved = await op('POST', '/sandbox/clock', { advance_seconds: 3700 });
    expect(moved.http_status).toBe(200);
    skew_s = (moved.body.now as number) - nowSeconds();
    const deadline = Date.now() + 10_000;
    while ((await row(trace_id))!.status !== 'approved' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await row(trace_id)).toMatchObject({ status: 'approved' });
    expect((await history(trace_id)).slice(-1)).toEqual(['in progress→approved']);
    expect((await notified(trace_id)).at(-1)).toBe('approved');
  });
});
