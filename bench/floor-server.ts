// The floor: the least a durable sale of this API can cost on this machine, to tell a target the
// gateway misses from one nobody could meet here (issue 29 asks for the measurement that proves a
// target impossible). The same Fastify, body and answer shape as the ceiling, plus only what no
// durable, signed sale can skip:
//   - the route's JSON schema (bad input must get an error naming the field);
//   - the body's signature checked (decisions §1, the gateway's own domain/signing.ts);
//   - the PAN sealed (AES-256-GCM) and fingerprinted (HMAC), as the gateway's Sealer does;
//   - a random trace_id (issue 30), the transaction and its notification inserted in one SQLite
//     transaction (WAL, synchronous FULL) under the idempotency key's unique index, committed in
//     groups (every request of an event-loop turn in one commit), and the answer sent after it;
//   - the answer signed.
//   - the notification's first attempt once the sale is committed: its body signed and POSTed
//     (undici), the attempt recorded in the next group commit. The bench's gateway sends its
//     notifications to a closed port; the floor is given the same URL, so both pay for a refused
//     connection and a recorded retry.
// On PostgreSQL (FLOOR_DATABASE_URL, an empty database of its own) a sale is one prepared
// statement, the transaction and its notification in one round trip and one commit, and an
// attempt another: the fewest commits a notified sale can make there.
// Left out, as no minimum needs them: routing, the request log, metrics, logging, rate limits,
// the card vault, status history, the attempts' own rows. A replay or a duplicate key is answered
// as an error here; the floor measures new sales only.
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { request as undiciRequest } from 'undici';
import { Sealer } from '../src/crypto/sealer.js';
import { signBody, verifyBody } from '../src/domain/signing.js';

const port = Number(process.argv[2] ?? 0);
const secret = process.env.FLOOR_SECRET ?? '';
if (secret === '') throw new Error('FLOOR_SECRET (the signing secret of the bodies sent) is required');

/** A retry's delay, as the gateway's first one (5 minutes). */
const RETRY_AFTER_MS = 5 * 60_000;
const sealer = new Sealer(randomBytes(32));
const drawTraceId = () => randomInt(1_000_000_000, 2_000_000_000);

type SaleRow = Record<string, string | number>;
/** The floor's store: SQLite (a file of its own) or, given FLOOR_DATABASE_URL, PostgreSQL (a database of its own). */
interface FloorStore {
  /** The sale and its notification committed together; the notification's id, or null when the order_id was taken. */
  insertSale(row: SaleRow, url: string): Promise<number | null>;
  /** A notification attempt recorded (committed with the next group on SQLite, alone on PostgreSQL). */
  recordAttempt(id: number, next_attempt_at_ms: number): Promise<void>;
  close(): Promise<void>;
}

const TRANSACTIONS = `trace_id bigint primary key, merchant_id text not null, order_id text not null,
    amount_minor bigint not null, currency text not null, status text not null,
    card_masked text not null, pan_sealed text not null, pan_fingerprint text not null,
    answer_json text not null, created_at_ms bigint not null,
    unique (merchant_id, order_id)`;
const NOTIFICATION_COLUMNS = `trace_id bigint not null, url text not null,
    payload_json text not null, attempts integer not null default 0, next_attempt_at_ms bigint not null`;

/**
 * SQLite in WAL with synchronous FULL, committed in groups as the gateway does: every sale and
 * attempt of one event-loop turn in one transaction, each sale answered once it is committed.
 */
