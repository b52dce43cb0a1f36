// Merchants as requests see them: read from the store with their secrets opened and gateways
// parsed, kept for a short time, and created.
//
// A disabled merchant is found like any other (its queued notifications still go out, its
// payments in flight still finish); the signed routes refuse it (http/signed-route.ts). Whether a
// previous secret is still accepted is decided per request (domain/merchants.ts acceptedSecrets),
// since a copy kept here may outlive the grace.
//
// Every signed request names its merchant, and reading one costs four queries and a decryption,
// so a merchant that was found is kept for a short time (PAYGATE_MERCHANT_CACHE_MS, 5 s by
// default; 0 turns it off). An unknown merchant_id is remembered as unknown for a shorter time
// (PAYGATE_UNKNOWN_MERCHANT_CACHE_MS, 2 s), so that anonymous requests repeating one cannot turn
// into a query each; a merchant created on this instance is served at once, one created by the
// CLI or another instance once that time has passed. A gateway added to a known merchant (by the CLI or another instance) is seen once the
// copy is refreshed: a request naming a gateway the copy lacks reads the merchant again (findFresh).
// Other changes to a merchant's gateways (disable, new credentials, hold_payouts) made on this
// instance drop its copies at once (invalidate); another instance's copies follow within the
// cache time, and payouts read hold_payouts from the store anyway (operations/payout.ts).
import type { Sealer } from '../crypto/sealer.js';
import {
  type CreateMerchantOutcome,
  gatewayOf,
  type Merchant,
  newGatewayId,
  newMerchantValues,
  type NewMerchantInput,
  type StarterGateway,
} from '../domain/merchants.js';
import type { Store } from '../store/store.js';

/** What a merchant's secrets (the current and the previous one) are sealed for: a sealed secret opens only as its own merchant's. */
export function secretPurpose(merchant_id: string): string {
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

  /**
   * cache_ms: how long a merchant that was found is served from memory; unknown_cache_ms: how
   * long a merchant_id that was not found is answered as unknown without asking the store. 0 reads
   * the store every time.
   */
  constructor(
    private readonly store: Store,
    private readonly sealer: Sealer,
    private readonly cache_ms = 0,
    private readonly unknown_cache_ms = 0,
  ) {}

  /** The merchant read from the store now, refreshing this instance's copy. */
  async findFresh(merchant_id: string): Promise<Merchant | null> {
    this.cache.delete(merchant_id);
    return this.find(merchant_id);
  }

  async find(merchant_id: string): Promise<Merchant | null> {
    if (this.cache_ms <= 0 && this.unknown_cache_ms <= 0) return this.load(merchant_id);
    const now_ms = Date.now();
    const cached = this.cache.get(merchant_id);
    if (cached && cached.until_ms > now_ms) return cached.merchant;
    // Concurrent requests for the same merchant share one read.
    const generation = this.generation;
    const merchant = this.load(merchant_id);
    const entry: Cached = { merchant, until_ms: now_ms + Math.max(this.cache_ms, this.unknown_cache_ms) };
    this.remember(merchant_id, entry);
    const drop = () => {
      if (this.cache.get(merchant_id) === entry) this.cache.delete(merchant_id);
    };
    merchant.then((found) => {
      if (generation !== this.generation) drop();
      else if (found === null && this.unknown_cache_ms > 0)
        this.replace(entry, merchant_id, { merchant, until_ms: now_ms + this.unknown_cache_ms });
      else if (found !== null && this.cache_ms > 0) this.replace(entry, merchant_id, { merchant, until_ms: now_ms + this.cache_ms });
      else drop();
    }, drop);
    return merchant;
  }

  private remember(merchant_id: string, entry: Cached): void {
    this.cache.delete(merchant_id);
    // Oldest first: a flood of new merchant_ids pushes out old copies, never grows the map.
    if (this.cache.size >= CACHE_MAX_MERCHANTS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(merchant_id, entry);
  }

  /** Puts `next` in place of `entry` if that is still the copy kept. */
  private replace(entry: Cached, merchant_id: string, next: Cached): void {
    if (this.cache.get(merchant_id) === entry) this.cache.set(merchant_id, next);
  }

  /** Forgets every copy (a merchant's or a gateway's settings changed); the next request reads the store. */
  invalidate(): void {
    this.generation += 1;
    this.cache.clear();
  }

  private async load(merchant_id: string): Promise<Merchant | null> {
    const record = await this.store.merchants.get(merchant_id);
    if (!record) return null;
    // A grace already over on the wall clock is over on the gateway clock too (the sandbox offset
    // only moves it forward): that previous secret is not even opened.
    const previous_open =
      record.previous_secret_sealed !== null && record.previous_secret_until_ms !== null && record.previous_secret_until_ms > Date.now();
    return {
      merchant_id: record.merchant_id,
      secret: this.sealer.open(record.secret_sealed, secretPurpose(record.merchant_id)),
      previous_secret: previous_open ? this.sealer.open(record.previous_secret_sealed!, secretPurpose(record.merchant_id)) : null,
      previous_secret_until_ms: previous_open ? record.previous_secret_until_ms : null,
      disabled: record.disabled_at_ms !== null,
      applications: record.applications,
      frontends: record.frontends,
      gateways: record.gateways.map(gatewayOf),
      routing_rules: record.routing_rules,
      v13_body_signature_required: record.v13_body_signature_required,
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
    const result = await this.store.transaction((tx) =>
      tx.merchants.insert({
        merchant_id,
        secret_sealed: this.sealer.seal(secret, secretPurpose(merchant_id)),
        applications: [application_key],
        frontends: [{ name: frontend, currency }],
        gateways:
          starter && gateway
            ? [
                {
                  gateway_id: gateway,
                  merchant_id,
                  connector: starter.connector,
                  currencies: [...new Set([currency, ...starter.currencies])].join(','),
                  mit_enabled: 1,
                  hold_payouts: 0,
                  settings_sealed: null,
                  created_at_ms: now_ms,
                  updated_at_ms: now_ms,
                },
              ]
            : [],
        created_at_ms: now_ms,
      }),
    );
    if (result === 'exists') return { kind: 'exists', merchant_id };
    // It may have been asked for (and remembered as unknown) before it existed.
    this.cache.delete(merchant_id);
    return { kind: 'created', merchant: { merchant_id, secret, application_key, frontend, currency, gateway } };
  }
}
