// The card tokens a store has seen committed, kept in its process (issue 29, item 2). A vaulted
// card's row is never deleted and its token never changes (tokenFor inserts only if absent), so
// once a card's token is committed it stays the answer for that card. A sale with a card seen
// before then skips the vault: no statement (on PostgreSQL a round trip of the sale's three) and no
// sealing of the PAN again. A card this process has not seen still goes to the store.
//
// Only what is committed is learned: a token met inside a transaction is learned when that
// transaction commits (sql-store.ts), never from one that rolls back. Keys hold the card's keyed
// fingerprint, never its number. A database restored from a backup under a running instance would
// make what it learned wrong: instances are restarted after a restore (docs/production.md).

/** Cards kept at most: about 250 bytes each, so a few megabytes, and the least recently used go first. */
export const KNOWN_CARDS_MAX = 10_000;

/** The vault's key of a card (card_vault's unique key): merchant, customer pin, fingerprint, expiry. */
export function knownCardKey(merchant_id: string, pin: string, pan_fingerprint: string, card_exp: string): string {
  // NUL never occurs in these fields (the schemas refuse control characters), so keys never collide.
  return `${merchant_id}\u0000${pin}\u0000${pan_fingerprint}\u0000${card_exp}`;
}

export class KnownCards {
  // A Map keeps insertion order: the first key is the least recently used (a hit moves its key last).
  private readonly tokens = new Map<string, string>();

  constructor(readonly max_entries: number = KNOWN_CARDS_MAX) {
    if (!Number.isInteger(max_entries) || max_entries < 1) throw new Error('max_entries must be a positive integer');
  }

  get size(): number {
    return this.tokens.size;
  }

  /** The committed token of the card `key` names, or null when this process has not seen it. */
  token(key: string): string | null {
    const token = this.tokens.get(key);
    if (token === undefined) return null;
    this.tokens.delete(key);
    this.tokens.set(key, token);
    return token;
  }

  /** Records a committed token (the caller knows it is committed: sql/cards.ts, sql-store.ts). */
  learn(key: string, token: string): void {
    this.tokens.delete(key);
    this.tokens.set(key, token);
    if (this.tokens.size > this.max_entries) {
      const oldest = this.tokens.keys().next().value as string;
      this.tokens.delete(oldest);
    }
  }
}