function sqliteStore(): FloorStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-floor-'));
  const db = new Database(path.join(dir, 'floor.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`create table transactions (${TRANSACTIONS.replace('trace_id bigint primary key', 'trace_id integer primary key')});
    create table notifications (id integer primary key, ${NOTIFICATION_COLUMNS});
    create index notifications_due on notifications (next_attempt_at_ms);`);
  const insert_transaction = db.prepare(`insert into transactions values
    (@trace_id, @merchant_id, @order_id, @amount_minor, @currency, @status, @card_masked, @pan_sealed,
     @pan_fingerprint, @answer_json, @created_at_ms)`);
  const insert_notification = db.prepare('insert into notifications (trace_id, url, payload_json, next_attempt_at_ms) values (?, ?, ?, ?)');
  const record_attempt = db.prepare('update notifications set attempts = attempts + 1, next_attempt_at_ms = ? where id = ?');
  let sales: { readonly row: SaleRow; readonly url: string; readonly resolve: (id: number | null) => void }[] = [];
  let attempts: { readonly id: number; readonly next_attempt_at_ms: number }[] = [];
  const commitGroup = db.transaction((group: typeof sales, tried: typeof attempts) => {
    for (const a of tried) record_attempt.run(a.next_attempt_at_ms, a.id);
    return group.map((p) => {
      for (let draw = 0; draw < 8; draw += 1) {
        try {
          insert_transaction.run(p.row);
          return Number(insert_notification.run(p.row.trace_id, p.url, p.row.answer_json, p.row.created_at_ms).lastInsertRowid);
        } catch (error) {
          // A trace_id taken (one draw in 10^9 a row) draws again; the order_id taken is the caller's.
          if ((error as { code?: string }).code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return null;
          p.row.trace_id = drawTraceId();
        }
      }
      throw new Error('eight trace_ids taken in a row');
    });
  });
  const flush = () => {
    const group = sales;
    const tried = attempts;
    sales = [];
    attempts = [];
    const ids = commitGroup(group, tried);
    group.forEach((p, i) => p.resolve(ids[i]!));
  };
  const scheduleFlush = () => {
    if (sales.length === 0 && attempts.length === 0) setImmediate(flush);
  };
  return {
    insertSale: (row, url) =>
      new Promise((resolve) => {
        scheduleFlush();
        sales.push({ row, url, resolve });
      }),
    recordAttempt: async (id, next_attempt_at_ms) => {
      scheduleFlush();
      attempts.push({ id, next_attempt_at_ms });
    },
    close: async () => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * PostgreSQL with its defaults (synchronous_commit on): a sale is one prepared statement (the
 * transaction and its notification, one round trip, one commit), an attempt another.
 */
async function postgresStore(database_url: string): Promise<FloorStore> {
  const pool = new pg.Pool({ connectionString: database_url, max: POSTGRES_POOL_MAX });
  await pool.query(`create table transactions (${TRANSACTIONS});
    create table notifications (id bigserial primary key, ${NOTIFICATION_COLUMNS});
    create index notifications_due on notifications (next_attempt_at_ms);`);
  const insert_sale = `with t as (
      insert into transactions values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
      on conflict (merchant_id, order_id) do nothing returning trace_id)
    insert into notifications (trace_id, url, payload_json, next_attempt_at_ms)
    select trace_id, $12, $10, $11 from t returning id`;
  return {
    async insertSale(row, url) {
      for (let draw = 0; draw < 8; draw += 1) {
        try {
          const { rows } = await pool.query<{ id: string }>({
            name: 'floor_sale',
            text: insert_sale,
            values: [
              row.trace_id,
              row.merchant_id,
              row.order_id,
              row.amount_minor,
              row.currency,
              row.status,
              row.card_masked,
              row.pan_sealed,
              row.pan_fingerprint,
              row.answer_json,
              row.created_at_ms,
              url,
            ],
          });
          return rows.length === 0 ? null : Number(rows[0]!.id);
        } catch (error) {
          if ((error as { code?: string }).code !== '23505') throw error; // only the trace_id can still collide
          row.trace_id = drawTraceId();
        }
      }
      throw new Error('eight trace_ids taken in a row');
    },
    async recordAttempt(id, next_attempt_at_ms) {
      await pool.query({
        name: 'floor_attempt',
        text: 'update notifications set attempts = attempts + 1, next_attempt_at_ms = $1 where id = $2',
        values: [next_attempt_at_ms, id],
      });
    },
    close: () => pool.end(),
  };
}

/** The gateway's own pool size by default (docs/limits.md). */
const POSTGRES_POOL_MAX = 10;
const database_url = process.env.FLOOR_DATABASE_URL;
const store = database_url ? await postgresStore(database_url) : sqliteStore();

/** The notification's first attempt: signed, POSTed, and recorded (a refused connection is a retry). */
async function attempt(id: number, url: string, payload: Record<string, unknown>): Promise<void> {
  const body = JSON.stringify({ ...payload, signature: signBody(payload, secret) });
  try {
    const answer = await undiciRequest(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    await answer.body.text();
  } catch {
    // refused, as the bench's closed port does: tried again later
  }
  await store.recordAttempt(id, Date.now() + RETRY_AFTER_MS);
}

const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });
const body_schema = {
  type: 'object',
  required: [
    'merchant_id',
    'order_id',
    'amount',
    'currency',
    'card_number',
    'card_exp',
    'cvv',
    'notification_url',
    'timestamp',
    'signature',
  ],
  properties: {
    merchant_id: text(64),
    order_id: text(64),
    amount: { type: 'integer', minimum: 1, maximum: 99_999_999_999 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    card_number: { type: 'string', pattern: '^[0-9]{12,19}$' },
    card_exp: { type: 'string', pattern: '^(0[1-9]|1[0-2])/[0-9]{4}$' },
    cvv: { type: 'string', pattern: '^[0-9]{3,4}$' },
    notification_url: text(2048),
    timestamp: { type: 'integer' },
    signature: { type: 'string', pattern: '^[0-9a-f]{96}$' },
  },
};

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
app.post('/api/process', { schema: { body: body_schema } }, async (request, reply) => {
  const body = request.body as Record<string, string | number>;
  if (!verifyBody(body, secret)) return reply.send({ status: 2, description: 'bad signature' });
  const pan = String(body.card_number);
  const now_ms = Date.now();
  const trace_id = randomInt(1_000_000_000, 2_000_000_000);
  const answer = {
    status: 0,
    description: 'Transaction processed',
    trace_id,
    transaction_id: `sbx_${randomBytes(10).toString('hex')}`,
    transaction_status: 'approved',
    payment_processor: 'sandbox',
    redirect_url: null,
    error_code: '0',
    error_details: '[TEST] Approved',
    version: '1.2',
    timestamp: Math.floor(now_ms / 1000),
  };
  const row = {
    trace_id,
    merchant_id: String(body.merchant_id),
    order_id: String(body.order_id),
    amount_minor: Number(body.amount),
    currency: String(body.currency),
    status: 'approved',
    card_masked: `${pan.slice(0, 6)}******${pan.slice(-4)}`,
    pan_sealed: sealer.seal(pan, `pan:${String(body.merchant_id)}`),
    pan_fingerprint: sealer.fingerprint(pan, 'pan'),
    answer_json: JSON.stringify(answer),
    created_at_ms: now_ms,
  };
  const notification_id = await store.insertSale(row, String(body.notification_url));
  if (notification_id === null) return reply.send({ status: 4, description: 'order_id taken' });
  void attempt(notification_id, String(body.notification_url), { ...answer, order_id: row.order_id });
  return reply.send({ ...answer, trace_id: row.trace_id, signature: signBody({ ...answer, trace_id: row.trace_id }, secret) });
});
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`);
// The bench stops it with SIGTERM: its database is scratch, removed with it.
process.once('SIGTERM', () => {
  void app.close().finally(() => {
    void store.close().finally(() => process.exit(0));
  });
});
