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
  readonly clock: Clock;
  readonly merchants: MerchantDirectory;
  readonly processors: ProcessorRegistry;
  readonly config: Config;
  readonly logger: Logger;
}
