// The logger redacts card data, secrets, signatures and tokens at any depth: what is written to
// the log file is checked, line by line, after logging objects shaped the way code logs them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, isSensitiveKey, REDACT_MAX_DEPTH, redactDeep, redactUrl } from '../../src/logging.js';

const PAN = '4000056655665556';
const CVV = '7391';
const SIGNATURE = 'ab'.repeat(48);

async function logged(write: (logger: Logger) => void): Promise<{ text: string; lines: Record<string, unknown>[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-log-'));
  const file = path.join(dir, 'test.log');
  const logger = createLogger({ level: 'debug', destination: file });
  write(logger);
  // Ending the logger's file stream writes everything still buffered, once the file is open.
  const stream = (logger as unknown as Record<symbol, NodeJS.EventEmitter & { end(): void }>)[pino.symbols.streamSym]!;
  await new Promise<void>((resolve) => {
    stream.once('close', () => resolve());
    stream.end();
  });
  const text = fs.readFileSync(file, 'utf8');
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    text,
    lines: text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Walks to a nested value by keys. */
function at(value: unknown, ...keys: (string | number)[]): unknown {
  return keys.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
}

describe('log redaction', () => {
  it('redacts card fields, secrets, signatures and tokens at any depth, keeping everything else', async () => {
    const body = {
      merchant_id: 'm-1',
      amount: 1999,
      card_masked: '400005******5556',
      nested: { level2: { level3: { level4: { level5: { card_number: PAN, cvv: CVV, card_exp: '10/2033', note: 'kept' } } } } },
      items: [{ card_token: 'tok-aaaaaaaaaaaa', order_id: 'o-1' }, [{ signature: SIGNATURE }]],
    };
    const { text, lines } = await logged((logger) => logger.debug({ body, secret: 'top-secret-value' }, 'signed request'));
    const [line] = lines;
    expect(line).toMatchObject({ msg: 'signed request', secret: '[redacted]' });
    const deep = at(line, 'body', 'nested', 'level2', 'level3', 'level4', 'level5');
    expect(deep).toEqual({ card_number: '[redacted]', cvv: '[redacted]', card_exp: '[redacted]', note: 'kept' });
    expect(at(line, 'body', 'items', 0)).toEqual({ card_token: '[redacted]', order_id: 'o-1' });
    expect(at(line, 'body', 'items', 1, 0)).toEqual({ signature: '[redacted]' });
    expect(at(line, 'body', 'amount')).toBe(1999);
    expect(at(line, 'body', 'card_masked')).toBe('400005******5556');
    for (const secret of [PAN, CVV, SIGNATURE, 'tok-aaaaaaaaaaaa', 'top-secret-value']) expect(text).not.toContain(secret);
    // The caller's object is not changed by logging it.
    expect(body.nested.level2.level3.level4.level5.card_number).toBe(PAN);
  });

  it('matches header and field names in any case, and names that only contain a secret word', async () => {
    const { text, lines } = await logged((logger) =>
      logger.info(
        {
          headers: { Authorization: 'Bearer admin-token-123', 'Gt-Authentication': 'gt-header-456', Cookie: 'paygate_session=cookie-789' },
          session: {
            session_token: 'sess-abc',
            merchant_secret: 'msecret-def',
            CVV_Encrypted: 'Zm9vYmFy',
            data_account_number: 'DE02120300000000202051',
          },
        },
        'headers',
      ),
    );
    expect(at(lines[0], 'headers')).toEqual({ Authorization: '[redacted]', 'Gt-Authentication': '[redacted]', Cookie: '[redacted]' });
    for (const secret of [
      'admin-token-123',
      'gt-header-456',
      'cookie-789',
      'sess-abc',
      'msecret-def',
      'Zm9vYmFy',
      'DE02120300000000202051',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('redacts child logger bindings and error fields, keeping the error message', async () => {
    const error = Object.assign(new Error('database refused the row'), { detail: { card_number: PAN }, code: '23505' });
    const { text, lines } = await logged((logger) => {
      logger.child({ auth_token: 'child-token-999', request_id: 'r-1' }).info('in a child');
      logger.error({ err: error }, 'request failed');
      logger.warn({ failure: error }, 'under another name');
      logger
        .child({ request_id: 'r-2' })
        .child({ context: { merchant: { secret: 'grandchild-secret' } } })
        .info('in a grandchild');
    });
    expect(lines[0]).toMatchObject({ auth_token: '[redacted]', request_id: 'r-1', msg: 'in a child' });
    expect(lines[1]).toMatchObject({
      msg: 'request failed',
      err: { message: 'database refused the row', code: '23505', detail: { card_number: '[redacted]' } },
    });
    expect(lines[2]).toMatchObject({ failure: { message: 'database refused the row', detail: { card_number: '[redacted]' } } });
    expect(lines[3]).toMatchObject({ request_id: 'r-2', context: { merchant: { secret: '[redacted]' } }, msg: 'in a grandchild' });
    expect(text).not.toContain('child-token-999');
    expect(text).not.toContain('grandchild-secret');
    expect(text).not.toContain(PAN);
  });

  it('survives cycles and cuts nesting deeper than it checks', async () => {
    const loop: Record<string, unknown> = { name: 'loop', card: { pan: PAN } };
    loop.self = loop;
    let deep: Record<string, unknown> = { cvv: CVV };
    for (let i = 0; i < REDACT_MAX_DEPTH + 5; i += 1) deep = { inner: deep, password: `pw-${i}-hidden` };
    const { text, lines } = await logged((logger) => logger.info({ loop, deep }, 'odd shapes'));
    expect(at(lines[0], 'loop')).toEqual({ name: 'loop', card: { pan: '[redacted]' }, self: '[Circular]' });
    expect(text).not.toContain(PAN);
    expect(text).not.toMatch(/pw-\d+-hidden/);
    expect(text).not.toContain(`"cvv":"${CVV}"`);
    expect(text).toContain('[Object]');
  });

  it('keeps values that write themselves (dates, buffers) and leaves null and absent values alone', () => {
    const when = new Date(0);
    expect(redactDeep({ when, token: null, secret: undefined, n: 1 })).toEqual({ when, token: null, secret: undefined, n: 1 });
    expect(isSensitiveKey('card_masked')).toBe(false);
    expect(isSensitiveKey('company')).toBe(false);
    expect(isSensitiveKey('PAN')).toBe(true);
    expect(isSensitiveKey('card_number_encrypted')).toBe(true);
  });

  it('cuts capability tokens out of URLs', () => {
    expect(redactUrl('/sandbox/3ds/AbCdEfGhIjKlMnOp?x=1')).toBe('/sandbox/3ds/[redacted]?x=1');
    expect(redactUrl('/cashier/login?auth_token=secret-value&lang=en')).toBe('/cashier/login?auth_token=[redacted]&lang=en');
  });
});
