// The back office's Capture and Void of an authorization and its disputes over real HTTP on both
// stores (decisions §16, docs/backoffice.md): the confirmation step moves nothing; the confirmed
// form goes through the API's own action (origin agent, the person's e-mail) with its audit line;
// a form sent again, another amount, more than authorized, an unreadable amount, a capture after a
// void are refused in the page's words and change nothing; another merchant's staff get the page
// that does not exist; the Disputes view by deadline, open by default, per merchant.
// Chromium drives the same pages in test/browser/backoffice-authorizations.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationActionResult, Connector } from '../../src/connectors/connector.js';
import type { ConnectorRegistry } from '../../src/connectors/registry.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { actOnAuthorizationInBackOffice } from '../../src/operations/backoffice-authorization.js';
import type { OperationDeps } from '../../src/operations/deps.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { addUser, advanceClock, BackOfficeClient, pageText, sale } from '../support/backoffice.js';
import { authorize, chargeback, notificationsReporting } from '../support/backoffice-authorizations.js';

describe.each(storeKinds())('back-office authorizations and disputes on %s', (kind) => {
  let gw: TestGateway;
  let shop_a: CreatedMerchant;
  let shop_b: CreatedMerchant;
  const operator = () => signedIn('operator@example.com');
  const staffA = () => signedIn('staff-a@example.com');
  const staffB = () => signedIn('staff-b@example.com');

  async function signedIn(email: string): Promise<BackOfficeClient> {
    const client = new BackOfficeClient(gw.url);
    expect((await client.signIn(email)).status).toBe(303);
    return client;
  }

  async function auditLines(): Promise<string> {
    const client = await operator();
    return pageText((await client.get('/backoffice/audit')).text);
  }

  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_RATE_LIMIT_SIGN_IN_PER_MINUTE: '1000' } });
    shop_a = await gw.createMerchant();
    shop_b = await gw.createMerchant();
    await addUser(gw, 'operator@example.com', 'operator');
    await addUser(gw, 'staff-a@example.com', 'merchant', shop_a.merchant_id);
    await addUser(gw, 'staff-b@example.com', 'merchant', shop_b.merchant_id);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('captures part of an authorization once, after a confirmation that moves nothing, as an agent, audited', async () => {
    const store = gw.gateway.deps.store;
    const { trace_id } = await authorize(gw, shop_a, { amount: 4250 });
    const client = await operator();
    const page = pageText((await client.get(`/backoffice/transactions/${trace_id}`)).text);
    expect(page).toContain('Capture or void');
    expect(page).toContain('Amount to capture (USD, at most 42.50)');

    const confirmation = await client.post(`/backoffice/transactions/${trace_id}/capture`, { amount: '12.50' });
    expect(confirmation.status).toBe(200);
    const shown = pageText(confirmation.text);
    expect(shown).toMatch(/Amount to capture 12\.50 USD Authorized amount 42\.50 USD Released 30\.00 USD Card 411111\*{6}1111/);
    expect(shown).toContain('Customer PIN cust-42');
    expect(confirmation.text).toContain('name="confirm" value="yes"');
    // Nothing moved, nothing audited.
    expect(await store.authorizations.getAction(trace_id)).toBeNull();
    expect((await store.transactions.get(trace_id))!.status).toBe('authorized');
    expect(await auditLines()).not.toMatch(new RegExp(`capture ${trace_id}`));

    const done = await client.post(`/backoffice/transactions/${trace_id}/capture`, { amount: '12.50', confirm: 'yes' });
    expect([done.status, done.location]).toEqual([303, `/backoffice/transactions/${trace_id}?notice=captured`]);
    expect(await store.transactions.get(trace_id)).toMatchObject({ status: 'approved', amount_minor: 1250 });
    expect(await store.authorizations.getAction(trace_id)).toMatchObject({
      action: 'capture',
      authorized_minor: 4250,
      amount_minor: 1250,
      state: 'done',
      origin: 'agent',
      agent: 'operator@example.com',
    });
    expect((await store.transactions.listStatusChanges(trace_id)).at(-1)!.reason).toContain('by agent operator@example.com');
    const after = pageText((await client.get(`/backoffice/transactions/${trace_id}?notice=captured`)).text);
    expect(after).toContain('Captured. The capture is below.');
    expect(after).toMatch(
      /Action capture Authorized amount 42\.50 USD Captured amount 12\.50 USD By agent operator@example\.com State done/,
    );
    expect(after).not.toContain('Capture or void');
    // A captured authorization is refunded like a sale.
    expect(after).toContain('Refund');

    // The same form again: the capture is found made, nothing more is done.
    const again = await client.post(`/backoffice/transactions/${trace_id}/capture`, { amount: '12.50', confirm: 'yes' });
    expect([again.status, again.location]).toEqual([303, `/backoffice/transactions/${trace_id}?notice=captured`]);
    // Another amount, or a void, of the captured authorization: refused in the operation's words.
    const other = await client.post(`/backoffice/transactions/${trace_id}/capture`, { amount: '20.00', confirm: 'yes' });
    expect(other.status).toBe(409);
    expect(pageText(other.text)).toContain('Capture refused: the authorization was already captured for 1250.');
    const late_void = await client.post(`/backoffice/transactions/${trace_id}/void`, {});
    expect(late_void.status).toBe(409);
    expect(pageText(late_void.text)).toContain('Void refused: the authorization was already captured for 1250.');
    expect(await store.transactions.get(trace_id)).toMatchObject({ status: 'approved', amount_minor: 1250 });
    await expect.poll(() => notificationsReporting(gw, trace_id, 'approved')).toBe(1);

    const audit = await auditLines();
    expect(audit).toMatch(
      new RegExp(`capture ${trace_id} ${shop_a.merchant_id} done 127\\.0\\.0\\.1 12\\.50 USD: authorization now approved`),
    );
    expect(audit).toContain('(form sent again: nothing more done)');
    expect(audit).toMatch(new RegExp(`capture ${trace_id} ${shop_a.merchant_id} refused .*already captured for 1250`));
  });

  it("voids an authorization as the merchant's staff; amounts and states it may not take are refused before the confirmation", async () => {
    const store = gw.gateway.deps.store;
    const { trace_id } = await authorize(gw, shop_a, { amount: 1000 });
    const client = await staffA();
    const too_much = await client.post(`/backoffice/transactions/${trace_id}/capture`, { amount: '10.01' });
    expect(too_much.status).toBe(409);
    expect(pageText(too_much.text)).toContain('Capture refused: amount exceeds the authorized amount (1000).');
    for (const amount of ['0', '1.234', 'ten', '']) {
      const unreadable = await client.post(`/backoffice/transactions/${trace_id}/capture`, { amount, confirm: 'yes' });
      expect([amount, unreadable.status]).toEqual([amount, 400]);
      expect(pageText(unreadable.text)).toContain('Amount: expected a positive amount in USD');
    }
    expect(await store.authorizations.getAction(trace_id)).toBeNull();

    const confirmation = pageText((await client.post(`/backoffice/transactions/${trace_id}/void`, {})).text);
    expect(confirmation).toMatch(/Confirm the void of transaction \d+ .*Amount released 10\.00 USD/);
    const done = await client.post(`/backoffice/transactions/${trace_id}/void`, { amount: '10.00', confirm: 'yes' });
    expect(done.location).toBe(`/backoffice/transactions/${trace_id}?notice=voided`);
    expect((await store.transactions.get(trace_id))!.status).toBe('cancelled');
    expect(await store.authorizations.getAction(trace_id)).toMatchObject({ action: 'void', origin: 'agent', agent: 'staff-a@example.com' });
    const page = pageText((await client.get(`/backoffice/transactions/${trace_id}`)).text);
    expect(page).toMatch(/Action void Authorized amount 10\.00 USD By agent staff-a@example\.com State done/);
    expect(page).not.toContain('Captured amount');

    // A sale is no authorization: refused, in the operation's words.
    const a_sale = await sale(gw, shop_a);
    const on_sale = await client.post(`/backoffice/transactions/${a_sale.trace_id}/void`, {});
    expect(on_sale.status).toBe(409);
    expect(pageText(on_sale.text)).toContain(
      `Void refused: transaction ${a_sale.trace_id} is not an authorized authorization (transaction_type sale, status approved).`,
    );
  });

  it("answers another merchant's authorization as a page that does not exist, at both steps, and changes nothing", async () => {
    const { trace_id } = await authorize(gw, shop_a);
    const client = await staffB();
    const missing = await client.get('/backoffice/transactions/999999999');
    for (const [path, form] of [
      [`/backoffice/transactions/${trace_id}/capture`, { amount: '1.00' }],
      [`/backoffice/transactions/${trace_id}/capture`, { amount: '1.00', confirm: 'yes' }],
      [`/backoffice/transactions/${trace_id}/void`, { confirm: 'yes' }],
    ] as const) {
      const answer = await client.post(path, form);
      expect([path, answer.status]).toEqual([path, 404]);
      // The same text as an unknown transaction's, the id asked for apart.
      expect(pageText(answer.text).replace(/transaction \d+\./, 'transaction ID.')).toBe(pageText(missing.text).replace('999999999', 'ID'));
    }
    expect((await client.post(`/backoffice/transactions/${trace_id}/void`, { confirm: 'yes' }, { csrf: false })).status).toBe(403);
    expect(await gw.gateway.deps.store.authorizations.getAction(trace_id)).toBeNull();
    expect((await gw.gateway.deps.store.transactions.get(trace_id))!.status).toBe('authorized');
  });

  /** The gateway's deps with its connectors' capture and void answering `answer` (null: no capture or void here). */
  function depsAnswering(answer: AuthorizationActionResult | null): OperationDeps {
    const deps = gw.gateway.deps;
    const real = deps.connectors;
    const connectors = Object.create(real) as ConnectorRegistry;
    connectors.forGatewayId = async (store, gateway_id) => {
      const found = await real.forGatewayId(store, gateway_id);
      if (found === null) return null;
      const authorizations = answer === null ? undefined : { capture: async () => answer, void: async () => answer };
      const connector = Object.assign(Object.create(found.connector) as Connector, { authorizations });
      return { gateway: found.gateway, connector };
    };
    return { ...deps, connectors };
  }

  it("shows the processor's refusal in the page's words, gives the authorization back and audits it; no processor fails", async () => {
    const store = gw.gateway.deps.store;
    const { trace_id } = await authorize(gw, shop_a, { amount: 500 });
    const user = (await store.backoffice.findUserByEmail('operator@example.com'))!;
    const actor = { viewer: { user_id: user.user_id, email: user.email, role: user.role, merchant_id: null }, address: '192.0.2.9' };
    const row = (await store.transactions.get(trace_id))!;
    const refusal = depsAnswering({ kind: 'refused', error_code: 'capture_expired', error_details: 'The hold has expired' });
    const refused = await actOnAuthorizationInBackOffice(refusal, actor, row, 'capture', 300);
    expect(refused).toMatchObject({ kind: 'refused', message: 'Capture refused by the processor: The hold has expired' });
    // Nothing happened at the processor: the authorization may be captured or voided again.
    expect(await store.authorizations.getAction(trace_id)).toBeNull();
    expect((await store.transactions.get(trace_id))!.status).toBe('authorized');
    const failed = await actOnAuthorizationInBackOffice(depsAnswering(null), actor, row, 'void', null);
    expect(failed.kind).toBe('failed');
    expect(await store.authorizations.getAction(trace_id)).toBeNull();
    const audit = await auditLines();
    expect(audit).toMatch(
      new RegExp(
        `capture ${trace_id} ${shop_a.merchant_id} refused 192\\.0\\.2\\.9 3\\.00 USD: Capture refused by the processor: The hold has expired`,
      ),
    );
    expect(audit).toMatch(new RegExp(`void ${trace_id} ${shop_a.merchant_id} failed 192\\.0\\.2\\.9 5\\.00 USD: no_processor`));
    // And then the real processor captures it.
    const done = await actOnAuthorizationInBackOffice(gw.gateway.deps, actor, row, 'capture', 300);
    expect(done).toEqual({ kind: 'processed', status: 'approved', replayed: false });
  });

  it('lists disputes by deadline, open by default, each merchant its own, and shows them on the payment', async () => {
    const first = await sale(gw, shop_a, { amount: 3000 });
    const captured = await authorize(gw, shop_a, { amount: 2000 });
    const client = await operator();
    await client.post(`/backoffice/transactions/${captured.trace_id}/capture`, { amount: '20.00', confirm: 'yes' });
    await chargeback(gw, first.trace_id);
    // A minute later on the gateway clock: a later deadline.
    await advanceClock(gw, 60);
    await chargeback(gw, captured.trace_id);
    const b_sale = await sale(gw, shop_b);
    await chargeback(gw, b_sale.trace_id);

    const all = (await client.get('/backoffice/disputes')).text;
    const link = (trace_id: number) => all.indexOf(`/backoffice/transactions/${trace_id}"`);
    expect(pageText(all)).toContain('evidence_required');
    for (const id of [first.trace_id, captured.trace_id, b_sale.trace_id]) expect(link(id)).toBeGreaterThan(0);
    // Soonest deadline first.
    expect(link(first.trace_id)).toBeLessThan(link(captured.trace_id));
    expect(link(captured.trace_id)).toBeLessThan(link(b_sale.trace_id));
    expect(pageText(all)).toContain('[TEST] Chargeback made by the sandbox trigger');
    expect(pageText(all)).toContain(shop_b.merchant_id);

    const staff = await staffA();
    const own = await staff.get('/backoffice/disputes');
    expect(own.text).toContain(`/backoffice/transactions/${first.trace_id}"`);
    expect(own.text).not.toContain(`/backoffice/transactions/${b_sale.trace_id}"`);
    expect(pageText(own.text)).not.toContain(shop_b.merchant_id);
    expect(pageText((await staff.get('/backoffice/disputes?show=closed')).text)).toContain('No dispute is closed.');
    expect((await staff.get('/backoffice/disputes?show=all')).text).toContain(`/backoffice/transactions/${first.trace_id}"`);
    const bad = await staff.get('/backoffice/disputes?show=won');
    expect(bad.status).toBe(400);
    expect(pageText(bad.text)).toContain('Show: expected one of open, closed, all.');

    const page = pageText((await staff.get(`/backoffice/transactions/${captured.trace_id}`)).text);
    expect(page).toMatch(
      /Disputes Evidence due \(UTC\) Stage Amount Reason Opened \(UTC\) Updated \(UTC\) Dispute ID \d{4}-\d\d-\d\d [\d:]+ evidence_required 20\.00 USD/,
    );
    expect(page).toMatch(/Status chargeback/);
  });
});
