// The one map of PayPal's statuses to ours (docs/connectors.md), and the readers of the few fields
// of PayPal's objects the connector uses (orders, captures, refunds, payout items), each read
// defensively: anything of another shape is null and the caller treats the answer as unreadable.
//
// Orders: CREATED / PAYER_ACTION_REQUIRED (the buyer has not approved) and APPROVED (approved, not
// captured) are pending; COMPLETED is its capture's status. Captures: COMPLETED,
// PARTIALLY_REFUNDED, REFUNDED approved; PENDING pending; DECLINED, FAILED rejected. VOIDED orders
// are rejected. Refunds: COMPLETED approved, PENDING pending, FAILED and CANCELLED rejected.
// Payout items: SUCCESS approved; FAILED, BLOCKED, RETURNED, REFUNDED, REVERSED rejected; PENDING,
// UNCLAIMED (the receiver has no account yet: until they claim it or it is returned after 30
// days) and ONHOLD pending.
import { formatAmount, parseMajorAmount } from '../../domain/money.js';
import type { ProcessorResult } from '../connector.js';

type Json = Record<string, unknown>;
/** PayPal's JSON read defensively (disputes.ts reads its disputes the same way). */
export const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Ours at PayPal: custom_id of orders and refunds, sender_item_id of payout items. */
export const CUSTOM_ID_PREFIX = 'paygate-';
export function customId(trace_id: number): string {
  return `${CUSTOM_ID_PREFIX}${trace_id}`;
}
export function traceIdOf(custom_id: string | null): number | null {
  if (custom_id === null || !custom_id.startsWith(CUSTOM_ID_PREFIX)) return null;
  const n = Number(custom_id.slice(CUSTOM_ID_PREFIX.length));
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** PayPal's amount text ("10.00"; no decimals for currencies without minor units). */
export function paypalValue(amount_minor: number, currency: string): string {
  // formatAmount gives "19.99 USD": PayPal wants the number alone.
  return formatAmount(amount_minor, currency).split(' ')[0]!;
}
export function minorOf(money: unknown): { readonly amount_minor: number; readonly currency: string } | null {
  const m = obj(money);
  const currency = str(m?.currency_code) ?? str(m?.currency);
  const value = str(m?.value);
  if (currency === null || value === null) return null;
  try {
    const amount_minor = parseMajorAmount(value, currency);
    return amount_minor === null ? null : { amount_minor, currency };
  } catch {
    return null;
  }
}

export interface PayPalCapture {
  readonly id: string;
  readonly status: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly custom_id: string | null;
  readonly order_id: string | null;
}
export interface PayPalRefund {
  readonly id: string;
  readonly status: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly custom_id: string | null;
  /** From its link rel "up". */
  readonly capture_id: string | null;
}
export interface PayPalOrder {
  readonly id: string;
  readonly status: string;
  readonly custom_id: string | null;
  readonly approve_url: string | null;
  readonly captures: readonly PayPalCapture[];
  readonly refunds: readonly PayPalRefund[];
}
export interface PayPalPayoutItem {
  readonly payout_item_id: string;
  readonly payout_batch_id: string | null;
  readonly status: string;
  readonly sender_item_id: string | null;
  readonly amount_minor: number | null;
  readonly currency: string | null;
  readonly error: string | null;
}

function links(v: unknown): { rel: string; href: string }[] {
  return Array.isArray(v)
    ? v.map(obj).flatMap((l) => (l && str(l.rel) && str(l.href) ? [{ rel: l.rel as string, href: l.href as string }] : []))
    : [];
}

export function readCapture(v: unknown): PayPalCapture | null {
  const c = obj(v);
  const money = minorOf(c?.amount);
  if (!c || !str(c.id) || !str(c.status) || !money) return null;
  const related = obj(obj(c.supplementary_data)?.related_ids);
  const up = links(c.links).find((l) => l.rel === 'up' && l.href.includes('/checkout/orders/'));
  return {
    id: c.id as string,
    status: c.status as string,
    ...money,
    custom_id: str(c.custom_id),
    order_id: str(related?.order_id) ?? (up ? decodeURIComponent(up.href.split('/').pop() ?? '') : null),
  };
}
export function readRefund(v: unknown): PayPalRefund | null {
  const r = obj(v);
  const money = minorOf(r?.amount);
  if (!r || !str(r.id) || !str(r.status) || !money) return null;
  const up = links(r.links).find((l) => l.rel === 'up' && l.href.includes('/captures/'));
  return {
    id: r.id as string,
    status: r.status as string,
    ...money,
    custom_id: str(r.custom_id),
    capture_id: up ? decodeURIComponent(up.href.split('/').pop() ?? '') : null,
  };
}
export function readOrder(v: unknown): PayPalOrder | null {
  const o = obj(v);
  if (!o || !str(o.id) || !str(o.status)) return null;
  const unit = Array.isArray(o.purchase_units) ? obj(o.purchase_units[0]) : null;
  const payments = obj(unit?.payments);
  const list = <T>(x: unknown, read: (y: unknown) => T | null): T[] =>
    Array.isArray(x) ? x.map(read).filter((y): y is T => y !== null) : [];
  const approve = links(o.links).find((l) => l.rel === 'payer-action' || l.rel === 'approve');
  return {
    id: o.id as string,
    status: o.status as string,
    custom_id: str(unit?.custom_id),
    approve_url: approve?.href ?? null,
    captures: list(payments?.captures, readCapture),
    refunds: list(payments?.refunds, readRefund),
  };
}
export function readPayoutItem(v: unknown): PayPalPayoutItem | null {
  const i = obj(v);
  if (!i || !str(i.payout_item_id) || !str(i.transaction_status)) return null;
  const item = obj(i.payout_item);
  const money = minorOf(item?.amount);
  return {
    payout_item_id: i.payout_item_id as string,
    payout_batch_id: str(i.payout_batch_id),
    status: i.transaction_status as string,
    sender_item_id: str(item?.sender_item_id),
    amount_minor: money?.amount_minor ?? null,
    currency: money?.currency ?? null,
    error: str(obj(i.errors)?.name),
  };
}
/** PayPal's error name and first issue, for error_details. */
export function readErrorCodes(v: unknown): string | null {
  const e = obj(v);
  const issue = Array.isArray(e?.details) ? str(obj(e.details[0])?.issue) : null;
  const name = str(e?.name);
  return [name, issue].filter((x) => x !== null).join(' ') || null;
}

const pending = (psp_transaction_id: string, error_details: string, recheck_after_ms: number): ProcessorResult => ({
  kind: 'pending',
  psp_transaction_id,
  error_code: '0',
  error_details,
  later: null,
  recheck_after_ms,
});

/** A capture's result (psp_transaction_id: the order's id, the deposit's id at PayPal). */
export function captureResult(capture: PayPalCapture, order_id: string, recheck_after_ms: number): ProcessorResult {
  switch (capture.status) {
    case 'COMPLETED':
    case 'PARTIALLY_REFUNDED':
    case 'REFUNDED':
      return {
        kind: 'approved',
        psp_transaction_id: order_id,
        charge_amount_minor: capture.amount_minor,
        charge_currency: capture.currency,
        error_code: '0',
        error_details: 'Approved',
      };
    case 'PENDING':
      return pending(order_id, 'Captured, pending at PayPal (under review); the final status will be notified', recheck_after_ms);
    default:
      return {
        kind: 'rejected',
        psp_transaction_id: order_id,
        error_code: capture.status,
        error_details: `Capture ${capture.status.toLowerCase()} by PayPal`,
        decline: 'soft',
      };
  }
}

/** An order's result as a lookup sees it (it never captures). */
export function orderResult(order: PayPalOrder, recheck_after_ms: number): ProcessorResult {
  const capture = order.captures.at(-1);
  if (order.status === 'COMPLETED' && capture) return captureResult(capture, order.id, recheck_after_ms);
  if (order.status === 'VOIDED')
    return { kind: 'rejected', psp_transaction_id: order.id, error_code: 'VOIDED', error_details: 'The order was voided at PayPal' };
  if (order.status === 'APPROVED') return pending(order.id, 'Approved by the buyer, not captured yet', recheck_after_ms);
  return pending(order.id, 'Waiting for the buyer at PayPal', recheck_after_ms);
}

export function refundResult(refund: PayPalRefund, recheck_after_ms: number): ProcessorResult {
  if (refund.status === 'COMPLETED')
    return {
      kind: 'approved',
      psp_transaction_id: refund.id,
      charge_amount_minor: refund.amount_minor,
      charge_currency: refund.currency,
      error_code: '0',
      error_details: 'Refunded',
    };
  if (refund.status === 'PENDING')
    return pending(refund.id, 'Refund pending at PayPal; the final status will be notified', recheck_after_ms);
  return {
    kind: 'rejected',
    psp_transaction_id: refund.id,
    error_code: refund.status,
    error_details: `Refund ${refund.status.toLowerCase()} at PayPal`,
  };
}

const PAYOUT_REJECTED: ReadonlySet<string> = new Set(['FAILED', 'BLOCKED', 'RETURNED', 'REFUNDED', 'REVERSED']);

/** A payout item's result (psp_transaction_id: the payout batch's id). */
export function payoutResult(
  item: PayPalPayoutItem,
  batch_id: string,
  asked: { amount_minor: number; currency: string },
  recheck_after_ms: number,
): ProcessorResult {
  if (item.status === 'SUCCESS')
    return {
      kind: 'approved',
      psp_transaction_id: batch_id,
      charge_amount_minor: item.amount_minor ?? asked.amount_minor,
      charge_currency: item.currency ?? asked.currency,
      error_code: '0',
      error_details: 'Paid out',
    };
  if (PAYOUT_REJECTED.has(item.status))
    return {
      kind: 'rejected',
      psp_transaction_id: batch_id,
      error_code: item.status,
      error_details: `Payout ${item.status.toLowerCase()} by PayPal${item.error ? ` (${item.error})` : ''}`,
      decline: item.status === 'BLOCKED' ? 'hard' : 'soft',
    };
  if (item.status === 'UNCLAIMED')
    return pending(
      batch_id,
      'Unclaimed: the receiver has no PayPal account yet (paid when claimed, returned after 30 days)',
      recheck_after_ms,
    );
  return pending(batch_id, `Payout ${item.status.toLowerCase()} at PayPal; the final status will be notified`, recheck_after_ms);
}
