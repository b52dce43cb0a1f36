// The card vault (decisions.md §9): the PAN sealed with the master key, never the CVV.
// One token per (merchant, customer pin, card, expiry): tokenizing the same card again gives the same token.
import { randomBytes } from 'node:crypto';
import { cardBrand, type CardData, formatExpiry } from '../domain/cards.js';
import type { Sealer } from '../crypto/sealer.js';
import type { UnitOfWork } from '../store/store.js';

export function panFingerprint(sealer: Sealer, pan: string): string {
  return sealer.fingerprint(pan, 'pan');
}

/** A vaulted PAN opens only as its own merchant's (the master-key rotation re-seals it with the same purpose). */
export function panPurpose(merchant_id: string): string {
  return `pan:${merchant_id}`;
}

export async function vaultCard(
  tx: UnitOfWork,
  sealer: Sealer,
  merchant_id: string,
  pin: string,
  card: CardData,
  now_ms: number,
): Promise<string> {
  const pan_fingerprint = panFingerprint(sealer, card.pan);
  const card_exp = formatExpiry(card.expiry);
  // A card this process has seen committed needs neither a statement nor sealing (known-cards.ts).
  const known = tx.cards.knownToken(merchant_id, pin, pan_fingerprint, card_exp);
  if (known !== null) return known;
  // Sealed before it is known whether the card is new: on PostgreSQL the look-up and the insert
  // are one statement (card-store.ts tokenFor), and sealing costs less than a round trip.
  const token = await tx.cards.tokenFor({
    card_token: randomBytes(16).toString('hex'),
    merchant_id,
    pin,
    pan_sealed: sealer.seal(card.pan, panPurpose(merchant_id)),
    pan_fingerprint,
    card_masked: card.masked,
    card_exp,
    card_brand: cardBrand(card.pan),
    created_at_ms: now_ms,
  });
  if (token === null) throw new Error('vaulted card not found after insert');
  return token;
}

/** Opens a stored card for a merchant-initiated charge; the CVV is never available. */
export function openVaultedPan(sealer: Sealer, merchant_id: string, pan_sealed: string): string {
  return sealer.open(pan_sealed, panPurpose(merchant_id));
}
