// Merchants as the domain sees them: secrets opened from their sealed form, gateways parsed.
//
// Every signed request names its merchant, and reading one costs four queries and a decryption,
// so a merchant that was found is kept for a short time (PAYGATE_MERCHANT_CACHE_MS, 5 s by
// default; 0 turns it off). Only merchants that exist are kept: an unknown merchant_id is asked
// of the store every time, so a merchant created by the CLI (or by another instance) is served
// at once. A merchant's record does not change after creation except a gateway's hold_payouts
// flag; that change drops this instance's copies (invalidate), and payouts read the flag from
// the store anyway (operations/payout.ts), so another instance's copy cannot skip a hold.
import { randomBytes } from 'node:crypto';
import type { Sealer } from '../crypto/sealer.js';
import type { Store } from '../store/store.js';
import { isKnownCurrency } from './money.js';

export interface Gateway {
  readonly gateway_id: string;
  readonly processor: string;
  readonly currencies: readonly string[];
  readonly mit_enabled: boolean;
  readonly hold_payouts: boolean;
}

export interface Merchant {
  readonly merchant_id: string;
  readonly secret: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  readonly gateways: readonly Gateway[];
}

export const SANDBOX_CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'BHD', 'CAD', 'AUD', 'CHF', 'SEK', 'PLN', 'KWD'] as const;

export interface NewMerchantInput {
  readonly merchant_id?: string | undefined;
  readonly secret?: string | undefined;
  readonly application_key?: string | undefined;
  readonly frontend?: string | undefined;
  readonly currency?: string | undefined;
}

export interface CreatedMerchant {
  readonly merchant_id: string;
  readonly secret: string;
  readonly application_key: string;
  readonly frontend: string;
  readonly currency: string;
  readonly gateway: string;
}

export type CreateMerchantOutcome =
  | { readonly kind: 'created'; readonly merchant: CreatedMerchant }
  | { readonly kind: 'exists'; readonly merchant_id: string }
  | { readonly kind: 'invalid'; readonly field: string; readonly reason: string };

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SECRET_PATTERN = /^[\x21-\x7e]+$/;

function secretPurpose(merchant_id: string): string {
  return `merchant-secret:${merchant_id}`;
}

/** Merchants kept at most; beyond it the oldest copy is dropped. */
const CACHE_MAX_MERCHANTS = 10_000;

interface Cached {
  readonly merchant: Promise<Merchant | null>;
  readonly until_ms: number;
}

export class MerchantDirectory {
  private readonly cache = new Map<string, Cached>();
  /** Bumped by invalidate(): a read that started before it must not refill the cache. */
  private generation = 0;

  /** cache_ms: how long a merchant that was found is served from memory; 0 reads the store every time. */
  constructor(private readonly store: Store, private readonly sealer: Sealer, private readonly cache_ms = 0) {}

  async find(merchant_id: string): Promise<Merchant | null> {
    if (this.cache_ms <= 0) return this.load(merchant_id);
    const now_ms = Date.now();
    const cached = this.cache.get(merchant_id);
    if (cached && cached.until_ms > now_ms) return cached.merchant;
    // Concurrent requests for the same merchant share one read; a miss (null) is not kept.
    const generation = this.generation;
    const merchant = this.load(merchant_id);
    const entry: Cached = { merchant, until_ms: now_ms + this.cache_ms };
    this.cache.delete(merchant_id);
    if (this.cache.size >= CACHE_MAX_MERCHANTS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(merchant_id, entry);
    const drop = () => {
      if (this.cache.get(merchant_id) === entry) this.cache.delete(merchant_id);
    };
    merchant.then((found) => {
      if (found === null || generation !== this.generation) drop();
    }, drop);
    return merchant;
  }

  /** Forgets every copy (a merchant's or a gateway's settings changed); the next request reads the store. */
  invalidate(): void {
    this.generation += 1;
    this.cache.clear();
  }

  private async load(merchant_id: string): Promise<Merchant | null> {
    const record = await this.store.getMerchant(merchant_id);
    if (!record) return null;
    return {
      merchant_id: record.merchant_id,
      secret: this.sealer.open(record.secret_sealed, secretPurpose(record.merchant_id)),
      applications: record.applications,
      frontends: record.frontends,
      gateways: record.gateways.map((g) => ({
        gateway_id: g.gateway_id,
        processor: g.processor,
        currencies: g.currencies.split(',').filter((c) => c !== ''),
        mit_enabled: g.mit_enabled === 1,
        hold_payouts: g.hold_payouts === 1,
      })),
    };
  }

  async create(input: NewMerchantInput, now_ms: number): Promise<CreateMerchantOutcome> {
    const merchant_id = input.merchant_id ?? `merchant-${randomBytes(6).toString('hex')}`;
    const secret = input.secret ?? randomBytes(24).toString('base64url');
    const application_key = input.application_key ?? randomBytes(16).toString('hex');
    const frontend = input.frontend ?? `frontend-${randomBytes(4).toString('hex')}`;
    const currency = input.currency ?? 'USD';
    const checks: [string, boolean, string][] = [
      ['merchant-id', merchant_id.length <= 50 && ID_PATTERN.test(merchant_id), 'up to 50 letters, digits, ".", "_" or "-"'],
      ['secret', secret.length >= 8 && secret.length <= 64 && SECRET_PATTERN.test(secret), '8 to 64 printable characters without spaces'],
      ['application-key', application_key.length <= 32 && ID_PATTERN.test(application_key), 'up to 32 letters, digits, ".", "_" or "-"'],
      ['frontend', frontend.length <= 50 && ID_PATTERN.test(frontend), 'up to 50 letters, digits, ".", "_" or "-"'],
      ['currency', isKnownCurrency(currency), 'a known ISO 4217 code such as USD'],
    ];
    for (const [field, ok, reason] of checks) if (!ok) return { kind: 'invalid', field, reason };

    const gateway = randomBytes(16).toString('hex');
    const currencies = [...new Set([currency, ...SANDBOX_CURRENCIES])];
    const result = await this.store.transaction((tx) => tx.insertMerchant({
      merchant_id,
      secret_sealed: this.sealer.seal(secret, secretPurpose(merchant_id)),
      applications: [application_key],
      frontends: [{ name: frontend, currency }],
      gateways: [{ gateway_id: gateway, processor: 'sandbox', currencies: currencies.join(','), mit_enabled: 1, hold_payouts: 0 }],
      created_at_ms: now_ms,
    }));
    if (result === 'exists') return { kind: 'exists', merchant_id };
    return { kind: 'created', merchant: { merchant_id, secret, application_key, frontend, currency, gateway } };
  }
}

/** The gateway that serves a currency: the one named (if it is the merchant's), else the first that takes it. */
export function selectGateway(merchant: Merchant, currency: string, requested: string | undefined): Gateway | null {
  if (requested !== undefined && requested !== '') {
    const named = merchant.gateways.find((g) => g.gateway_id === requested);
    return named && named.currencies.includes(currency) ? named : null;
  }
  return merchant.gateways.find((g) => g.currencies.includes(currency)) ?? null;
}
