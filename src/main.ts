// The composition root: read config, open the store, start HTTP and the workers. Nothing else.
import { randomBytes } from 'node:crypto';
import { getHeapStatistics } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, connectorOptions, storeName } from './config.js';
import type { Sealer } from './crypto/sealer.js';
import { loadSealer } from './operations/master-key.js';
import { keyBesideDatabase, masterKeysFor, openConfiguredStore } from './store-and-keys.js';
import type { FileSyncer } from './store/wal-sync.js';
import { AdjustableClock, wallClock } from './domain/clock.js';
import type { CreatedMerchant } from './domain/merchants.js';
import { MerchantDirectory } from './operations/merchant-directory.js';
import { buildApp } from './http/app.js';
import { backOfficeRoutes } from './http/backoffice/routes.js';
import { registerBackOffice } from './http/backoffice/plugin.js';
import { signInRoutes } from './http/backoffice/sign-in.js';
import type { HttpDeps } from './http/deps.js';
import { RequestLogWriter } from './operations/request-log.js';
import type { RouteDef } from './http/route.js';
import { directRoute } from './http/routes/direct.js';
import { sandboxRoutes } from './http/routes/sandbox.js';
import { operatorPayoutRoutes } from './http/routes/operator-payouts.js';
import { operatorTransactionRoutes } from './http/routes/operator-transactions.js';
import { processRoute } from './http/routes/process.js';
import { captureRoute, voidRoute } from './http/routes/authorizations.js';
import { tokenizeRoute, transactionStatusRoute } from './http/routes/transactions.js';
import { operatorNotificationRoutes } from './http/routes/operator-notifications.js';
import { operatorMerchantRoutes } from './http/routes/operator-merchants.js';
import { createLogger } from './logging.js';
import { type NotificationWorker, startNotificationWorker } from './notifications/worker.js';
import { ConnectorRegistry, starterGateway } from './connectors/registry.js';
import { LookupGate } from './outbound/lookup-gate.js';
import { ProcessorHttp } from './outbound/processor-http.js';
import { processorCallbackRoutes } from './http/routes/processor-callbacks.js';
import { operatorGatewayRoutes } from './http/routes/operator-gateways.js';
import { operatorRoutingRoutes } from './http/routes/operator-routing.js';
import { reportUnusableMerchants } from './operations/gateways.js';
import { ensureSandboxAdminToken } from './operations/sandbox-admin-token.js';
import { type FirstScreen, firstScreenLines } from './first-screen.js';
import { lockDataFolder } from './store/instance-lock.js';
import type { Store } from './store/store.js';
import { startDueWork, type Worker } from './workers/due-work.js';
import { startSubscriptionBilling } from './workers/subscription-billing.js';
import { startKeyRefresh } from './workers/key-refresh.js';
import { subscriptionRoutes } from './http/routes/subscriptions.js';
import { cashierPageRoutes } from './http/routes/cashier-pages.js';
import { cashierSessionRoutes } from './http/routes/cashier-sessions.js';
import { operatorApplicationRoutes } from './http/routes/operator-applications.js';
import { findOrderRoute } from './http/routes/orders.js';
import { outboundConnections } from './outbound/post.js';
import { GatewayMetrics } from './metrics.js';
import { HeaderReuseWatch } from './http/header-reuse.js';
import { RateLimits } from './http/rate-limits.js';

/**
 * The notification worker's DNS lookups (outbound/lookup-gate.ts): three names at a time (libuv's
 * pool has four threads, and the processors' lookups share it), 8 more waiting their turn, the
 * same name's lookups shared, a failed name not asked again for 30 s. max_waiting is a quarter of
 * the worker's default 32 slots: hosts whose DNS hangs hold at most 8 of them.
 */
