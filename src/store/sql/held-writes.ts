// Store.holdWrites (store.ts): a unit of work that holds the one transaction a sale decided in
// this process reserves (the sandbox's), with its status changes and the notification of its last
// one, and writes them when the work ends: the row written once, in its final status. Reserved
// and then finished, the row was inserted and then updated; each status change touches indexed
// columns, so every index of transactions was written twice (issue 29).
//   - PostgreSQL: one statement, one commit, shared with the held sales that arrive meanwhile
//     (held-batches.ts); before, two commits each.
//   - SQLite: one unit of the group commit, three statements (writeHeldSqlite): the final row,
//     both status changes, the notification. Before, six: the row inserted pending (an entry in
//     the pending index too) and updated, a status change each, the look-up of older
//     notifications to supersede (a new transaction has none), the notification.
//
// What it cannot hold it refuses (WritesNotHeld) before anything of the transaction is written:
// any other write (due work, a cashier order, a second transaction or notification) and any read,
// since a read would not see what is held. The caller then does the work the usual way. Only the
// card vault writes at once on PostgreSQL: tokenFor is idempotent, and a vaulted card beside no
// sale is harmless; SQLite holds a new card too (HeldWriter.holds_cards). A card seen before is
// answered from memory (knownToken, known-cards.ts), no statement at all.
import { CompiledQuery, type Insertable } from 'kysely';
import type { CardVaultRow } from '../../domain/card-record.js';
import { knownCardKey } from '../known-cards.js';
import type { NotificationTable, TransactionRow } from '../schema.js';
import { type UnitOfWork, WritesNotHeld } from '../store.js';
import type { TransactionStore } from '../transaction-store.js';
import type { SqlContext } from './context.js';
import { insertReturningId } from './dialect.js';
import { drawTraceId } from './fresh-trace-id.js';
import { notificationValues } from './notifications.js';
import { insertedTransactionRow } from './transactions.js';

/** Status changes one held transaction may gather: its reservation's, and the few a sale's finish makes. */
const HELD_CHANGES_MAX = 4;

interface HeldChange {
  readonly from_status: string;
  readonly to_status: string;
  readonly reason: string;
  readonly at_ms: number;
}

/** What a held unit of work wrote, to be written at its end (HeldWriter). */
export interface Held {
  row: TransactionRow;
  readonly changes: HeldChange[];
  notification: Insertable<NotificationTable> | null;
}

/**
 * An aggregate of the held unit of work: the methods given, and for any other one that refuses.
 * `then` stays undefined, so that the object is never taken for a promise.
 */
function only<T extends object>(aggregate: string, allowed: Partial<T>): T {
  return new Proxy(allowed as T, {
    get(target, key) {
      if (key in target) return target[key as keyof T];
      if (typeof key !== 'string' || key === 'then') return undefined;
      return () => Promise.reject(new WritesNotHeld(`${aggregate}.${key}`));
    },
  });
}

/**
 * Writes what a held unit of work holds, all of it or nothing; throws WritesNotHeld, with nothing
 * written, when the key, the trace_id or the held card was taken meanwhile.
 */
export interface HeldWriter {
  /** `card`: a card new to the vault, when the writer holds cards (else always null). */
  write(held: Held, card: CardVaultRow | null): Promise<void>;
  /**
   * Whether a card new to the vault is held too. SQLite: yes, else it would be a commit of its
   * own, waited for (its fsync) before the sale goes on. PostgreSQL: no, tokenFor's one statement
   * writes it at once (a commit of its own, but no fsync on the event loop's path to wait twice).
   */
  readonly holds_cards: boolean;
}

