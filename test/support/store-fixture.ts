// A real store for contract and domain tests: a SQLite file in a temp dir, or a fresh
// PostgreSQL database that is dropped afterwards. Plus row builders with every required column.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TraceIdSource } from '../../src/domain/trace-id.js';
import { openPostgresStore, openSqliteStore } from '../../src/store/open.js';
import type { CardVaultRow, NewCashierSessionRow, NewGatewayRow, NewTransactionRow } from '../../src/store/schema.js';
import type { NewMerchant, Store } from '../../src/store/store.js';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { ADMIN_DATABASE_URL, createTestDatabase } from './postgres.js';
import type { StoreKind } from './stores.js';

export interface TestStore {
  readonly store: Store;
  /** SQLite: the database file, for a test's own connection; null on PostgreSQL. */
  readonly sqlite_path: string | null;
  /** Closes the store and removes its file or drops its database. */
  cleanup(): Promise<void>;
}

/** `trace_ids`: the source of new trace_ids, when a test needs its draws to collide (domain/trace-id.ts). */
export async function openTestStore(
  kind: StoreKind,
  options: { pg_pool_max?: number; trace_ids?: TraceIdSource } = {},
): Promise<TestStore> {
  const store_options = options.trace_ids ? { trace_ids: options.trace_ids } : {};
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-store-'));
    const sqlite_path = path.join(dir, 'paygate.sqlite');
    const store = openSqliteStore(sqlite_path, store_options);
    await store.migrate();
    return {
      store,
      sqlite_path,
      async cleanup() {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const database = await createTestDatabase();
  const store = openPostgresStore(database.url, options.pg_pool_max ?? 30, undefined, store_options);
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => undefined);
    await database.drop();
    throw error;
  }
  return {
    store,
    sqlite_path: null,
    async cleanup() {
      await store.close();
      await waitForDisconnects(database.url);
      await database.drop();
    },
  };
}

/**
 * pg's Pool.end() resolves once it has asked its clients to end, not once the server has
 * seen them go. Dropping the database WITH (FORCE) in between makes the server terminate
 * those sessions, and the ending clients then raise unhandled 57P01 errors. Wait them out.
 */
