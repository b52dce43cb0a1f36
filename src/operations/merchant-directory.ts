// Merchants as requests see them: read from the store with their secrets opened and gateways
// parsed, kept for a short time, and created.
//
// Every signed request names its merchant, and reading one costs four queries and a decryption,
// so a merchant that was found is kept for a short time (PAYGATE_MERCHANT_CACHE_MS, 5 s by
// default; 0 turns it off). Only merchants that exist are kept: an unknown merchant_id is asked
// of the store every time, so a merchant created by the CLI (or by another instance) is served
// at once. A gateway added to a known merchant (by the CLI or another instance) is seen once the
// copy is refreshed: a request naming a gateway the copy lacks reads the merchant again (findFresh).
// Other changes to a merchant's gateways (disable, new credentials, hold_payouts) made on this
// instance drop its copies at once (invalidate); another instance's copies follow within the
// cache time, and payouts read hold_payouts from the store anyway (operations/payout.ts).
import type { Sealer } from '../crypto/sealer.js';
import {
  type CreateMerchantOutcome, gatewayOf, type Merchant, newGatewayId, newMerchantValues, type NewMerchantInput, type StarterGateway,
} from '../domain/merchants.js';
import type { Store } from '../store/store.js';

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

  /** The merchant read from the store now, refreshing this instance's copy. */
  async findFresh(merchant_id: string): Promise<Merchant | null> {
    this.cache.delete(merchant_id);
    return this.find(merchant_id);
  }

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
      gateways: record.gateways.map(gatewayOf),
      routing_rules: record.routing_rules,
    };
  }

  /**
   * A merchant with one application, one frontend and, when `starter` is given, one gateway
   * without settings (the sandbox's). Everything in one database transaction.
   */
  async create(input: NewMerchantInput, now_ms: number, starter: StarterGateway | null): Promise<CreateMerchantOutcome> {
    const values = newMerchantValues(input);
    if (!values.ok) return { kind: 'invalid', field: values.field, reason: values.reason };
    const { merchant_id, secret, application_key, frontend, currency } = values;

    const gateway = starter ? newGatewayId() : null;
    const result = await this.store.transaction((tx) => tx.insertMerchant({
      merchant_id,
      secret_sealed: this.sealer.seal(secret, secretPurpose(merchant_id)),
      applications: [application_key],
      frontends: [{ name: frontend, currency }],
      gateways: starter && gateway ? [{
        gateway_id: gateway, merchant_id, connector: starter.connector, currencies: [...new Set([currency, ...starter.currencies])].join(','),
        mit_enabled: 1, hold_payouts: 0, settings_sealed: null, created_at_ms: now_ms, updated_at_ms: now_ms,
      }] : [],
      created_at_ms: now_ms,
    }));
    if (result === 'exists') return { kind: 'exists', merchant_id };
    return { kind: 'created', merchant: { merchant_id, secret, application_key, frontend, currency, gateway } };
  }
}
