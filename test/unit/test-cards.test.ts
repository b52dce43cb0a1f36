// docs/test-cards.md against the sandbox processor itself (connectors/sandbox/connector.ts), both
// ways: every row of the page is run through the sandbox and must give what the row says (answer,
// error_details, what follows), and every CVV from 000 to 999 and every amount up to 20 000 is run
// too, so an outcome the sandbox has and the page does not list fails here. The page and the
// sandbox cannot drift apart.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NO_CUSTOMER, type ProcessorResult } from '../../src/connectors/connector.js';
import { SandboxConnector } from '../../src/connectors/sandbox/connector.js';
import { CardData } from '../../src/domain/cards.js';

const PAGE = fs.readFileSync('docs/test-cards.md', 'utf8');
const connector = new SandboxConnector({ now_ms: () => Date.now() }, () => 'http://sandbox.test', {
  challenge_timeout_ms: 900_000,
  async_settle_ms: 3_000,
  issuer_timeout_ms: 10_000,
});
const PAN = '4111111111111111';
const FUTURE = { month: 12, year: new Date().getUTCFullYear() + 5 };
const SCAN_AMOUNTS_UP_TO = 20_000;
const PLAIN_AMOUNT = 1000;

/** The rows (cells trimmed) of the first table under the `## heading` that has `column` in its header. */
function table(heading: string, column: string): string[][] {
  const start = PAGE.indexOf(`\n## ${heading}\n`);
  expect(start, `docs/test-cards.md has a section "${heading}"`).toBeGreaterThan(-1);
  const end = PAGE.indexOf('\n## ', start + 1);
  const lines = PAGE.slice(start, end === -1 ? undefined : end).split('\n');
  const header = lines.findIndex((line) => line.startsWith('|') && line.includes(column));
  const rows: string[][] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  expect(rows.length, `a table with ${column} under "${heading}"`).toBeGreaterThan(0);
  return rows;
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The answer's transaction_status of a processor result (a challenge is pending_async). */
function answerOf(result: ProcessorResult): string {
  return result.kind === 'challenge' ? 'pending_async' : result.kind;
}

/** What a row's "Then" column must name for this result: the later status and its words, or the chargeback. */
function laterOf(result: ProcessorResult): string[] {
  if ('later' in result && result.later) return [result.later.to, result.later.error_details];
  if (result.kind === 'approved' && result.chargeback_after_ms !== undefined) return ['chargeback'];
  return [];
}

function detailsOf(result: ProcessorResult): string | null {
  return 'error_details' in result ? result.error_details : null;
}

/** What tells one outcome from another, to compare a scanned input with the page's rows. */
function signature(result: ProcessorResult): string {
  return JSON.stringify([answerOf(result), detailsOf(result), laterOf(result)]);
}

async function customerSale(cvv: string | null, amount_minor: number, pan = PAN, expiry = FUTURE): Promise<ProcessorResult> {
  return connector.sale({
    trace_id: 1,
    reference: 'order-1',
    merchant_id: 'm',
    amount_minor,
    currency: 'USD',
    card: new CardData(pan, expiry, cvv),
    customer: NO_CUSTOMER,
    initiated_by: 'customer',
    mit_retry: false,
    return_to: null,
    capture: true,
  });
}

async function storedCardCharge(amount_minor: number, mit_retry = false): Promise<ProcessorResult> {
  return connector.sale({
    trace_id: 1,
    reference: 'order-1',
    merchant_id: 'm',
    amount_minor,
    currency: 'USD',
    card: new CardData(PAN, FUTURE, null),
    customer: NO_CUSTOMER,
    initiated_by: 'merchant',
    mit_retry,
    return_to: null,
    capture: true,
  });
}

async function cardPayout(amount_minor: number): Promise<ProcessorResult> {
  return connector.cardPayout({
    trace_id: 1,
    reference: 'order-1',
    amount_minor,
    currency: 'USD',
    card: new CardData(PAN, FUTURE, null),
    customer: NO_CUSTOMER,
  });
}

/**
 * Checks one row: answer, error_details and what follows, as the sandbox gives them. A row whose
 * transaction has no later step may name none (unless its "Then" is about something else, a retry).
 */
function expectRow(row: string[], result: ProcessorResult, [answer, details, then]: [number, number, number], then_is_later = true): void {
  const what = row.join(' | ');
  expect(answerOf(result), what).toBe(ticked(row[answer]!)[0]);
  expect(detailsOf(result), what).toBe(ticked(row[details]!)[0]);
  const later = laterOf(result);
  if (later.length === 0 && then_is_later)
    expect(row[then] === '—' || !/`(approved|rejected|chargeback)`/.test(row[then]!), what).toBe(true);
  for (const word of later) expect(row[then], what).toContain(word);
}

describe('docs/test-cards.md is what the sandbox does', () => {
  it('sales: every row, and every CVV 000 to 999 with a plain amount and with 713, is on the page', async () => {
    const rows = table('Sales: the CVV decides', 'CVV');
    const listed = new Map<string, string>();
    for (const row of rows) {
      const cvvs = ticked(row[0]!).filter((value) => /^\d{3}$/.test(value));
      expect(cvvs.length, row.join(' | ')).toBeGreaterThan(0);
      const amount = ticked(row[1]!)[0];
      for (const cvv of cvvs) {
        const result = await customerSale(cvv, amount === undefined ? PLAIN_AMOUNT : Number(amount));
        expectRow(row, result, [2, 3, 4]);
        listed.set(`${cvv}/${amount ?? 'any'}`, signature(result));
      }
    }
    const default_row = rows.find((row) => row[0]!.includes('any CVV not listed'))!;
    const approved = signature(await customerSale(ticked(default_row[0]!)[0]!, PLAIN_AMOUNT));
    for (let n = 0; n < 1000; n++) {
      const cvv = String(n).padStart(3, '0');
      for (const amount of [PLAIN_AMOUNT, 713]) {
        const outcome = signature(await customerSale(cvv, amount));
        const on_page = listed.get(`${cvv}/${amount}`) ?? listed.get(`${cvv}/any`) ?? approved;
        expect(outcome, `CVV ${cvv}, amount ${amount}: its outcome is not the page's`).toBe(on_page);
      }
    }
  });

  it('card numbers: the listed ones are approved; a number failing Luhn, a past expiry and a missing CVV are refused as listed', async () => {
    for (const [, number] of table('Card numbers', 'Brand')) {
      expect(answerOf(await customerSale('568', PLAIN_AMOUNT, ticked(number!)[0]!))).toBe('approved');
    }
    const [luhn, expired, no_cvv] = table('Card numbers', '`error_details`');
    expectRow(luhn!, await customerSale('568', PLAIN_AMOUNT, ticked(luhn![0]!)[0]!), [1, 2, 2]);
    const [month, year] = ticked(expired![0]!)[0]!.split('/').map(Number);
    expectRow(expired!, await customerSale('568', PLAIN_AMOUNT, PAN, { month: month!, year: year! }), [1, 2, 2]);
    expectRow(no_cvv!, await customerSale(null, PLAIN_AMOUNT), [1, 2, 2]);
  });

  it('stored-card charges: every row, and every amount up to 20 000, first try and retry', async () => {
    const rows = table('Stored-card charges: the amount decides', 'Amount');
    const approved = signature(await storedCardCharge(PLAIN_AMOUNT));
    const listed = new Set<number>();
    for (const row of rows.filter((r) => ticked(r[0]!).length > 0)) {
      const amount = Number(ticked(row[0]!)[0]);
      listed.add(amount);
      expectRow(row, await storedCardCharge(amount), [1, 2, 3], false);
      const retry = await storedCardCharge(amount, true);
      // "every retry fails too", or the retry's own outcome named in the row.
      if (answerOf(retry) === 'approved') expect(row[3]).toContain(`\`approved\` \`${detailsOf(retry)}\``);
      else expect(signature(retry)).toBe(signature(await storedCardCharge(amount)));
    }
    for (let amount = 1; amount <= SCAN_AMOUNTS_UP_TO; amount++) {
      if (listed.has(amount)) continue;
      expect(signature(await storedCardCharge(amount)), `amount ${amount} is not on the page`).toBe(approved);
      expect(signature(await storedCardCharge(amount, true)), `amount ${amount} retried`).toBe(approved);
    }
    const other = rows.find((row) => row[0] === 'any other')!;
    expectRow(other, await storedCardCharge(PLAIN_AMOUNT), [1, 2, 3]);
  });

  it('payouts: every row, and every amount up to 20 000', async () => {
    const rows = table('Payouts: the amount decides', 'Amount');
    const listed = new Set<number>();
    for (const row of rows.filter((r) => ticked(r[0]!).length > 0)) {
      const amount = Number(ticked(row[0]!)[0]);
      listed.add(amount);
      expectRow(row, await cardPayout(amount), [1, 2, 3]);
    }
    const other = rows.find((row) => row[0] === 'any other')!;
    expectRow(other, await cardPayout(PLAIN_AMOUNT), [1, 2, 3]);
    const approved = signature(await cardPayout(PLAIN_AMOUNT));
    for (let amount = 1; amount <= SCAN_AMOUNTS_UP_TO; amount++) {
      if (!listed.has(amount)) expect(signature(await cardPayout(amount)), `payout amount ${amount} is not on the page`).toBe(approved);
    }
  });
});
