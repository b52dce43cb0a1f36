// PostgreSQL's group commit for held sales (issue 29, item 2). A held sale (held-writes.ts) is
// written by one statement: its row, its status changes, its notification. Written alone, each
// one is a round trip (a socket write and a read in the gateway, a bind, an executor start and a
// COMMIT with its WAL flush in PostgreSQL). The held sales that arrive while this instance's
// statements are in flight wait instead, and the next statement writes all of them: one INSERT
// per table (its rows one JSON array parameter), in one statement and one commit. Each caller is
// answered once that statement has returned, so an answer still means "committed".
//
// At low load a statement holds one sale and nothing waits: a statement starts on the next turn of
// the event loop (setImmediate, so that the sales decided in this turn go together) whenever fewer
// than BATCHES_IN_FLIGHT are under way.
//
// A row whose idempotency key or trace_id is taken is not inserted (ON CONFLICT DO NOTHING), and
// neither are its status changes or notification (they join the rows inserted); its sale is told
// WritesNotHeld alone and goes the usual way, as when it was written alone. Units are written in
// their key's order, so two statements racing for the same keys wait for each other in one order
// and do not deadlock. A statement that fails for any other reason wrote nothing (it is one
// statement outside a transaction); its sales are then written again one by one, so that one bad
// sale fails alone.
import { CompiledQuery, type Insertable } from 'kysely';
import type { NotificationRow } from '../../domain/notification-record.js';
import type { NotificationTable } from '../schema.js';
import { type InsertLease, WritesNotHeld } from '../store.js';
import type { SqlContext } from './context.js';
import type { Held } from './held-writes.js';
import { notificationValues } from './notifications.js';
import { quoted } from '../sql-text.js';

/** Statements of held sales under way at once, per instance (the pool's other connections serve the rest). */
export const BATCHES_IN_FLIGHT = 2;
/** Sales in one statement, at most: its three JSON parameters stay under some 200 KB. */
export const BATCH_MAX_UNITS = 64;

interface Unit {
  readonly held: Held;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** One sale as written: its notification with the lease it carries, if any. */
interface Prepared {
  readonly unit: Unit;
  readonly notification: Record<string, unknown> | null;
  readonly lease: InsertLease | null;
}

export class HeldBatches {
  private queue: Unit[] = [];
  private in_flight = 0;
  private scheduled = false;
  private readonly texts = new Map<string, string>();
  /** Statements run and sales in them, for tests and benchmarks. */
  readonly stats = { statements: 0, units: 0 };

  constructor(
    private readonly ctx: SqlContext,
    private readonly claimLease: () => InsertLease | null,
    private readonly batches_in_flight = BATCHES_IN_FLIGHT,
    private readonly max_units = BATCH_MAX_UNITS,
  ) {
    if (batches_in_flight < 1 || max_units < 1) throw new Error('held batches need at least one statement of one sale');
  }

  write(held: Held): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ held, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.in_flight >= this.batches_in_flight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    while (this.queue.length > 0 && this.in_flight < this.batches_in_flight) {
      const units = this.queue.splice(0, this.max_units);
      this.in_flight++;
      void this.runBatch(units).finally(() => {
        this.in_flight--;
        this.schedule();
      });
    }
  }

  private async runBatch(units: Unit[]): Promise<void> {
    // Rows of one statement share their columns; sales differ rarely (a field given or not).
    const groups = new Map<string, Unit[]>();
    const trace_ids = new Set<number>();
    for (const unit of units) {
      // Two sales that drew the same trace_id: the statement tells rows apart by it (which rows
      // were inserted, whose changes and notification join them), so the second is refused
      // before anything is written and goes the usual way, drawing again.
      const trace_id = unit.held.row.trace_id;
      if (trace_ids.has(trace_id)) {
        unit.reject(new WritesNotHeld('the key or the trace_id was taken'));
        continue;
      }
      // A notification joins its transaction's row by trace_id; one of another would be dropped.
      if (unit.held.notification && unit.held.notification.trace_id !== trace_id) {
        unit.reject(new WritesNotHeld('a notification of another transaction'));
        continue;
      }
      trace_ids.add(trace_id);
      const key = shapeOf(unit.held);
      const group = groups.get(key);
      if (group) group.push(unit);
      else groups.set(key, [unit]);
    }
    await Promise.all([...groups.values()].map((group) => this.writeGroup(group)));
  }

  private async writeGroup(units: Unit[]): Promise<void> {
    units.sort((a, b) => compareKeys(a.held, b.held));
    const prepared = units.map((unit) => this.prepare(unit));
    let written: Map<number, NotificationRow | null>;
    try {
      written = await this.statement(prepared);
    } catch (error) {
      for (const one of prepared) one.lease?.ended(null);
      if (units.length === 1) {
        units[0]!.reject(error);
        return;
      }
      // A failed statement wrote nothing (or, its connection lost after the COMMIT, everything):
      // each sale again, alone; one already written then finds its key taken.
      await Promise.all(units.map((unit) => this.writeGroup([unit])));
      return;
    }
    let touched = false;
    for (const one of prepared) {
      const trace_id = one.unit.held.row.trace_id;
      if (!written.has(trace_id)) {
        one.lease?.ended(null);
        one.unit.reject(new WritesNotHeld('the key or the trace_id was taken'));
        continue;
      }
      if (one.lease) one.lease.ended(written.get(trace_id) ?? null);
      else if (one.notification) touched = true;
      one.unit.resolve();
    }
    // Written without a lease: the delivery worker is told, as for any other new notification.
    if (touched) this.ctx.touchedNotifications();
  }

