// What every CLI command that reads or writes the store shares (issue 30): it names the store it
// opens (the SQLite file, or PostgreSQL's host and database, never a password) and the mode it
// runs in, on stderr so stdout stays what a script reads; it says when the gateway that last
// started on that store runs in the other mode; and it builds webhook_url on the public URL that
// gateway recorded (migration 0021), falling back to its own configuration, and saying so, only
// when no gateway has recorded one. An operator who runs `PAYGATE_ENV=live paygate gateway list`
// on the sandbox's folder sees it on the first line.
import { type Config, storeName } from '../config.js';
import { openConfiguredStore } from '../store-and-keys.js';
import { utc } from './output.js';
import type { InstanceRecord, Store } from '../store/store.js';

/** Writes what the command runs against, on stderr: the mode and the store. */
export function announceStore(config: Pick<Config, 'database_url' | 'data_dir' | 'environment'>): void {
  process.stderr.write(`paygate: ${config.environment} mode, store: ${storeName(config)}\n`);
}

export interface CliStore {
  readonly store: Store;
  /** What the gateway that last started on this store recorded; null when none has. */
  readonly instance: InstanceRecord | null;
  /**
   * The base of webhook_url: the recorded public URL, else this command's own (PUBLIC_URL or
   * HOST:PORT), said once on stderr the first time it is used.
   */
  readonly public_url: () => string;
}

/** This command's own idea of its public URL, as `paygate start` would use it. */
function ownPublicUrl(config: Pick<Config, 'public_url' | 'host' | 'port'>): string {
  return config.public_url ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
}

/**
 * Names the store and the mode, opens the store and brings its schema up to date, and reads what
 * the running gateway recorded; warns when that gateway runs in the other mode. The caller closes
 * `store`.
 */
export async function openCliStore(config: Config): Promise<CliStore> {
  announceStore(config);
  const store = openConfiguredStore(config);
  let instance: InstanceRecord | null;
  try {
    await store.migrate();
    instance = await store.instance.lastInstance();
  } catch (error) {
    await store.close();
    throw error;
  }
  if (instance !== null && instance.environment !== config.environment) {
    process.stderr.write(
      `paygate: warning: the gateway last started on this store (${utc(instance.started_at_ms)}) was in ${instance.environment} mode; this command runs in ${config.environment} mode (PAYGATE_ENV): is this the store you mean?\n`,
    );
  }
  let said = false;
  const public_url = (): string => {
    const own = ownPublicUrl(config);
    if (!said) {
      said = true;
      if (instance === null) {
        process.stderr.write(
          `paygate: no gateway has started on this store yet, so webhook_url is built on this command's own ${config.public_url === null ? 'HOST and PORT' : 'PUBLIC_URL'} (${own}); the gateway records its own when it starts\n`,
        );
      } else if (!instance.public_url_configured) {
        process.stderr.write(
          `paygate: the running gateway has no PUBLIC_URL, so its webhook URLs are on the address it listens on (${instance.public_url}); a processor reaches it only if that address is public: set PUBLIC_URL\n`,
        );
      } else if (config.public_url !== null && config.public_url !== instance.public_url) {
        process.stderr.write(
          `paygate: webhook_url is built on the running gateway's public URL ${instance.public_url} (recorded ${utc(instance.started_at_ms)}), not this command's PUBLIC_URL ${config.public_url}\n`,
        );
      }
    }
    return instance?.public_url ?? own;
  };
  return { store, instance, public_url };
}
