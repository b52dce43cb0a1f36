// PAYGATE_WORKERS > 1: `paygate start` becomes a node:cluster primary that only prepares the
// database once (migrations, the sandbox demo merchant), forks the workers, restarts any that
// dies, and stops them on SIGTERM/SIGINT. Each worker is a whole gateway (startGateway): HTTP on
// the shared port, its notification, due-work and billing workers. They share nothing but the
// PostgreSQL database, exactly like gateways on several machines (docs/scale-out.md); the
// primary's round-robin hands each new connection to the next worker.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { type Config, storeName } from './config.js';
import { AdjustableClock } from './domain/clock.js';
import { MerchantDirectory } from './operations/merchant-directory.js';
import { firstScreenLines } from './first-screen.js';
import { adminTokenInEffect, DEMO_MERCHANT_ID, ensureDemoMerchant } from './main.js';
import { openConfiguredStore, sealerFor } from './store-and-keys.js';

/** A worker that ran this long before dying resets the restart back-off. */
const STABLE_AFTER_MS = 30_000;
const RESTART_DELAY_MIN_MS = 250;
const RESTART_DELAY_MAX_MS = 10_000;
/** On SIGTERM/SIGINT, workers get this long to finish (their own close waits for in-flight work) before SIGKILL. */
const STOP_GRACE_MS = 30_000;

export interface ClusterPrimary {
  /** Resolves once every worker has exited after stop(). */
  stop(): Promise<void>;
}

export async function startClusterPrimary(config: Config, logger: Logger): Promise<ClusterPrimary> {
  // Once, before any worker exists: migrations (Kysely's migration lock would also serialize
  // them), the demo merchant and the sandbox's admin token, so they are created and announced by
  // one process; the workers find them.
  const store = openConfiguredStore(config, logger);
  let first_screen: string[];
  try {
    await store.migrate();
    const clock = new AdjustableClock();
    if (config.environment === 'sandbox') clock.set_offset_ms(await store.sandboxClock.getOffset());
    const sealer = await sealerFor(config, store);
    const demo = await ensureDemoMerchant(config, store, new MerchantDirectory(store, sealer), clock.now_ms());
    const admin = await adminTokenInEffect(config, store, sealer, clock.now_ms());
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    first_screen = firstScreenLines({
      environment: config.environment,
      url: config.public_url ?? `http://${host}:${config.port}`,
      store: storeName(config),
      demo_merchant_id:
        config.environment === 'sandbox' && (demo ?? (await store.merchants.get(DEMO_MERCHANT_ID))) ? DEMO_MERCHANT_ID : null,
      demo_created: demo !== null,
      admin_token: admin.source,
    });
  } finally {
    await store.close();
  }

  let stopping = false;
  let ever_listening = false;
  let all_listening = false;
  let quick_failures = 0;
  const started_at = new Map<number, number>();
  const listening = new Set<number>();

  const fork = (): Worker => {
    const worker = cluster.fork();
    started_at.set(worker.id, Date.now());
    return worker;
  };

  cluster.on('listening', (worker) => {
    listening.add(worker.id);
    // Once, when all of the first workers listen (ever_listening is set by the first of them).
    if (!all_listening && listening.size === config.workers) {
      all_listening = true;
      logger.info({ workers: config.workers, port: config.port }, 'paygate workers listening');
      for (const line of first_screen) process.stdout.write(`${line}\n`);
    }
    ever_listening = true;
  });

  cluster.on('exit', (worker, code, signal) => {
    const lived_ms = Date.now() - (started_at.get(worker.id) ?? Date.now());
    started_at.delete(worker.id);
    listening.delete(worker.id);
    if (stopping) return;
    if (!ever_listening) {
      // A worker that could not even start (port taken, database unreachable) would fail again:
      // stop everything and report, rather than restart it in a loop.
      logger.error({ pid: worker.process.pid, code, signal }, 'gateway worker failed to start; stopping');
      void stop().then(() => process.exit(1));
      return;
    }
    quick_failures = lived_ms >= STABLE_AFTER_MS ? 0 : quick_failures + 1;
    const delay_ms = quick_failures === 0 ? 0 : Math.min(RESTART_DELAY_MAX_MS, RESTART_DELAY_MIN_MS * 2 ** (quick_failures - 1));
    logger.error({ pid: worker.process.pid, code, signal, restart_in_ms: delay_ms }, 'gateway worker exited; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, delay_ms).unref();
  });

  let stopped: Promise<void> | null = null;
  function stop(): Promise<void> {
    stopped ??= (async () => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (worker.isDead()) {
                resolve();
                return;
              }
              const kill = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS);
              worker.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    })();
    return stopped;
  }

  for (let i = 0; i < config.workers; i += 1) fork();
  return { stop };
}
