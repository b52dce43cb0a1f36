// The card vault over Kysely (card-store.ts): encrypted card numbers kept for tokens and recurring
// charges. Its look-ups are on the path of a sale with a stored card: hot SQL text (sql-text.ts).
import { CompiledQuery } from 'kysely';
import type { CardVaultRow } from '../schema.js';
import type { CardStore } from '../card-store.js';
import { knownCardKey } from '../known-cards.js';
import type { SqlContext } from './context.js';
import { sqliteOwnTransaction } from './dialect.js';

const CARD_KEY = ['merchant_id', 'pin', 'pan_fingerprint', 'card_exp'] as const;

export class SqlCardStore implements CardStore {
  constructor(private readonly ctx: SqlContext) {}

  async insertIfAbsent(row: CardVaultRow): Promise<void> {
    // Outside a transaction on SQLite, in one of its own: committed with the others of its group
    // (one fsync for all) rather than as an autocommit statement syncing the disk alone.
    const own_transaction = sqliteOwnTransaction(this.ctx);
    if (own_transaction) return own_transaction((tx) => tx.cards.insertIfAbsent(row));
    await this.ctx.changed(this.ctx.text.insert('card_vault', row, { conflict_columns: CARD_KEY }));
  }

  knownToken(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): string | null {
    return this.ctx.known_cards.token(knownCardKey(merchant_id, pin, pan_fingerprint, card_exp));
  }

  async tokenFor(row: CardVaultRow): Promise<string | null> {
    const token = await this.storedOrInsertedToken(row);
    if (token !== null) this.ctx.metCard(knownCardKey(row.merchant_id, row.pin, row.pan_fingerprint, row.card_exp), token);
    return token;
  }

  private async storedOrInsertedToken(row: CardVaultRow): Promise<string | null> {
    if (this.ctx.dialect === 'postgres') {
      // One round trip: the row's own token when it is inserted, else the stored one (the same
      // snapshot: a card stored by a twin that committed after it began is not seen, answered null).
      const insert = this.ctx.text.insert('card_vault', row, { conflict_columns: CARD_KEY, returning: 'card_token' });
      const n = insert.parameters.length;
      const key = CARD_KEY.map((column, i) => `"${column}" = $${n + i + 1}`).join(' and ');
      const [found] = await this.ctx.rows<{ card_token: string }>(
        CompiledQuery.raw(
          `with inserted as (${insert.sql}) select card_token from inserted union all select card_token from card_vault where ${key}`,
          [...insert.parameters, ...CARD_KEY.map((column) => row[column])],
        ),
      );
      if (found) return found.card_token;
    } else {
      const stored = await this.find(row.merchant_id, row.pin, row.pan_fingerprint, row.card_exp);
      if (stored) return stored.card_token;
      await this.insertIfAbsent(row);
    }
    return (await this.find(row.merchant_id, row.pin, row.pan_fingerprint, row.card_exp))?.card_token ?? null;
  }

  async find(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null> {
    const [row] = await this.ctx.rows<CardVaultRow>(this.ctx.text.selectAll('card_vault', { merchant_id, pin, pan_fingerprint, card_exp }));
    return row ?? null;
  }

  async get(merchant_id: string, card_token: string): Promise<CardVaultRow | null> {
    const [row] = await this.ctx.rows<CardVaultRow>(this.ctx.text.selectAll('card_vault', { merchant_id, card_token }));
    return row ?? null;
  }
}