const NOTIFICATION_LOOKUPS = {
  max_in_flight: 3,
  max_queued: 8,
  max_waiters_per_host: 8,
  failure_cache_ms: 30_000,
  max_waiting: 8,
} as const;

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly deps: HttpDeps;
  readonly clock: AdjustableClock;
  /** http://host:port actually bound (port 0 in tests picks a free one). */
  readonly url: string;
  readonly demo_merchant: CreatedMerchant | null;
  /** The notification delivery worker of this instance. */
  readonly notifications: NotificationWorker;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly logger?: Logger;
  /** Where the demo merchant's credentials go; stdout by default. */
  readonly announce?: (line: string) => void;
  /**
   * Create the demo merchant on an empty sandbox database (default true). Workers of
   * `PAYGATE_WORKERS` > 1 pass false: their primary created it once before forking them.
   */
  readonly create_demo?: boolean;
  /** The embedded store's WAL flush (store/wal-sync.ts): a thread of its own unless a test holds it to watch what waits. */
  readonly file_syncer?: FileSyncer;
}

/** The merchant a new sandbox makes for itself (docs/api.md §12). */
export const DEMO_MERCHANT_ID = 'demo-merchant';

/**
 * Sandbox only: on a database with no merchant, creates the demo merchant and announces its
 * credentials once. Two processes racing here cannot both create it: the second insert of the
 * same merchant_id is refused by its primary key and that process announces nothing.
 */
export async function ensureDemoMerchant(
  config: Config,
  store: Store,
  merchants: MerchantDirectory,
  now_ms: number,
  announce?: (line: string) => void,
): Promise<CreatedMerchant | null> {
  if (config.environment !== 'sandbox' || (await store.merchants.count()) !== 0) return null;
  const created = await merchants.create(
    {
      merchant_id: DEMO_MERCHANT_ID,
      application_key: 'demo-app',
      frontend: 'demo-frontend',
      secret: randomBytes(24).toString('base64url'),
    },
    now_ms,
    starterGateway(config.environment),
  );
  if (created.kind !== 'created') return null;
  (announce ?? ((line: string) => process.stdout.write(`${line}\n`)))(`Demo sandbox merchant created: ${JSON.stringify(created.merchant)}`);
  return created.merchant;
}

/**
 * The admin token in effect: PAYGATE_ADMIN_TOKEN when set; in the sandbox otherwise its own, made
 * and announced once on first start (operations/sandbox-admin-token.ts); in live mode none.
 */
export async function adminTokenInEffect(
  config: Config,
  store: Store,
  sealer: Sealer,
  now_ms: number,
  announce?: (line: string) => void,
): Promise<{ readonly token: string | null; readonly source: FirstScreen['admin_token'] }> {
  if (config.admin_token !== null) return { token: config.admin_token, source: 'configured' };
  if (config.environment !== 'sandbox') return { token: null, source: 'none' };
  const own = await ensureSandboxAdminToken({ store, sealer }, now_ms);
  if (own.created) {
    (announce ?? ((line: string) => process.stdout.write(`${line}\n`)))(
      `Sandbox admin token created: ${own.token} (send it as Authorization: Bearer <token>; shown once, kept sealed)`,
    );
  }
  return { token: own.token, source: own.created ? 'created' : 'stored' };
}

