// The back office's transactions search form (docs/backoffice.md), read from a query string into
// the store's search (TransactionSearch, store/transaction-store.ts search): every field optional, each checked by its own
// rule, and a wrong one named to the person who typed it. Dates are whole UTC days, the "to" day
// included; amounts are typed in the currency's major units ("12.50"), as a person reads them,
// so a search by amount names its currency.
import { parseMajorAmount } from './money.js';
import { textProblem } from './text.js';
import type { TransactionStatus, TransactionType } from './transaction-state.js';

/** A transactions search; every field left out matches any transaction. */
export interface TransactionSearch {
  /** null: every merchant's (an operator). */
  readonly merchant_id: string | null;
  readonly trace_id?: number | undefined;
  /** The merchant's order_id: a cashier transaction's own order_id or its session's. */
  readonly order_id?: string | undefined;
  readonly pin?: string | undefined;
  readonly status?: TransactionStatus | undefined;
  readonly transaction_type?: TransactionType | undefined;
  readonly gateway_id?: string | undefined;
  /** Created at or after. */
  readonly created_from_ms?: number | undefined;
  /** Created before. */
  readonly created_before_ms?: number | undefined;
  /** ISO 4217, capitals. */
  readonly currency?: string | undefined;
  readonly amount_min_minor?: number | undefined;
  readonly amount_max_minor?: number | undefined;
}

/**
 * Where a page of a list of transactions starts: the last row of the page before. trace_ids are
 * drawn at random (domain/trace-id.ts), so lists go by creation time, the trace_id telling apart
 * rows of one millisecond; the key is both, written `created_at_ms.trace_id` in a link.
 */
export interface TransactionPageKey {
  readonly created_at_ms: number;
  readonly trace_id: number;
}

/** A row's page key as a link carries it. */
export function transactionPageKey(row: TransactionPageKey): string {
  return `${row.created_at_ms}.${row.trace_id}`;
}

/** A page key from a link, or null when `text` is not one. */
export function parseTransactionPageKey(text: string): TransactionPageKey | null {
  const key = /^(0|[1-9][0-9]{0,14})\.([1-9][0-9]{0,14})$/.exec(text);
  return key === null ? null : { created_at_ms: Number(key[1]), trace_id: Number(key[2]) };
}

export const SEARCH_TEXT_MAX_CHARS = 128;
/** The statuses a transaction can have (domain/transaction-state.ts), offered by the form. */
export const SEARCH_STATUSES = [
  'pending',
  'approved',
  'declined',
  'requested',
  'authorized',
  'in progress',
  'rejected',
  'cancelled',
  'chargeback',
  'reversed',
  'error',
] as const satisfies readonly TransactionStatus[];
export const SEARCH_TYPES = ['sale', 'refund', 'payout'] as const satisfies readonly TransactionType[];

/** The form's fields as the page names them; the labels are the page's. */
export const SEARCH_FIELDS = [
  'trace_id',
  'order_id',
  'pin',
  'status',
  'type',
  'gateway',
  'merchant',
  'from',
  'to',
  'currency',
  'amount_min',
  'amount_max',
] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

export type SearchParse =
  | {
      readonly ok: true;
      readonly search: Omit<TransactionSearch, 'merchant_id'>;
      readonly before: TransactionPageKey | null;
      /** The merchant asked for (operators only; a merchant's staff are kept to their own whatever this says). */
      readonly merchant: string | null;
      readonly values: Partial<Record<SearchField, string>>;
    }
  | {
      readonly ok: false;
      readonly field: SearchField | 'before';
      readonly reason: string;
      readonly values: Partial<Record<SearchField, string>>;
    };

const DAY_MS = 86_400_000;
const TRACE_ID = /^[1-9][0-9]{0,14}$/;
const CURRENCY = /^[A-Za-z]{3}$/;

function dayStart(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match === null) return null;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  // Date.UTC rolls 2026-02-31 over into March: refuse what does not come back the same.
  return new Date(ms).toISOString().slice(0, 10) === text ? ms : null;
}

