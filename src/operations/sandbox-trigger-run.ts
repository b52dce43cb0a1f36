// A sandbox flow trigger run to its end (POST /sandbox/triggers/{name}, `paygate trigger`,
// docs/triggers.md): the flow is started (operations/sandbox-flows.ts), then this waits, within a
// bound, until the notification the trigger names is written (what comes later is done by the
// running gateway's workers: due work, billing) and until its first delivery attempt has ended,
// and reports every notification of the flow: exactly the body sent (a transaction notification
// with its signature; a subscription event with its Gt-Authentication header), where, and how the
// merchant's endpoint answered. Waiting is polling the store: nothing is held in memory, so another
// instance of the gateway may do the later steps.
import type { Config } from '../config.js';
import type { NotificationRow, NotificationState } from '../domain/notification-record.js';
import { endLabel, findTrigger, type TriggerEnd, type TriggerWait } from '../domain/sandbox-triggers.js';
import { redactUrl } from '../logging.js';
import { signedNotificationBody } from '../notifications/sender.js';
import { SUBSCRIPTION_EVENT_KIND, subscriptionEventSignature } from '../notifications/subscription-event.js';
import type { OperationDeps } from './deps.js';
import { type FlowRefusal, type FlowRequest, type FlowSubject, startFlow } from './sandbox-flows.js';

/** No trigger waits longer than this for its end, whatever the sandbox's delays are set to. */
export const TRIGGER_WAIT_MAX_MS = 120_000;
/** Beyond the configured delay: a due-work or billing pass, a slow machine. */
const TRIGGER_WAIT_MARGIN_MS = 10_000;
const POLL_MS = 100;

/** One notification of the flow, as it was sent (or will be). */
export interface SentNotification {
  readonly id: number;
  readonly kind: NotificationRow['kind'];
  readonly trace_id: number | null;
  readonly subscription_id: string | null;
  /** The transaction status, or the subscription event, it reports. */
  readonly reports: string;
  /** The merchant's URL (a credential in its query string masked). */
  readonly url: string;
  readonly state: NotificationState;
  readonly attempts: number;
  /** Why the last attempt did not deliver it (the merchant's reply, a time-out …); null when none failed. */
  readonly last_error: string | null;
  /** The JSON body exactly as POSTed. */
  readonly body: Record<string, unknown>;
  /** Headers that sign it (a subscription event's Gt-Authentication); empty for a transaction notification. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface TriggerReport {
  readonly trigger: string;
  readonly merchant_id: string;
  readonly notification_url: string;
  /** What the trigger ends in: `sale approved`, `subscription.renewed` … */
  readonly ends_in: string;
  /** The flow reached it within the wait; false: it is on its way (the report says what was sent so far). */
  readonly reached: boolean;
  /** The transaction the named notification is about (a renewal's sale for a subscription event); null for a cancellation. */
  readonly trace_id: number | null;
  readonly subscription_id: string | null;
  /** The status the transaction (or subscription) has now. */
  readonly status_now: string | null;
  /** The notification the trigger names; null when not reached. */
  readonly notification: SentNotification | null;
  /** Every notification of the flow, oldest first. */
  readonly notifications: readonly SentNotification[];
}

export type TriggerRunOutcome =
  { readonly kind: 'unknown_trigger' } | FlowRefusal | { readonly kind: 'ran'; readonly report: TriggerReport };

export async function runFlowTrigger(deps: OperationDeps, name: string, request: FlowRequest): Promise<TriggerRunOutcome> {
  const trigger = findTrigger(name);
  if (!trigger) return { kind: 'unknown_trigger' };
  const started = await startFlow(deps, trigger, request);
  if (started.kind !== 'started') return started;
  const secret = (await deps.merchants.find(request.merchant_id))?.secret ?? '';

  const read = () => flowNotifications(deps, started.subject, started.trace_ids);
  const end_deadline_ms = deps.wall_clock.now_ms() + waitBound(deps.config, trigger.wait);
  let rows = await read();
  while (!named(rows, trigger.ends_in, started.subject) && deps.wall_clock.now_ms() < end_deadline_ms) {
    await sleep(POLL_MS);
    rows = await read();
  }
  // Its first attempt (the worker is woken when it commits), within the time-out of one request.
  const sent_deadline_ms = deps.wall_clock.now_ms() + deps.config.limits.outbound_timeout_ms + 2_000;
  for (;;) {
    const found = named(rows, trigger.ends_in, started.subject);
    if (!found || found.attempts > 0 || found.state !== 'pending' || deps.wall_clock.now_ms() >= sent_deadline_ms) break;
    await sleep(POLL_MS);
    rows = await read();
  }
  const found = named(rows, trigger.ends_in, started.subject);
  const shown = rows.map((row) => shownNotification(row, secret));
  const trace_id = traceIdOf(started.subject, found);
  return {
    kind: 'ran',
    report: {
      trigger: trigger.name,
      merchant_id: request.merchant_id,
      notification_url: redactUrl(found?.url ?? rows[0]?.url ?? request.notification_url ?? ''),
      ends_in: endLabel(trigger.ends_in),
      reached: found !== null,
      trace_id,
      subscription_id: started.subject.kind === 'subscription' ? started.subject.subscription_id : null,
      status_now: await currentStatus(deps, request.merchant_id, started.subject, trace_id),
      notification: found ? shown[rows.indexOf(found)]! : null,
      notifications: shown,
    },
  };
}

