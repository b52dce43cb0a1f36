// Pure parts of the cashier: the order state machine's table, amounts typed by a customer, the
// merchant's reply to a validation request, frame origins, and the locale's language.
import { describe, expect, it } from 'vitest';
import { checkFrameOrigins, framingHeaders, normalizeFrameOrigin } from '../../src/domain/frame-origins.js';
import { nextOrderStatus, ORDER_RULES, type OrderEvent } from '../../src/domain/order-state.js';
import { signBody } from '../../src/domain/signing.js';
import { parseAmount, readPaymentForm, readRegistration } from '../../src/http/cashier-forms.js';
import { fitDescription } from '../../src/http/routes/cashier-sessions.js';
import { readValidationReply, validationBody } from '../../src/operations/validation-request.js';
import { languageOf, sayer } from '../../src/pages/cashier/text.js';
import type { CashierSessionRow } from '../../src/store/schema.js';

const SESSION = { kind: 'checkout', order_status: 'pending', expires_at_ms: 1_000_000 } as CashierSessionRow;
const at = (order_status: string) => ({ ...SESSION, order_status }) as CashierSessionRow;

describe('order state machine (domain/order-state.ts)', () => {
  it.each<[string, OrderEvent, number, string | null]>([
    ['pending', 'transaction_approved', 0, 'approved'],
    ['pending', 'transaction_authorized', 0, 'authorized'],
    ['pending', 'transaction_failed', 0, null],
    ['pending', 'time_limit', 999_999, null],
    ['pending', 'time_limit', 1_000_000, 'rejected'],
    ['authorized', 'transaction_approved', 0, 'approved'],
    ['pending', 'transaction_cancelled', 0, null],
    ['authorized', 'transaction_cancelled', 0, 'rejected'],
    ['authorized', 'transaction_cancelled', 1_000_000, 'rejected'],
    ['rejected', 'transaction_cancelled', 2_000_000, null],
    ['authorized', 'transaction_failed', 999_999, 'pending'],
    ['authorized', 'transaction_failed', 1_000_000, 'rejected'],
    ['authorized', 'time_limit', 2_000_000, null],
    ['rejected', 'transaction_approved', 2_000_000, 'approved'],
    ['rejected', 'transaction_failed', 2_000_000, null],
    ['rejected', 'time_limit', 2_000_000, null],
    ['approved', 'transaction_failed', 0, null],
    ['approved', 'time_limit', 2_000_000, null],
  ])('%s + %s at %i → %s', (from, event, now_ms, to) => {
    expect(nextOrderStatus(at(from), event, now_ms)).toBe(to);
  });

  it('approved is final: no rule leaves it', () => {
    expect(ORDER_RULES.filter((rule) => rule.from === 'approved')).toEqual([]);
  });
});

describe('amounts typed by a customer', () => {
  it.each<[string, string, number | null]>([
    ['25', 'USD', 2500],
    ['25.5', 'USD', 2550],
    ['25,50', 'EUR', 2550],
    [' 1 000 ', 'USD', 100_000],
    ['0.01', 'USD', 1],
    ['2500', 'JPY', 2500],
    ['25.5', 'JPY', null],
    ['1.999', 'BHD', 1999],
    ['1.2345', 'BHD', null],
    ['0', 'USD', null],
    ['-5', 'USD', null],
    ['abc', 'USD', null],
    ['1e3', 'USD', null],
    ['25.555', 'USD', null],
    ['', 'USD', null],
  ])('%j %s → %j', (text, currency, minor) => {
    expect(parseAmount(text, currency)).toBe(minor);
  });

  it('a payment form reports every bad field at once, and never echoes card data', () => {
    const read = readPaymentForm(
      { amount: 'lots', card_number: '4111111111111112', card_exp: '13/30', cvv: '12' },
      {
        currency: 'USD',
        fixed_amount_minor: null,
        max_minor: null,
        method: 'card',
        payout: false,
        now_ms: Date.UTC(2025, 0, 1),
        wallet_account_asked: true,
      },
    );
    expect(read).toEqual({
      ok: false,
      errors: { amount: 'invalid_amount', card_number: 'invalid_card_number', card_exp: 'invalid_card_exp', cvv: 'invalid_cvv' },
      values: { amount: 'lots' },
    });
    const ok = readPaymentForm(
      { card_number: '4111 1111 1111 1111', card_exp: '1235' },
      {
        currency: 'USD',
        fixed_amount_minor: 1999,
        max_minor: null,
        method: 'card',
        payout: true,
        now_ms: Date.UTC(2025, 0, 1),
        wallet_account_asked: true,
      },
    );
    expect(ok.ok).toBe(true);
  });

  it('a wallet whose customer logs in on its own page (PayPal) asks no account for a deposit; the sandbox wallet does', () => {
    const rules = {
      currency: 'USD',
      fixed_amount_minor: 500,
      max_minor: null,
      method: 'ewallet',
      payout: false,
      now_ms: Date.UTC(2025, 0, 1),
    };
    expect(readPaymentForm({}, { ...rules, wallet_account_asked: false })).toEqual({
      ok: true,
      value: { amount_minor: 500, choice: { method: 'ewallet', wallet_id: '' } },
    });
    expect(readPaymentForm({}, { ...rules, wallet_account_asked: true })).toMatchObject({ ok: false, errors: { wallet_id: 'required' } });
    // A payout always names the account it pays to.
    expect(readPaymentForm({}, { ...rules, payout: true, wallet_account_asked: false })).toMatchObject({
      ok: false,
      errors: { wallet_id: 'required' },
    });
  });

  it("registration uses the session call's rules: 9 phone digits on init-pay-in, 6 elsewhere", () => {
    expect(readRegistration({ phone: '12345678' }, ['phone'], 'pay_in')).toMatchObject({ ok: false, errors: { phone: 'invalid' } });
    expect(readRegistration({ phone: '+44 1234 5678' }, ['phone'], 'checkout')).toEqual({ ok: true, value: { phone: '4412345678' } });
    expect(readRegistration({ email: 'x@y', state: '' }, ['email', 'state'], 'checkout')).toMatchObject({
      ok: false,
      errors: { email: 'invalid' },
    });
  });
});

