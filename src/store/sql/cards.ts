// The card vault over Kysely (card-store.ts): encrypted card numbers kept for tokens and recurring
// charges. Its look-ups are on the path of a sale with a stored card: hot SQL text (sql-text.ts).
import type { CardVaultRow } from '../schema.js';
import type { CardStore } from '../card-store.js';
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

  async find(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null> {
    const [row] = await this.ctx.rows<CardVaultRow>(this.ctx.text.selectAll('card_vault', { merchant_id, pin, pan_fingerprint, card_exp }));
    return row ?? null;
  }

  async get(merchant_id: string, card_token: string): Promise<CardVaultRow | null> {
    const [row] = await this.ctx.rows<CardVaultRow>(this.ctx.text.selectAll('card_vault', { merchant_id, card_token }));
    return row ?? null;
  }
}
