// The store's memory of committed card tokens (store/known-cards.ts): bounded, least recently used
// first out, and keyed by every part of the vault's key.
import { describe, expect, it } from 'vitest';
import { KNOWN_CARDS_MAX, KnownCards, knownCardKey } from '../../src/store/known-cards.js';

describe('KnownCards', () => {
  it('answers what it learned and null for anything else; every part of the key counts', () => {
    const cards = new KnownCards();
    cards.learn(knownCardKey('m1', 'pin', 'fp', '12/2030'), 'tok-1');
    expect(cards.token(knownCardKey('m1', 'pin', 'fp', '12/2030'))).toBe('tok-1');
    for (const other of [
      knownCardKey('m2', 'pin', 'fp', '12/2030'),
      knownCardKey('m1', 'pin2', 'fp', '12/2030'),
      knownCardKey('m1', 'pin', 'fp2', '12/2030'),
      knownCardKey('m1', 'pin', 'fp', '01/2031'),
      // Parts that run together do not make the same key.
      knownCardKey('m1p', 'in', 'fp', '12/2030'),
    ])
      expect(cards.token(other)).toBeNull();
  });

  it('keeps at most max_entries, dropping the least recently used first', () => {
    const cards = new KnownCards(3);
    cards.learn('a', 'tok-a');
    cards.learn('b', 'tok-b');
    cards.learn('c', 'tok-c');
    expect(cards.token('a')).toBe('tok-a'); // a is now the most recently used
    cards.learn('d', 'tok-d');
    expect(cards.size).toBe(3);
    expect(cards.token('b')).toBeNull();
    expect([cards.token('a'), cards.token('c'), cards.token('d')]).toEqual(['tok-a', 'tok-c', 'tok-d']);
    // Learning a key again keeps one entry.
    cards.learn('d', 'tok-d');
    expect(cards.size).toBe(3);
  });

  it('holds its bound under many cards, and refuses a bound that is not a positive integer', () => {
    const cards = new KnownCards();
    for (let i = 0; i < KNOWN_CARDS_MAX + 500; i++) cards.learn(knownCardKey('m', `pin-${i}`, 'fp', '12/2030'), `tok-${i}`);
    expect(cards.size).toBe(KNOWN_CARDS_MAX);
    expect(cards.token(knownCardKey('m', 'pin-0', 'fp', '12/2030'))).toBeNull();
    expect(cards.token(knownCardKey('m', `pin-${KNOWN_CARDS_MAX + 499}`, 'fp', '12/2030'))).toBe(`tok-${KNOWN_CARDS_MAX + 499}`);
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new KnownCards(bad)).toThrow(/max_entries/);
  });
});
