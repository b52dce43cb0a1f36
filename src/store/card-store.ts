// The card vault: encrypted card numbers kept for tokens and recurring charges (never a CVV).
import type { CardVaultRow } from './schema.js';

export interface CardStore {
  insertIfAbsent(row: CardVaultRow): Promise<void>;
  /**
   * The token of the card `row` describes (its key: merchant, pin, fingerprint, expiry): the
   * row's own when it is inserted, the stored one's when the card was vaulted before; null only if
   * neither can be read. One statement on PostgreSQL; on SQLite a look-up first, so a card seen
   * before writes nothing. Atomic on its own, also outside a transaction.
   */
  tokenFor(row: CardVaultRow): Promise<string | null>;
  /**
   * The token of a card this store has seen committed (tokenFor's answers; known-cards.ts), or
   * null: no statement, so a card seen before costs a sale nothing in the vault. A token is
   * never wrong, since a vaulted card's token never changes and its row is never deleted.
   */
  knownToken(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): string | null;
  find(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null>;
  get(merchant_id: string, card_token: string): Promise<CardVaultRow | null>;
}