describe("the merchant's reply to a validation request", () => {
  const secret = 'validation-secret';
  const reply = (fields: Record<string, unknown>) => JSON.stringify({ ...fields, signature: signBody(fields, secret) });

  it('accepts status 0 and refuses a positive status with its description, both signed', () => {
    expect(readValidationReply(200, reply({ status: 0, description: 'OK', version: '1.2', timestamp: 1 }), secret)).toEqual({
      kind: 'accepted',
    });
    expect(readValidationReply(200, reply({ status: 3, description: '  Limit reached ' }), secret)).toEqual({
      kind: 'refused',
      status: 3,
      description: 'Limit reached',
    });
  });

  it.each<[string, number, string]>([
    ['not JSON', 200, 'OK'],
    ['an array', 200, '[]'],
    ['unsigned', 200, JSON.stringify({ status: 0 })],
    ['signed with another secret', 200, JSON.stringify({ status: 0, signature: signBody({ status: 0 }, 'other') })],
    ['a negative status', 200, reply({ status: -1, description: 'down' })],
    ['a status that is not an integer', 200, reply({ status: '0' })],
    ['HTTP 500', 500, reply({ status: 0 })],
    ['nested values', 200, JSON.stringify({ status: 0, extra: { a: 1 } })],
  ])('refuses %s', (_what, http_status, text) => {
    expect(readValidationReply(http_status, text, secret).kind).toBe('failed');
  });

  it('signs the request body of decisions.md §11', () => {
    const body = validationBody(
      {
        merchant_id: 'm',
        identity: { kind: 'frontend', value: 'f' },
        pin: 'p',
        order_id: 'o',
        transaction_type: 'payout',
        amount: 5,
        currency: 'USD',
        payment_method: 'card',
        auth_token: 't',
        version: '1.1',
      },
      1763740800,
      secret,
    );
    expect(body).toMatchObject({ frontend: 'f', transaction_status: 'requested', timestamp: 1763740800 });
    const { signature, ...rest } = body;
    expect(signature).toBe(signBody(rest, secret));
  });
});

describe('frame origins and languages', () => {
  it('takes http(s) origins only, in their normal form', () => {
    expect(normalizeFrameOrigin('https://Shop.Example/')).toBe('https://shop.example');
    expect(normalizeFrameOrigin('http://localhost:8080')).toBe('http://localhost:8080');
    for (const bad of [
      'https://shop.example/cart',
      'https://shop.example?x=1',
      'ftp://shop.example',
      'https://u:p@shop.example',
      '*',
      "'self'",
      'https://a.example https://b.example',
      '',
    ]) {
      expect(normalizeFrameOrigin(bad), bad).toBeNull();
    }
    expect(checkFrameOrigins(['https://a.example', 'https://a.example/'])).toEqual({ ok: true, origins: ['https://a.example'] });
  });

  it('framing headers: the origins in frame-ancestors, or nobody with X-Frame-Options DENY as well', () => {
    expect(framingHeaders(['https://a.example', 'http://localhost:8080'])).toEqual({
      frame_ancestors: 'frame-ancestors https://a.example http://localhost:8080',
      headers: {},
    });
    for (const none of [null, []]) {
      expect(framingHeaders(none)).toEqual({ frame_ancestors: "frame-ancestors 'none'", headers: { 'x-frame-options': 'DENY' } });
    }
  });

  it('picks the language from the locale, English otherwise', () => {
    expect(languageOf('de-DE')).toBe('de');
    expect(languageOf('es_MX')).toBe('es');
    expect(languageOf('fr-FR')).toBe('en');
    expect(languageOf(null)).toBe('en');
    expect(sayer('de')('pay')).toBe('Bezahlen');
    expect(sayer('es')('over_balance', { max: '5.00 USD' })).toBe('Es más de lo que puede retirar (5.00 USD).');
  });
});

describe('descriptions of the session calls and find-order (spec §2.3, §4.7: varchar(75))', () => {
  it('keeps a description that fits, shortens a field error naming the field, cuts anything else at a word', () => {
    expect(fitDescription('Missing required field: pin', 'pin')).toBe('Missing required field: pin');
    expect(fitDescription('Invalid field: currency (expected an ISO 4217 code the gateway knows, such as USD)', 'currency')).toBe(
      'Invalid field: currency (expected an ISO 4217 code such as USD)',
    );
    // No short wording known for the field: its name alone.
    expect(fitDescription(`Invalid field: pin (expected ${'a very long rule '.repeat(5)})`, 'pin')).toBe('Invalid field: pin');
    const cut = fitDescription('word '.repeat(30).trim());
    expect(cut.length).toBeLessThanOrEqual(75);
    expect(cut).toMatch(/^word( word)*…$/);
  });
});
