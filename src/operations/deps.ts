// What operations need, passed explicitly. Nothing here is global.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Sealer } from '../crypto/sealer.js';
import type { Clock } from '../domain/clock.js';
import type { MerchantDirectory } from '../domain/merchants.js';
import type { ProcessorRegistry } from '../processors/processor.js';
import type { Store } from '../store/store.js';

export interface OperationDeps {
  readonly store: Store;
  readonly sealer: Sealer;
  /** The gateway clock: due times and expiries (the sandbox moves it forward). */
  readonly clock: Clock;
  /** The real clock: leases and claims (domain/clock.ts wallClock). */
  readonly wall_clock: Clock;
  readonly merchants: MerchantDirectory;
  readonly processors: ProcessorRegistry;
  readonly config: Config;
  readonly logger: Logger;
}
