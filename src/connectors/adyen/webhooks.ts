// Adyen's notifications (standard webhooks), verified and read: every item of a batch must carry
// in additionalData.hmacSignature the HMAC-SHA256 (keyed with the gateway's hex hmac_key, Base64)
// of pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success,
// compared in constant time; one forged item and nothing of the batch is read.
//
// A batch of several items (Adyen sends one item at a time today, but the format is a list) is
// read item by item into one reading of several events, each applied once by the gateway; items
// the gateway does not read are left out, and a batch with none it reads is ignored.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PaymentEvent, ProcessorResult, WebhookEvent, WebhookReading } from '../connector.js';
import { eventMeaning } from './status-map.js';

/** Items read from one body, at most (a body with more is not Adyen's). */
const ITEMS_MAX = 100;
const TEXT_MAX_CHARS = 200;

interface Item {
  readonly pspReference: string;
  readonly originalReference: string;
  readonly merchantAccountCode: string;
  readonly merchantReference: string;
  readonly value: number;
  readonly currency: string;
  readonly eventCode: string;
  readonly success: string;
  readonly reason: string | null;
  readonly hmacSignature: string;
  readonly additional: Readonly<Record<string, unknown>>;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function readItem(wrapper: unknown): Item | null {
  const raw = (wrapper as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem;
  if (typeof raw !== 'object' || raw === null) return null;
  const item = raw as Record<string, unknown>;
  const amount = item.amount as { value?: unknown; currency?: unknown } | undefined;
  const additional = (typeof item.additionalData === 'object' && item.additionalData !== null ? item.additionalData : {}) as Record<
    string,
    unknown
  >;
  const psp = text(item.pspReference);
  const code = text(item.eventCode);
  const success = text(item.success);
  const signature = text(additional.hmacSignature);
  if (psp === null || code === null || success === null || signature === null) return null;
  if (typeof amount?.value !== 'number' || !Number.isSafeInteger(amount.value) || typeof amount.currency !== 'string') return null;
  return {
    pspReference: psp,
    originalReference: text(item.originalReference) ?? '',
    merchantAccountCode: text(item.merchantAccountCode) ?? '',
    merchantReference: text(item.merchantReference) ?? '',
    value: amount.value,
    currency: amount.currency,
    eventCode: code,
    success,
    reason: text(item.reason),
    hmacSignature: signature,
    additional,
  };
}

/** Whether the item's signature is the one the key makes (constant time). */
function verified(item: Item, key: Buffer): boolean {
  const payload = [
    item.pspReference,
    item.originalReference,
    item.merchantAccountCode,
    item.merchantReference,
    String(item.value),
    item.currency,
    item.eventCode,
    item.success,
  ].join(':');
  const expected = createHmac('sha256', key).update(payload, 'utf8').digest();
  const given = Buffer.from(item.hmacSignature, 'base64');
  return given.length === expected.length && timingSafeEqual(expected, given);
}

export function readAdyenNotification(hmac_key_hex: string, raw_body: Buffer): WebhookReading {
  let json: unknown;
  try {
    json = JSON.parse(raw_body.toString('utf8'));
  } catch {
    return { kind: 'bad_signature' };
  }
  const wrappers = (json as { notificationItems?: unknown } | null)?.notificationItems;
  // Nothing in it can be verified: not a notification of Adyen's, so not read at all.
  if (!Array.isArray(wrappers) || wrappers.length === 0 || wrappers.length > ITEMS_MAX) return { kind: 'bad_signature' };
  const items = wrappers.map(readItem);
  const key = Buffer.from(hmac_key_hex, 'hex');
  if (items.some((item) => item === null || !verified(item, key))) return { kind: 'bad_signature' };
  if (items.length === 1) return readVerified(items[0]!);
  const readings = items.map((item) => readVerified(item!));
  const events = readings.flatMap((reading) => (reading.kind === 'event' ? [reading.event] : []));
  if (events.length === 0) return { kind: 'ignored', reason: `a batch of ${items.length} items, none read` };
  return { kind: 'events', events };
}

function readVerified(item: Item): WebhookReading {
  const meaning = eventMeaning(item.eventCode);
  if (meaning === null) return { kind: 'ignored', reason: `eventCode ${item.eventCode.slice(0, 40)} is not read` };
  const success = item.success === 'true';
  const base = { event_id: `${item.eventCode}:${item.pspReference}:${item.success}`, event_type: item.eventCode };
  const reason = (item.reason ?? '').slice(0, TEXT_MAX_CHARS);
  const event = (e: Omit<WebhookEvent, 'event_id' | 'event_type'>): WebhookReading => ({ kind: 'event', event: { ...base, ...e } });
  switch (meaning.about) {
    case 'payment': {
      if (item.eventCode === 'AUTHORISATION') {
        // The sale's metadata comes back with its AUTHORISATION: as a flat "metadata.trace_id" key, or
        // as Webhooks v1 describes it, an object under additionalData.metadata. Either finds a payment
        // whose answer was lost (it has no pspReference of ours yet).
        const nested = item.additional.metadata;
        const trace =
          text(item.additional['metadata.trace_id']) ??
          (typeof nested === 'object' && nested !== null ? text((nested as Record<string, unknown>).trace_id) : null);
        return event({
          match: {
            trace_id: trace !== null && /^[0-9]{1,15}$/.test(trace) ? Number(trace) : null,
            psp_transaction_id: item.pspReference,
            transaction_type: null,
            reference: item.merchantReference || null,
          },
          result: success
            ? approved(item.pspReference, item, 'Authorised')
            : { kind: 'rejected', psp_transaction_id: item.pspReference, error_code: 'Refused', error_details: reason || 'Refused' },
        });
      }
      // A capture or cancel of a payment (originalReference): confirmed, or (success false,
      // CAPTURE_FAILED) not: nothing of ours changes then, the authorization stays as it was.
      const psp_payment_id = item.originalReference;
      if (psp_payment_id === '') return { kind: 'ignored', reason: `${item.eventCode} without originalReference` };
      const payment_event: PaymentEvent | null =
        success && meaning.payment_event === 'captured'
          ? { kind: 'captured', psp_payment_id, amount_minor: item.value }
          : success && meaning.payment_event === 'voided'
            ? { kind: 'voided', psp_payment_id }
            : null;
      return event({
        match: { trace_id: null, psp_transaction_id: psp_payment_id, transaction_type: null, reference: item.merchantReference || null },
        result: null,
        ...(payment_event ? { payment_event } : {}),
      });
    }
    case 'refund': {
      const ok = success && item.eventCode === 'REFUND';
      const result: ProcessorResult = ok
        ? approved(item.pspReference, item, 'Refund approved')
        : {
            kind: 'rejected',
            psp_transaction_id: item.pspReference,
            error_code: item.eventCode,
            error_details: reason || 'Refund refused by the processor',
          };
      return event({
        match: {
          trace_id: null,
          psp_transaction_id: item.pspReference,
          transaction_type: 'refund',
          reference: item.merchantReference || null,
        },
        result,
        ...(ok && item.originalReference !== '' && item.value > 0
          ? {
              payment_event: {
                kind: 'refunded' as const,
                psp_payment_id: item.originalReference,
                psp_refund_id: item.pspReference,
                amount_minor: item.value,
                currency: item.currency,
              },
            }
          : {}),
      });
    }
    case 'payout': {
      const paid = success && !meaning.failed_always;
      return event({
        match: {
          trace_id: null,
          psp_transaction_id: item.pspReference,
          transaction_type: 'payout',
          reference: item.merchantReference || null,
        },
        result: paid
          ? approved(item.pspReference, item, 'Payout paid')
          : {
              kind: 'rejected',
              psp_transaction_id: item.pspReference,
              error_code: item.eventCode,
              error_details: (reason || `Payout ${item.eventCode === 'PAYOUT_EXPIRE' ? 'expired' : 'declined'} at the processor`).slice(
                0,
                TEXT_MAX_CHARS,
              ),
            },
      });
    }
    case 'dispute': {
      const psp_payment_id = item.originalReference;
      if (psp_payment_id === '') return { kind: 'ignored', reason: `${item.eventCode} without originalReference` };
      const reason_code = text(item.additional.chargebackReasonCode);
      const due_ms = Date.parse(text(item.additional.defensePeriodEndsAt) ?? '');
      const why = reason_code !== null && item.reason !== null ? `${item.reason} (${reason_code})` : (item.reason ?? reason_code);
      return event({
        match: { trace_id: null, psp_transaction_id: psp_payment_id, transaction_type: null, reference: null },
        result: null,
        payment_event: {
          kind: 'dispute',
          psp_payment_id,
          dispute: {
            psp_dispute_id: item.pspReference,
            stage: meaning.stage,
            amount_minor: item.value > 0 ? item.value : null,
            currency: /^[A-Z]{3}$/.test(item.currency) ? item.currency : null,
            reason: why === null ? null : why.slice(0, TEXT_MAX_CHARS),
            evidence_due_at_ms: Number.isFinite(due_ms) ? due_ms : null,
          },
        },
      });
    }
  }
}

function approved(psp: string, item: Item, words: string): ProcessorResult {
  return {
    kind: 'approved',
    psp_transaction_id: psp,
    charge_amount_minor: item.value,
    charge_currency: item.currency,
    error_code: '0',
    error_details: words,
  };
}
