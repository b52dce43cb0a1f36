// POST /api/tokenize (decisions.md §9): a card_token without a charge.
import { CardData, expiryInFuture, luhnValid } from '../domain/cards.js';
import type { Merchant } from '../domain/merchants.js';
import type { OperationDeps } from './deps.js';
import { vaultCard } from './card-vault.js';

export type TokenizeOutcome =
  | { readonly kind: 'tokenized'; readonly card_token: string; readonly card_masked: string; readonly card_exp: string }
  | { readonly kind: 'invalid_card'; readonly field: 'card_number' | 'card_exp'; readonly reason: string };

export async function tokenizeCard(deps: OperationDeps, merchant: Merchant, pin: string, card: CardData): Promise<TokenizeOutcome> {
  if (!luhnValid(card.pan)) return { kind: 'invalid_card', field: 'card_number', reason: 'fails the Luhn check' };
  if (!expiryInFuture(card.expiry, deps.clock.now_ms())) return { kind: 'invalid_card', field: 'card_exp', reason: 'the card has expired' };
  const now_ms = deps.clock.now_ms();
  const card_token = await deps.store.transaction((tx) => vaultCard(tx, deps.sealer, merchant.merchant_id, pin, card, now_ms));
  const card_exp = `${String(card.expiry.month).padStart(2, '0')}/${card.expiry.year}`;
  return { kind: 'tokenized', card_token, card_masked: card.masked, card_exp };
}
