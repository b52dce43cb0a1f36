// Starts a real gateway (real HTTP on a free port, real SQLite file or a fresh PostgreSQL
// database) with a log file per gateway, for API and browser tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logging.js';
import { type RunningGateway, startGateway } from '../../src/main.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { starterGateway } from '../../src/connectors/registry.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import type { StoreKind } from './stores.js';
import type { FileSyncer } from '../../src/store/wal-sync.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestGateway {
  readonly url: string;
  readonly gateway: RunningGateway;
  readonly merchant: CreatedMerchant;
  readonly data_dir: string;
  readonly log_file: string;
  readonly database_url: string | null;
  createMerchant(overrides?: Partial<Omit<CreatedMerchant, 'gateway'>>): Promise<CreatedMerchant>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  readonly env?: Record<string, string>;
  /** Reuse a data dir / database (restart tests). */
  readonly data_dir?: string;
  readonly database?: TestDatabase | undefined;
  /** Where the gateway's announcements go (the demo merchant, the sandbox's admin token, the first screen); dropped by default. */
  readonly announce?: (line: string) => void;
  /** The embedded store's WAL flush, to hold it (test/store/wal-sync.test.ts). */
  readonly file_syncer?: FileSyncer;
}

export const TEST_MASTER_KEY = 'a'.repeat(64);

export async function startTestGateway(kind: StoreKind, options: TestGatewayOptions = {}): Promise<TestGateway> {
  const data_dir = options.data_dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-test-'));
  const database = kind === 'postgres' ? (options.database ?? (await createTestDatabase())) : null;
  const log_file = path.join(data_dir, `gateway-${randomBytes(4).toString('hex')}.log`);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PAYGATE_DATA_DIR: data_dir,
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYGATE_LOG_LEVEL: 'debug',
    PAYGATE_DUE_WORK_POLL_MS: '50',
    // Load shedding reads the process's event-loop lag; a test gateway shares its process with the
    // test runner and other gateways, whose work is not its load. test/api/load-shedding.test.ts turns it on.
    PAYGATE_SHED_EVENT_LOOP_DELAY_MS: '0',
    ...(database ? { DATABASE_URL: database.url, PAYGATE_MASTER_KEY: TEST_MASTER_KEY } : {}),
    ...options.env,
  });
  const logger = createLogger({ level: 'debug', destination: log_file });
  const gateway = await startGateway(config, {
    logger,
    announce: options.announce ?? (() => undefined),
    ...(options.file_syncer ? { file_syncer: options.file_syncer } : {}),
  });
  const url = gateway.url;
  const existing = gateway.demo_merchant;
  const merchant = existing ?? (await createMerchantVia(gateway, {}));
  return {
    url,
    gateway,
    merchant,
    data_dir,
    log_file,
    database_url: database?.url ?? null,
    createMerchant: (overrides = {}) => createMerchantVia(gateway, overrides),
    async close() {
      await gateway.close();
      if (database && !options.database) await database.drop();
    },
  };
}

async function createMerchantVia(gateway: RunningGateway, overrides: Partial<Omit<CreatedMerchant, 'gateway'>>): Promise<CreatedMerchant> {
  const outcome = await gateway.deps.merchants.create({ ...overrides }, Date.now(), starterGateway(gateway.deps.config.environment));
  if (outcome.kind !== 'created') throw new Error(`merchant not created: ${JSON.stringify(outcome)}`);
  return outcome.merchant;
}

/** Two gateway instances on one new PostgreSQL database, as several stateless instances run (docs/scale-out.md); close() stops both and drops it. */
export interface TwoInstances {
  readonly a: TestGateway;
  readonly b: TestGateway;
  close(): Promise<void>;
}

export async function startTwoInstances(options: Omit<TestGatewayOptions, 'database' | 'data_dir'> = {}): Promise<TwoInstances> {
  const database = await createTestDatabase();
  const a = await startTestGateway('postgres', { ...options, database });
  const b = await startTestGateway('postgres', { ...options, database });
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await database.drop();
    },
  };
}