  /**
   * The notification is written leased when the delivery worker has a slot free (claimLease): a
   * new transaction's first notification has no older one to wait for (in-order delivery), so
   * nothing would keep a lease round from taking it the moment it commits. Written leased, it
   * costs PostgreSQL no lease statement and no second version of its row (issue 29, item 2).
   */
  private prepare(unit: Unit): Prepared {
    const held_notification = unit.held.notification;
    if (!held_notification) return { unit, notification: null, lease: null };
    const lease = this.claimLease();
    const values: Record<string, unknown> = notificationValues(held_notification);
    // Both lease columns always, null when not leased: one shape for leased and not.
    values.lease_owner = lease?.owner ?? null;
    values.lease_until_ms = lease?.lease_until_ms ?? null;
    return { unit, notification: values, lease };
  }

  /** The statement for sales of one shape; answers the trace_ids inserted, each with its notification's row. */
  private async statement(prepared: readonly Prepared[]): Promise<Map<number, NotificationRow | null>> {
    this.stats.statements++;
    this.stats.units += prepared.length;
    const rows = prepared.map((one) => one.unit.held.row);
    const changes = prepared.flatMap((one) => one.unit.held.changes.map((change) => ({ trace_id: one.unit.held.row.trace_id, ...change })));
    const notifications = prepared.flatMap((one) => (one.notification ? [one.notification] : []));
    const text = this.text(definedColumns(rows[0]!), notifications.length > 0 ? definedColumns(notifications[0]!) : null);
    const parameters = [JSON.stringify(rows), JSON.stringify(changes)];
    if (notifications.length > 0) parameters.push(JSON.stringify(notifications));
    const written = await this.ctx.rows<{ trace_id: number | string; notification: NotificationRow | null }>(
      CompiledQuery.raw(text, parameters),
    );
    return new Map(written.map((row) => [Number(row.trace_id), row.notification]));
  }

  /**
   * The statement's text for rows of these columns: the same for any number of sales, so that each
   * connection prepares it once (pg-prepared.ts). Each table's rows come as one JSON array, read by
   * json_populate_recordset into the table's own row type, so every value takes its column's type.
   */
  private text(row_columns: readonly string[], notification_columns: readonly string[] | null): string {
    const key = `${row_columns.join(',')}|${notification_columns?.join(',') ?? '-'}`;
    const known = this.texts.get(key);
    if (known !== undefined) return known;
    const list = (columns: readonly string[], prefix = '') => columns.map((column) => `${prefix}${quoted(column)}`).join(', ');
    // ORDER BY the changes' place in the array (each sale's in order): status_changes ids, their
    // order in listStatusChanges, follow it.
    let text =
      `with inserted as (insert into transactions (${list(row_columns)}) select ${list(row_columns, 't.')} ` +
      `from json_populate_recordset(null::transactions, $1::json) as t on conflict do nothing returning trace_id), ` +
      `changes as (insert into status_changes (trace_id, from_status, to_status, reason, at_ms) ` +
      `select c.trace_id, c.from_status, c.to_status, c.reason, c.at_ms ` +
      `from json_populate_recordset(null::status_changes, $2::json) with ordinality as c ` +
      `join inserted on inserted.trace_id = c.trace_id order by c.ordinality)`;
    // The notification's row comes back as JSON: its bigints are far below 2^53, and a JSON number
    // is read as a number, as the store's INT8 parser reads them.
    if (notification_columns)
      text +=
        `, notified as (insert into notifications (${list(notification_columns)}) select ${list(notification_columns, 'n.')} ` +
        `from json_populate_recordset(null::notifications, $3::json) as n join inserted on inserted.trace_id = n.trace_id returning *)`;
    const selected = notification_columns
      ? '(select row_to_json(notified) from notified where notified.trace_id = inserted.trace_id)'
      : 'null';
    text += ` select inserted.trace_id, ${selected} as notification from inserted`;
    if (this.texts.size >= MAX_TEXTS) this.texts.delete(this.texts.keys().next().value!);
    this.texts.set(key, text);
    return text;
  }
}

/** Statement texts kept, one per shape: a handful in practice; the bound stops a run-away caller. */
const MAX_TEXTS = 64;

function definedColumns(row: object): string[] {
  return Object.entries(row)
    .filter(([, value]) => value !== undefined)
    .map(([column]) => column);
}

/** Which sales may share a statement: the same columns in their rows and notifications. */
function shapeOf(held: Held): string {
  const row_columns = definedColumns(held.row);
  const notification = held.notification ? notificationShape(held.notification) : '-';
  return `${row_columns.join(',')}|${notification}`;
}

function notificationShape(notification: Insertable<NotificationTable>): string {
  const values: Record<string, unknown> = { ...notificationValues(notification), lease_owner: null, lease_until_ms: null };
  return definedColumns(values).join(',');
}

/** The idempotency key's order (transactions_idempotency), then the trace_id's. */
function compareKeys(a: Held, b: Held): number {
  return (
    compare(a.row.merchant_id, b.row.merchant_id) ||
    compare(a.row.transaction_type, b.row.transaction_type) ||
    compare(a.row.order_id, b.row.order_id) ||
    a.row.trace_id - b.row.trace_id
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
