// What operations need, passed explicitly. Nothing here is global. What only the HTTP edge
// needs (rate limits, the v1.3 header-reuse watch) is in http/deps.ts HttpDeps, not here.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Sealer } from '../crypto/sealer.js';
import type { Clock } from '../domain/clock.js';
import type { MerchantDirectory } from './merchant-directory.js';
import type { ConnectorRegistry } from '../connectors/registry.js';
import type { Store } from '../store/store.js';
import type { GatewayMetrics } from '../metrics.js';

export interface OperationDeps {
  readonly store: Store;
  readonly sealer: Sealer;
  /** The gateway clock: due times and expiries (the sandbox moves it forward). */
  readonly clock: Clock;
  /** The real clock: leases and claims (domain/clock.ts wallClock). */
  readonly wall_clock: Clock;
  readonly merchants: MerchantDirectory;
  /** The connector of each gateway (connectors/registry.ts). */
  readonly connectors: ConnectorRegistry;
  readonly config: Config;
  /** PUBLIC_URL, or the address the server is bound to once listening: the base of every URL the gateway hands out. */
  readonly public_url: () => string;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
}
