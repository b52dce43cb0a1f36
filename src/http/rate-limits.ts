// Rate limits per client address and per merchant (decisions.md §15, docs/limits.md §3), on
// @fastify/rate-limit's counters: above the rate the gateway answers HTTP 429 with the envelope,
// status 28 `Too many requests`, and a Retry-After header; the merchant limit's answer is signed
// (the merchant is known by then), the address limit's is not (it runs before the body is read).
// The counters are this instance's (the plugin's in-memory store, at most CACHE_KEYS keys): behind
// several instances a client's allowance is the limit times the instances it reaches.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Addresses and merchants counted at once per instance; the least recently seen are forgotten past it. */
const CACHE_KEYS = 10_000;
const WINDOW_MS = 60_000;

export interface RateRefusal {
  readonly limit: 'address' | 'merchant';
  readonly retry_after_s: number;
}

type Limiter = (request: unknown) => Promise<{ isAllowed: boolean; isExceeded?: boolean; ttl?: number }>;

export class RateLimits {
  private address_limiter: Limiter | null = null;
  private merchant_limiter: Limiter | null = null;
  private sign_in_limiter: Limiter | null = null;
  private app: FastifyInstance | null = null;

  /** Requests per minute; 0 turns a limit off. */
  constructor(
    private readonly per_address_per_minute: number,
    private readonly per_merchant_per_minute: number,
    private readonly sign_in_per_address_per_minute: number,
  ) {}

  /** Registers the plugin on the app (counters only: no route is limited by the plugin itself). */
  attach(app: FastifyInstance): void {
    this.app = app;
    void app.register(rateLimit, { global: false, cache: CACHE_KEYS });
  }

  /** The address's allowance, counted for every request but the health probe and the metrics scrape. */
  async address(request: FastifyRequest): Promise<RateRefusal | null> {
    if (this.per_address_per_minute === 0 || this.app === null) return null;
    this.address_limiter ??= this.app.createRateLimit({
      max: this.per_address_per_minute,
      timeWindow: WINDOW_MS,
      keyGenerator: (req) => `address:${req.ip}`,
    }) as Limiter;
    return refusal('address', await this.address_limiter(request));
  }

  /**
   * Back-office sign-in attempts per client address (docs/backoffice.md): far below the API's
   * allowance, since each guess costs an argon2 hash; the per-e-mail lock-out is the store's.
   */
  async signIn(request: FastifyRequest): Promise<RateRefusal | null> {
    if (this.sign_in_per_address_per_minute === 0 || this.app === null) return null;
    this.sign_in_limiter ??= this.app.createRateLimit({
      max: this.sign_in_per_address_per_minute,
      timeWindow: WINDOW_MS,
      keyGenerator: (req) => `sign-in:${req.ip}`,
    }) as Limiter;
    return refusal('address', await this.sign_in_limiter(request));
  }

  async merchant(merchant_id: string): Promise<RateRefusal | null> {
    if (this.per_merchant_per_minute === 0 || this.app === null) return null;
    this.merchant_limiter ??= this.app.createRateLimit({
      max: this.per_merchant_per_minute,
      timeWindow: WINDOW_MS,
      keyGenerator: (req) => `merchant:${(req as unknown as MerchantKey).merchant_id}`,
    }) as Limiter;
    // The plugin's limiter reads a request only through the key generator and its route options.
    const key: MerchantKey = { merchant_id, routeOptions: { config: {} } };
    return refusal('merchant', await this.merchant_limiter(key));
  }
}

interface MerchantKey {
  readonly merchant_id: string;
  readonly routeOptions: { readonly config: Record<string, never> };
}

function refusal(limit: RateRefusal['limit'], result: { isAllowed: boolean; isExceeded?: boolean; ttl?: number }): RateRefusal | null {
  if (result.isAllowed || result.isExceeded !== true) return null;
  return { limit, retry_after_s: Math.max(1, Math.ceil((result.ttl ?? WINDOW_MS) / 1000)) };
}