export async function startGateway(config: Config, options: StartOptions = {}): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger({ level: config.log_level, destination: config.log_file });
  // The embedded store serves one gateway process: a second one on the same folder stops here.
  const instance_lock = config.database_url === null ? lockDataFolder(config.data_dir) : null;
  const keys = masterKeysFor(config);
  if (config.environment === 'live' && keyBesideDatabase(config)) {
    logger.warn(
      { key_file: config.master_key_file },
      'the master key file is beside the database: a copy of the data folder opens every sealed secret and card; set PAYGATE_MASTER_KEY or PAYGATE_MASTER_KEY_FILE (docs/security.md)',
    );
  }
  const store = openConfiguredStore(config, logger, options.file_syncer);
  await store.migrate();
  // Refused here, before serving, when the keys given do not fit the store (operations/master-key.ts).
  const sealer = await loadSealer({ store }, keys, Date.now()).catch(async (error: unknown) => {
    await store.close();
    instance_lock?.release();
    throw error;
  });
  const clock = new AdjustableClock();
  if (config.environment === 'sandbox') clock.set_offset_ms(await store.sandboxClock.getOffset());

  // PUBLIC_URL, or once listening, the bound address (port 0 picks a free port in tests).
  let public_url = config.public_url ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const metrics = new GatewayMetrics();
  // Every request to a processor: its time-outs, size cap and the address policy of live mode;
  // each gateway's connector sends through a labelled view of it, counted in the metrics.
  const processor_http = new ProcessorHttp(
    {
      timeout_ms: config.limits.processor_timeout_ms,
      connect_timeout_ms: config.limits.processor_connect_timeout_ms,
      max_reply_bytes: config.limits.processor_reply_max_bytes,
      allow_private: config.environment === 'sandbox' || config.limits.allow_private_urls,
      // One hanging processor must not hold every request or starve the other gateways (processor-guard.ts).
      guard: {
        max_in_flight: config.limits.processor_max_in_flight,
        max_waiting: config.limits.processor_max_waiting,
        wait_max_ms: config.limits.processor_wait_max_ms,
        breaker_failures: config.limits.processor_breaker_failures,
        breaker_open_ms: config.limits.processor_breaker_open_ms,
      },
    },
    metrics.observeProcessorCall,
  );
  metrics.watchProcessors(() => processor_http.guardStates());
  const connectors = new ConnectorRegistry(config.environment, sealer, {
    options: connectorOptions(config),
    clock,
    public_url: () => public_url,
    http: processor_http,
  });
  const merchants = new MerchantDirectory(store, sealer, config.limits.merchant_cache_ms, config.limits.unknown_merchant_cache_ms);
  const primary = options.create_demo !== false;
  const demo_merchant = primary ? await ensureDemoMerchant(config, store, merchants, clock.now_ms(), options.announce) : null;
  // Every check of the admin token reads deps.config.admin_token: the sandbox's own one goes there.
  const admin = await adminTokenInEffect(config, store, sealer, clock.now_ms(), options.announce);
  // API requests are kept (masked) for the back office's Request log, written off the request's path.
  const request_log = new RequestLogWriter({ store, clock, logger, config }).start();
  metrics.watchRequestLog(() => request_log);
  const deps: HttpDeps = {
    store,
    sealer,
    clock,
    wall_clock: wallClock,
    merchants,
    connectors,
    config: admin.token === config.admin_token ? config : { ...config, admin_token: admin.token },
    logger,
    public_url: () => public_url,
    metrics,
    // A header is accepted within the timestamp window on either side: remembered for both.
    header_reuse: new HeaderReuseWatch(2 * config.limits.request_window_seconds * 1000 + 1000),
    rate_limits: new RateLimits(
      config.limits.rate_per_address_per_minute,
      config.limits.rate_per_merchant_per_minute,
      config.limits.rate_sign_in_per_address_per_minute,
    ),
    request_log,
    answers_durable: () => store.durable(),
  };
  deps.metrics.watch(store, clock);

  if (primary && config.environment === 'live') await reportUnusableMerchants(deps);

  const routes: RouteDef[] = [processRoute(), captureRoute(), voidRoute(), tokenizeRoute(), transactionStatusRoute()];
  // The sandbox's 3-D Secure and e-wallet pages and its clock: only where the sandbox connector may run (sandbox mode).
  if (connectors.runsHere('sandbox')) routes.push(...sandboxRoutes(deps, clock));
  routes.push(...processorCallbackRoutes(deps), ...operatorGatewayRoutes(deps), ...operatorRoutingRoutes(deps));
  routes.push(...operatorNotificationRoutes(deps), ...operatorMerchantRoutes(deps));
  routes.push(directRoute(), ...operatorPayoutRoutes(deps), ...operatorTransactionRoutes(deps));
  routes.push(...subscriptionRoutes());
  // The hosted cashier (issue 5): session calls, find-order, the pages, the operator's framing setting.
  routes.push(
    ...cashierSessionRoutes(() => public_url),
    findOrderRoute(),
    ...cashierPageRoutes(deps, () => public_url),
    ...operatorApplicationRoutes(deps),
  );
  const app = buildApp(deps, routes, logger);
  // The back office (issue 15): pages for operators and merchants' staff under /backoffice/.
  registerBackOffice(app, deps, backOfficeRoutes(), signInRoutes());
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  if (config.public_url === null) public_url = url;
  // Where this instance's webhook URLs point and its mode, for the CLI, which runs with its own
  // environment (issue 30): `paygate gateway …` prints the webhook_url this instance serves.
  await store.instance.recordInstance({
    public_url,
    public_url_configured: config.public_url !== null,
    environment: config.environment,
    started_at_ms: Date.now(),
  });

  const sync_clock = config.environment === 'sandbox' ? async () => clock.set_offset_ms(await store.sandboxClock.getOffset()) : undefined;
  // Notifications reuse their connections to a merchant (one TCP handshake per socket, not per notification).
  const notify_connections = outboundConnections();
  const notifications = startNotificationWorker({
    store,
    clock,
    lease_clock: deps.wall_clock,
    logger,
    secretOf: async (merchant_id) => (await merchants.find(merchant_id))?.secret ?? null,
    policy: {
      timeout_ms: config.limits.outbound_timeout_ms,
      max_reply_bytes: config.limits.outbound_reply_max_bytes,
      // Sandbox merchants test against their own machines; live mode refuses private addresses unless allowed.
      allow_private: config.environment === 'sandbox' || config.limits.allow_private_urls,
      connections: notify_connections,
      // Merchants' names whose DNS hangs must not queue lookups (and memory) without bound, nor take
      // the thread pool the processors' lookups need (outbound/lookup-gate.ts).
      lookups: new LookupGate(NOTIFICATION_LOOKUPS),
    },
    schedule: { retry_seconds: config.schedules.notify_retry_seconds, max_age_seconds: config.schedules.notify_max_age_seconds },
    poll_ms: config.schedules.notify_poll_ms,
    lease_ms: config.schedules.notify_lease_ms,
    concurrency: config.schedules.notify_concurrency,
    stop_grace_ms: Math.min(config.limits.outbound_timeout_ms, 5_000),
    sync_clock,
    on_attempt: (outcome, lag_ms) => {
      deps.metrics.notification_attempts.inc({ outcome });
      deps.metrics.notification_lag.observe(lag_ms / 1000);
    },
  });
  // A status change (or an operator's resend) that commits sends its notification at once.
  const stop_waking = store.onNotificationCommitted(() => notifications.wake());
  const workers: Worker[] = [
    notifications,
    startDueWork({
      deps,
      poll_ms: config.schedules.due_work_poll_ms,
      sync_clock,
    }),
    startSubscriptionBilling({
      deps,
      poll_ms: config.schedules.billing_poll_ms,
      lease_ms: config.schedules.billing_lease_seconds * 1000,
      concurrency: config.schedules.billing_concurrency,
      sync_clock,
    }),
    // A rotation's switch of the sealing key reaches this instance within one period.
    startKeyRefresh({ store, sealer, logger, every_ms: config.key_refresh_ms }),
  ];
  // The heap's bound says whether the process was started with the gateway's Node.js flags (scripts/node-flags.mjs).
  const heap_limit_mb = Math.round(getHeapStatistics().heap_size_limit / 1_048_576);
  logger.info({ url, store: store.dialect, environment: config.environment, heap_limit_mb }, 'paygate listening');
  // The first screen: once per start, by the process that starts (a cluster's primary prints its own).
  if (primary) {
    const demo_merchant_id =
      config.environment === 'sandbox' && (demo_merchant ?? (await store.merchants.get(DEMO_MERCHANT_ID))) ? DEMO_MERCHANT_ID : null;
    const lines = firstScreenLines({
      environment: config.environment,
      url: public_url,
      store: storeName(config),
      demo_merchant_id,
      demo_created: demo_merchant !== null,
      admin_token: admin.source,
    });
    const announce = options.announce ?? ((line: string) => process.stdout.write(`${line}\n`));
    for (const line of lines) announce(line);
  }

  return {
    app,
    deps,
    clock,
    url,
    demo_merchant,
    notifications,
    async close() {
      stop_waking();
      await Promise.all(workers.map((w) => w.stop()));
      notify_connections.close();
      await app.close();
      // What the last requests left queued is written before the store closes.
      await request_log.stop();
      await processor_http.close();
      await store.close();
      instance_lock?.release();
    },
  };
}