/** Runs `work` with its transaction held, then writes what it holds with `write` (Store.holdWrites). */
export async function runHoldingWrites<T>(
  ctx: SqlContext,
  store: UnitOfWork,
  work: (uow: UnitOfWork) => Promise<T>,
  write: HeldWriter,
): Promise<T> {
  // In an object: the closures below assign it, which a local's type narrowing would not see.
  const state: { held: Held | null; card: CardVaultRow | null } = { held: null, card: null };
  const transactions = only<TransactionStore>('transactions', {
    async reserveOrHolder(row, reason) {
      if (state.held) throw new WritesNotHeld('a second transaction');
      // One draw: a taken id is found by the write at the end, and the sale then goes the usual way.
      const stored = insertedTransactionRow(row, drawTraceId(ctx.trace_ids));
      state.held = {
        row: stored,
        changes: [{ from_status: '', to_status: stored.status, reason, at_ms: stored.created_at_ms }],
        notification: null,
      };
      return { kind: 'inserted', row: { ...stored } };
    },
    async changeStatus(trace_id, from_status, patch, reason, at_ms, notification = null) {
      const held = state.held;
      if (!held || held.row.trace_id !== trace_id) throw new WritesNotHeld('a change of a transaction not held');
      // A second notification would supersede the first (notifications.md §5): not held.
      if (held.notification && notification) throw new WritesNotHeld('a second notification');
      if (held.changes.length >= HELD_CHANGES_MAX) throw new WritesNotHeld(`more than ${HELD_CHANGES_MAX} status changes`);
      // The compare-and-set, on the held row: nobody else can see it yet.
      if (held.row.status !== from_status) return false;
      held.row = { ...held.row, ...patch };
      held.changes.push({ from_status, to_status: patch.status, reason, at_ms });
      if (notification) held.notification = notification;
      return true;
    },
  });
  const uow: UnitOfWork = {
    merchants: only('merchants', {}),
    transactions,
    cards: only<UnitOfWork['cards']>('cards', {
      async tokenFor(row) {
        if (!write.holds_cards) return store.cards.tokenFor(row);
        // A card stored before is read; a new one is held, its token the one it brings. Stored by
        // a twin before the write, it fails the write (a key taken), and the sale goes the usual way.
        const stored = await store.cards.find(row.merchant_id, row.pin, row.pan_fingerprint, row.card_exp);
        if (stored) return stored.card_token;
        if (state.card) throw new WritesNotHeld('a second card');
        state.card = row;
        return row.card_token;
      },
      // No read: what this process saw committed (known-cards.ts).
      knownToken: (merchant_id, pin, pan_fingerprint, card_exp) => store.cards.knownToken(merchant_id, pin, pan_fingerprint, card_exp),
    }),
    notifications: only('notifications', {}),
    subscriptions: only('subscriptions', {}),
    cashier: only('cashier', {}),
    backoffice: only('backoffice', {}),
    sandboxClock: only('sandboxClock', {}),
    sandboxAdmin: only('sandboxAdmin', {}),
    instance: only('instance', {}),
    authorizations: only('authorizations', {}),
    disputes: only('disputes', {}),
    requestLog: only('requestLog', {}),
    masterKeys: only('masterKeys', {}),
  };
  const result = await work(uow);
  if (state.held) await write.write(state.held, state.card);
  else if (state.card) throw new WritesNotHeld('a card without a transaction');
  return result;
}

/**
 * SQLite's writer, `ctx` being a transaction's (one unit of the group commit): the held card
 * unless stored meanwhile; the row unless its key or trace_id is taken (ON CONFLICT DO NOTHING,
 * without RETURNING, which costs SQLite more than the insert: sql/dialect.ts); its status changes
 * in one statement; its notification. A card, key or id taken throws, and the unit's rollback
 * leaves nothing written.
 */
export async function writeHeldSqlite(ctx: SqlContext, held: Held, card: CardVaultRow | null): Promise<void> {
  if (card) {
    if ((await ctx.changed(ctx.text.insert('card_vault', card, { conflict_columns: 'any' }))) !== 1)
      throw new WritesNotHeld('the card was stored meanwhile');
    ctx.metCard(knownCardKey(card.merchant_id, card.pin, card.pan_fingerprint, card.card_exp), card.card_token);
  }
  const inserted = await ctx.changed(ctx.text.insert('transactions', held.row, { conflict_columns: 'any' }));
  if (inserted !== 1) throw new WritesNotHeld('the key or the trace_id was taken');
  const parameters: unknown[] = [];
  for (const change of held.changes) parameters.push(held.row.trace_id, change.from_status, change.to_status, change.reason, change.at_ms);
  // One row each, in order: status_changes ids (their order in listStatusChanges) follow it.
  const values = held.changes.map(() => '(?, ?, ?, ?, ?)').join(', ');
  await ctx.changed(
    CompiledQuery.raw(`insert into status_changes (trace_id, from_status, to_status, reason, at_ms) values ${values}`, parameters),
  );
  if (held.notification) {
    if ((await insertReturningId(ctx, 'notifications', notificationValues(held.notification), 'id')) === null)
      throw new Error('notification insert returned no id');
    ctx.touchedNotifications();
  }
}