export function parseTransactionSearch(query: Readonly<Record<string, unknown>>): SearchParse {
  const values: Partial<Record<SearchField, string>> = {};
  for (const field of SEARCH_FIELDS) {
    const raw = query[field];
    if (typeof raw === 'string' && raw.trim() !== '') values[field] = raw.trim();
  }
  const fail = (field: SearchField | 'before', reason: string): SearchParse => ({ ok: false, field, reason, values });
  for (const [field, value] of Object.entries(values) as [SearchField, string][]) {
    if ([...value].length > SEARCH_TEXT_MAX_CHARS || textProblem(value) !== null)
      return fail(field, `text of up to ${SEARCH_TEXT_MAX_CHARS} characters`);
  }
  const search: { -readonly [K in keyof Omit<TransactionSearch, 'merchant_id'>]: Omit<TransactionSearch, 'merchant_id'>[K] } = {};
  if (values.trace_id !== undefined) {
    if (!TRACE_ID.test(values.trace_id)) return fail('trace_id', 'a positive whole number');
    search.trace_id = Number(values.trace_id);
  }
  if (values.order_id !== undefined) search.order_id = values.order_id;
  if (values.pin !== undefined) search.pin = values.pin;
  if (values.status !== undefined) {
    const status = SEARCH_STATUSES.find((known) => known === values.status);
    if (status === undefined) return fail('status', `one of ${SEARCH_STATUSES.join(', ')}`);
    search.status = status;
  }
  if (values.type !== undefined) {
    const type = SEARCH_TYPES.find((known) => known === values.type);
    if (type === undefined) return fail('type', `one of ${SEARCH_TYPES.join(', ')}`);
    search.transaction_type = type;
  }
  if (values.gateway !== undefined) search.gateway_id = values.gateway;
  if (values.from !== undefined) {
    const from = dayStart(values.from);
    if (from === null) return fail('from', 'a date as YYYY-MM-DD');
    search.created_from_ms = from;
  }
  if (values.to !== undefined) {
    const to = dayStart(values.to);
    if (to === null) return fail('to', 'a date as YYYY-MM-DD');
    search.created_before_ms = to + DAY_MS;
  }
  if (
    search.created_from_ms !== undefined &&
    search.created_before_ms !== undefined &&
    search.created_from_ms >= search.created_before_ms
  ) {
    return fail('to', 'a day on or after the "from" day');
  }
  if (values.currency !== undefined) {
    if (!CURRENCY.test(values.currency)) return fail('currency', 'a currency code of 3 letters, such as USD');
    search.currency = values.currency.toUpperCase();
  }
  for (const [field, key] of [
    ['amount_min', 'amount_min_minor'],
    ['amount_max', 'amount_max_minor'],
  ] as const) {
    const value = values[field];
    if (value === undefined) continue;
    // The same amount means different minor units in USD and JPY: an amount names its currency.
    if (search.currency === undefined) return fail('currency', 'the currency the amounts are in (USD, EUR...)');
    const minor = parseMajorAmount(value, search.currency);
    if (minor === null) return fail(field, `an amount in ${search.currency} such as 19.99, with at most its decimals`);
    search[key] = minor;
  }
  if (search.amount_min_minor !== undefined && search.amount_max_minor !== undefined && search.amount_min_minor > search.amount_max_minor) {
    return fail('amount_max', 'at least the minimum amount');
  }
  const before_raw = query.before;
  let before: TransactionPageKey | null = null;
  if (typeof before_raw === 'string' && before_raw !== '') {
    before = parseTransactionPageKey(before_raw);
    if (before === null) return fail('before', 'a page of this list (an "Older" link)');
  }
  return { ok: true, search, before, merchant: values.merchant ?? null, values };
}

/** The query string of a search (and a page of it), for links: the next page, the CSV export. */
export function searchQuery(values: Partial<Record<SearchField, string>>, before: TransactionPageKey | null = null): string {
  const params = new URLSearchParams();
  for (const field of SEARCH_FIELDS) if (values[field] !== undefined) params.set(field, values[field]!);
  if (before !== null) params.set('before', transactionPageKey(before));
  return params.toString();
}