/** How long a trigger waits for its end: the sandbox's configured delay for it, a margin, at most TRIGGER_WAIT_MAX_MS. */
export function waitBound(config: Config, wait: TriggerWait): number {
  const delay_ms = {
    none: 0,
    async_settle: config.schedules.sandbox_async_settle_seconds * 1000 + config.schedules.due_work_poll_ms,
    issuer_timeout: config.schedules.sandbox_issuer_timeout_seconds * 1000 + config.schedules.due_work_poll_ms,
    billing: 2 * config.schedules.billing_poll_ms,
  }[wait];
  return Math.min(TRIGGER_WAIT_MAX_MS, delay_ms + TRIGGER_WAIT_MARGIN_MS);
}

/** The flow's notifications: its transactions', and a subscription's events with its charges'. */
async function flowNotifications(deps: OperationDeps, subject: FlowSubject, trace_ids: readonly number[]): Promise<NotificationRow[]> {
  const rows: NotificationRow[] = [];
  for (const trace_id of trace_ids) rows.push(...(await deps.store.notifications.listOfTransaction(trace_id)));
  if (subject.kind === 'subscription') {
    const events = await deps.store.notifications.listOfSubscription(subject.subscription_id);
    rows.push(...events);
    // A renewal's sale is made by the billing worker: found through the events that name it.
    const charges = new Set(events.map((event) => payloadOf(event).trace_id).filter((id): id is number => typeof id === 'number'));
    for (const trace_id of charges) rows.push(...(await deps.store.notifications.listOfTransaction(trace_id)));
  }
  const unique = new Map(rows.map((row) => [row.id, row]));
  return [...unique.values()].sort((a, b) => a.id - b.id);
}

/** The newest notification reporting the trigger's end, or null. */
function named(rows: readonly NotificationRow[], end: TriggerEnd, subject: FlowSubject): NotificationRow | null {
  const matches = rows.filter((row) => {
    const payload = payloadOf(row);
    if (end.kind === 'subscription') return row.kind === SUBSCRIPTION_EVENT_KIND && payload.event === end.event;
    return (
      row.kind !== SUBSCRIPTION_EVENT_KIND &&
      subject.kind === 'transaction' &&
      row.trace_id === subject.trace_id &&
      payload.transaction_type === end.transaction_type &&
      payload.transaction_status === end.status
    );
  });
  return matches.at(-1) ?? null;
}

function payloadOf(row: NotificationRow): Record<string, unknown> {
  return JSON.parse(row.payload_json) as Record<string, unknown>;
}

function traceIdOf(subject: FlowSubject, found: NotificationRow | null): number | null {
  if (subject.kind === 'transaction') return subject.trace_id;
  const trace_id = found ? payloadOf(found).trace_id : undefined;
  return typeof trace_id === 'number' ? trace_id : null;
}

async function currentStatus(
  deps: OperationDeps,
  merchant_id: string,
  subject: FlowSubject,
  trace_id: number | null,
): Promise<string | null> {
  if (subject.kind === 'subscription') return (await deps.store.subscriptions.get(merchant_id, subject.subscription_id))?.status ?? null;
  return trace_id === null ? null : ((await deps.store.transactions.get(trace_id))?.status ?? null);
}

/** What the sender POSTs for this row (notifications/sender.ts): the same signing, from the same stored body. */
function shownNotification(row: NotificationRow, secret: string): SentNotification {
  const payload = payloadOf(row);
  const event = row.kind === SUBSCRIPTION_EVENT_KIND;
  return {
    id: row.id,
    kind: row.kind,
    trace_id: row.trace_id,
    subscription_id: row.subscription_id,
    reports: event ? String(payload.event) : `${String(payload.transaction_type)} ${String(payload.transaction_status)}`,
    url: redactUrl(row.url),
    state: row.state,
    attempts: row.attempts,
    last_error: row.last_error,
    body: event ? payload : (JSON.parse(signedNotificationBody(row.payload_json, secret)) as Record<string, unknown>),
    headers: event ? { 'gt-authentication': subscriptionEventSignature(payload, secret) } : {},
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
