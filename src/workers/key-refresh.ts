// A running gateway follows the store's sealing key (operations/master-key.ts refreshSealingKey):
// when `paygate master-key rotate` switches it, every instance seals new values under the new key
// within one period (PAYGATE_KEY_REFRESH_MS), so the rotation's last count finds none left under
// the old one. One small read per period; a failed read is logged and tried again next time.
import type { Logger } from 'pino';
import type { Sealer } from '../crypto/sealer.js';
import { refreshSealingKey } from '../operations/master-key.js';
import type { Store } from '../store/store.js';
import type { Worker } from './due-work.js';

export function startKeyRefresh(options: {
  readonly store: Store;
  readonly sealer: Sealer;
  readonly logger: Logger;
  readonly every_ms: number;
}): Worker {
  let said_not_held: string | null = null;
  let running: Promise<void> = Promise.resolve();
  const tick = async (): Promise<void> => {
    try {
      const outcome = await refreshSealingKey(options);
      if (outcome.kind === 'switched') {
        options.logger.info(
          { key_id: outcome.key_id },
          'new values are now sealed under master key %s (the store switched it)',
          outcome.key_id,
        );
      } else if (outcome.kind === 'not_held' && said_not_held !== outcome.key_id) {
        said_not_held = outcome.key_id;
        // Values sealed by the others under that key fail here: say it once, loudly.
        options.logger.error(
          { key_id: outcome.key_id },
          'the store seals under master key %s, which this instance was not given: values sealed under it cannot be opened here; restart it with that key (docs/production.md, "Master-key rotation")',
          outcome.key_id,
        );
      }
    } catch (error) {
      options.logger.warn({ err: error }, 'reading the master-key state failed; tried again next period');
    }
  };
  const timer = setInterval(() => {
    running = running.then(tick);
  }, options.every_ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
