// Subscription event notifications (spec §6.4 "not shown"; designed in docs/subscriptions.md):
// the body, built once when the event happens and stored in the outbox, and its
// Gt-Authentication header (decisions.md §2), computed at each send from the stored body so
// every resend is identical.
import { signHeader } from '../domain/signing.js';
import type { SubscriptionEvent, SubscriptionEventDetails } from '../domain/subscription-state.js';
import type { SubscriptionRow } from '../domain/subscription-record.js';
import type { UnitOfWork } from '../store/store.js';
import { newNotificationRow } from './schedule.js';

export const SUBSCRIPTION_EVENT_KIND = 'subscription_event';

/** The domain's (domain/subscription-state.ts): the state machine's changes carry them. */
export type { SubscriptionEventDetails } from '../domain/subscription-state.js';

export type SubscriptionEventPayload = Record<string, string | number | null | Record<string, string | number>>;

export function buildSubscriptionEventPayload(
  row: SubscriptionRow,
  event: SubscriptionEvent,
  details: SubscriptionEventDetails,
  timestamp: number,
): SubscriptionEventPayload {
  const payload: SubscriptionEventPayload = {
    event,
    merchant_id: row.merchant_id,
    application_key: row.application_key,
    subscription_id: row.subscription_id,
    plan_id: row.plan_id,
    cid: row.cid,
    subscription_status: row.status,
    price: { price_id: row.price_id, amount: row.amount_minor, currency: row.currency },
    cycles_charged: row.cycles_charged,
    next_charge_at: row.next_charge_at_ms === null ? null : Math.floor(row.next_charge_at_ms / 1000),
  };
  if (details.cycle !== undefined) payload.cycle = details.cycle;
  if (details.trace_id !== undefined && details.trace_id !== null) payload.trace_id = details.trace_id;
  if (details.error_details !== undefined && details.error_details !== null) payload.error_details = details.error_details;
  payload.version = '1.3';
  payload.timestamp = timestamp;
  return payload;
}

/** Gt-Authentication of a subscription event: event + merchant_id + application_key + cid + plan_id + subscription_id + subscription_status + timestamp + secret. */
export function subscriptionEventSignature(payload: Readonly<Record<string, unknown>>, secret: string): string {
  const part = (name: string) => {
    const value = payload[name];
    return typeof value === 'string' || typeof value === 'number' ? value : '';
  };
  return signHeader(
    [
      part('event'),
      part('merchant_id'),
      part('application_key'),
      part('cid'),
      part('plan_id'),
      part('subscription_id'),
      part('subscription_status'),
      part('timestamp'),
    ],
    secret,
  );
}

/** Writes the event to the outbox inside the caller's transaction (called by transitions/subscription.ts only). */
export async function recordSubscriptionEvent(
  tx: UnitOfWork,
  row: SubscriptionRow,
  event: SubscriptionEvent,
  details: SubscriptionEventDetails,
  now_ms: number,
): Promise<void> {
  const payload = buildSubscriptionEventPayload(row, event, details, Math.floor(now_ms / 1000));
  await tx.notifications.insert(
    newNotificationRow(
      {
        kind: SUBSCRIPTION_EVENT_KIND,
        trace_id: null,
        subscription_id: row.subscription_id,
        merchant_id: row.merchant_id,
        url: row.notification_url,
      },
      payload,
      now_ms,
    ),
  );
}