async function waitForDisconnects(database_url: string, timeout_ms = 5000): Promise<void> {
  const name = decodeURIComponent(new URL(database_url).pathname.slice(1));
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    const deadline = Date.now() + timeout_ms;
    while (Date.now() < deadline) {
      const { rows } = await admin.query<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1', [name]);
      if (Number(rows[0]?.n ?? 0) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await admin.end();
  }
}

/** For a suite: a migrated store of `kind` holding one merchant, opened before its tests and removed after them. */
export function withStoreAndMerchant(kind: StoreKind, opened: (started: { store: Store; merchant_id: string }) => void): void {
  let handle: TestStore | undefined;
  beforeAll(async () => {
    handle = await openTestStore(kind);
    const merchant = merchantFixture();
    await handle.store.merchants.insert(merchant);
    opened({ store: handle.store, merchant_id: merchant.merchant_id });
  });
  afterAll(async () => {
    await handle?.cleanup();
  });
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

/** A sandbox gateway row of a merchant, without settings. */
export function gatewayFixture(merchant_id: string, overrides: Partial<NewGatewayRow> = {}): NewGatewayRow {
  return {
    gateway_id: `gw-${merchant_id}`,
    merchant_id,
    connector: 'sandbox',
    currencies: 'USD,EUR',
    mit_enabled: 1,
    hold_payouts: 0,
    settings_sealed: null,
    created_at_ms: 1_700_000_000_000,
    updated_at_ms: 1_700_000_000_000,
    ...overrides,
  };
}

export function merchantFixture(merchant_id = uniqueId('m'), overrides: Partial<NewMerchant> = {}): NewMerchant {
  return {
    merchant_id,
    secret_sealed: `v1:sealed-secret-of-${merchant_id}`,
    applications: [`app-${merchant_id}`],
    frontends: [{ name: `front-${merchant_id}`, currency: 'USD' }],
    gateways: [gatewayFixture(merchant_id, { gateway_id: `gw-${merchant_id}` })],
    created_at_ms: 1_700_000_000_000,
    ...overrides,
  };
}

/** A transaction row with every NOT NULL column set; override what the test is about. */
export function transactionFixture(merchant_id: string, overrides: Partial<NewTransactionRow> = {}): NewTransactionRow {
  return {
    merchant_id,
    transaction_type: 'sale',
    order_id: uniqueId('order'),
    request_fingerprint: 'fp-1',
    api_version: '1.2',
    identity_kind: 'application_key',
    identity_value: `app-${merchant_id}`,
    gateway_id: `gw-${merchant_id}`,
    payment_processor: 'sandbox',
    payment_method: 'card',
    status: 'pending',
    amount_minor: 1999,
    currency: 'USD',
    charge_amount_minor: 1999,
    charge_currency: 'USD',
    pin: 'cust-42',
    card_masked: '411111******1111',
    card_brand: 'VISA',
    card_exp: '12/2030',
    card_fingerprint: 'card-fp',
    card_token: null,
    reference_id: null,
    return_url: null,
    notification_url: null,
    psp_transaction_id: null,
    error_code: null,
    error_details: null,
    description: null,
    redirect_url: null,
    challenge_token_hash: null,
    challenge_expires_at_ms: null,
    challenge_mode: null,
    answer_json: null,
    variables_json: null,
    created_at_ms: 1_700_000_000_000,
    updated_at_ms: 1_700_000_000_000,
    ...overrides,
  };
}

/** A pending checkout order's cashier session, opened at `at_ms` (15 minutes to pay); override what the test is about. */
export function cashierSessionFixture(
  merchant_id: string,
  at_ms: number,
  overrides: Partial<NewCashierSessionRow> = {},
): NewCashierSessionRow & { session_id: string; order_id: string } {
  const session_id = uniqueId('session');
  const order_id = uniqueId('order');
  return {
    merchant_id,
    kind: 'checkout',
    identity_kind: 'frontend',
    identity_value: 'shop-front',
    api_version: '1.1',
    request_fingerprint: 'fp',
    auth_token_hash: uniqueId('auth'),
    currency: 'USD',
    amount_minor: 1999,
    balance_minor: null,
    pin: 'cust-1',
    country: 'GB',
    customer_sealed: 'sealed',
    locale: null,
    payment_method: 'card',
    gateway_id: null,
    profile: null,
    return_url: 'https://merchant.example/return',
    notification_url: 'https://merchant.example/notify',
    validation_url: null,
    variables_json: null,
    order_status: 'pending',
    expires_at_ms: at_ms + 900_000,
    closed_at_ms: null,
    attempts: 0,
    claim_until_ms: null,
    created_at_ms: at_ms,
    updated_at_ms: at_ms,
    ...overrides,
    session_id: overrides.session_id ?? session_id,
    order_id: overrides.order_id ?? order_id,
  };
}

export function cardFixture(merchant_id: string, overrides: Partial<CardVaultRow> = {}): CardVaultRow {
  return {
    card_token: randomBytes(16).toString('hex'),
    merchant_id,
    pin: 'cust-42',
    pan_sealed: 'v1:sealed-pan',
    pan_fingerprint: 'pan-fp',
    card_masked: '411111******1111',
    card_exp: '12/2030',
    card_brand: 'VISA',
    created_at_ms: 1_700_000_000_000,
    ...overrides,
  };
}

/** A pending notification of a transaction, due at `next_attempt_at_ms`, unleased; override what the test is about. */
export function notificationFixture(trace_id: number, merchant_id: string, next_attempt_at_ms: number, created_at_ms: number) {
  return {
    trace_id,
    merchant_id,
    url: 'https://merchant.example/notify',
    payload_json: JSON.stringify({ trace_id }),
    state: 'pending' as const,
    next_attempt_at_ms,
    lease_until_ms: null,
    lease_owner: null,
    last_error: null,
    created_at_ms,
    updated_at_ms: created_at_ms,
  };
}
