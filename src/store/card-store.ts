// The card vault: encrypted card numbers kept for tokens and recurring charges (never a CVV).
import type { CardVaultRow } from './schema.js';

export interface CardStore {
  insertIfAbsent(row: CardVaultRow): Promise<void>;
  find(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): Promise<CardVaultRow | null>;
  get(merchant_id: string, card_token: string): Promise<CardVaultRow | null>;
}
