// `paygate gateway ...` as an operator runs it (decisions.md §13): real processes on a real SQLite
// file, in live mode. A live merchant starts with no gateway; the operator adds a Checkout.com
// one with its credentials, which are sealed at rest and never printed again; bad input names
// the option (never a credential's value) and creates nothing; a running gateway serves the new
// gateway at once, and takes no new payment through it once it is disabled.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA } from '../support/bodies.js';
import { type FakeCheckout, startFakeCheckout } from '../support/checkout/fake.js';
import { spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { postSigned } from '../support/client.js';
import { CHECKOUT_WEBHOOK_SECRET, CURRENCY_ACCOUNT, PROCESSING_CHANNEL } from '../support/live-checkout.js';
import { CLI_ENTRY } from '../support/build.js';

const CLI = [CLI_ENTRY];
const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-cli-gateways-'));
const ENV = { PAYGATE_DATA_DIR: data_dir, PAYGATE_ENV: 'live', PAYGATE_ALLOW_PRIVATE_URLS: 'true', PUBLIC_URL: 'https://pay.example.com' };

function paygate(args: string[], env: Record<string, string> = ENV) {
  return spawnSync(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
}

function json(result: ReturnType<typeof paygate>): Record<string, unknown> {
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('paygate gateway (live mode, SQLite)', () => {
  let fake: FakeCheckout;
  let merchant: Record<string, unknown>;
  const settings = () => [
    '--setting',
    `secret_key=${fake.secret_key}`,
    '--setting',
    `processing_channel_id=${PROCESSING_CHANNEL}`,
    '--setting',
    `webhook_secret=${CHECKOUT_WEBHOOK_SECRET}`,
    '--setting',
    `base_url=${fake.url}`,
  ];
  beforeAll(async () => {
    fake = await startFakeCheckout();
    merchant = json(paygate(['merchant', 'create', '--merchant-id', 'live-shop', '--secret', 'live-shop-secret-1']));
  });
  afterAll(async () => {
    await fake?.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  });

  it('a live merchant is created with no gateway', () => {
    expect(merchant).toMatchObject({ merchant_id: 'live-shop', gateway: null });
    const listed = paygate(['gateway', 'list', '--merchant-id', 'live-shop']);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toContain('paygate: merchant live-shop has no gateway yet (paygate gateway create adds one)');
  });

  it('creates a Checkout.com gateway: its id, connector, currencies and webhook_url printed, its secrets sealed and never printed', () => {
    const result = paygate([
      'gateway',
      'create',
      '--merchant-id',
      'live-shop',
      '--connector',
      'checkout',
      '--currencies',
      'USD,eur',
      ...settings(),
    ]);
    const gateway = json(result);
    expect(gateway).toMatchObject({
      gateway: expect.stringMatching(/^[0-9a-f]{32}$/),
      merchant_id: 'live-shop',
      connector: 'checkout',
      currencies: ['USD', 'EUR'],
      enabled: true,
      settings: { processing_channel_id: PROCESSING_CHANNEL, base_url: fake.url, three_ds: 'never' },
      secret_settings: ['secret_key', 'webhook_secret'],
    });
    expect(gateway.webhook_url).toBe(`https://pay.example.com/webhooks/checkout/${String(gateway.gateway)}`);
    for (const secret of [fake.secret_key, CHECKOUT_WEBHOOK_SECRET]) {
      expect(result.stdout).not.toContain(secret);
      expect(paygate(['gateway', 'show', '--gateway', String(gateway.gateway)]).stdout).not.toContain(secret);
      expect(paygate(['gateway', 'list']).stdout).not.toContain(secret);
      // At rest: nowhere in the database files in clear.
      for (const file of fs.readdirSync(data_dir).filter((f) => f.startsWith('paygate.sqlite'))) {
        expect(fs.readFileSync(path.join(data_dir, file)).includes(Buffer.from(secret)), file).toBe(false);
      }
    }
  });

  it('refuses bad input with a message naming the option, never a credential, and creates nothing', () => {
    const before = paygate(['gateway', 'list']).stdout;
    const cases: [string[], RegExp][] = [
      [['--connector', 'worldpay', '--currencies', 'USD'], /--connector must be one of sandbox, checkout, stripe/],
      [['--connector', 'sandbox'], /sandbox gateways take no payments in live mode/],
      [
        ['--connector', 'checkout', '--currencies', 'USD', '--setting', `secret_key=${fake.secret_key}`],
        /--setting processing_channel_id: required/,
      ],
      [
        ['--connector', 'checkout', '--currencies', 'USD', ...settings(), '--setting', 'three_ds=sometimes'],
        /--setting three_ds: expected never or always, got "sometimes"\n/,
      ],
      // What is wrong and the expected shape, from the connector's declaration of the setting.
      [
        [
          '--connector',
          'checkout',
          '--currencies',
          'USD',
          ...settings().slice(0, 2),
          ...settings().slice(4),
          '--setting',
          'processing_channel_id=xyz',
        ],
        /--setting processing_channel_id: expected pc_ followed by 26 lowercase letters or digits, got "xyz"\n/,
      ],
      [
        ['--connector', 'checkout', '--currencies', 'USD', ...settings().slice(0, 4), '--setting', 'base_url=ftp://x'],
        /--setting base_url: expected an http\(s\):\/\/ address of up to 200 characters without query or fragment, such as https:\/\/api\.checkout\.com, got "ftp:\/\/x"\n/,
      ],
      [
        ['--connector', 'checkout', '--currencies', 'USD', ...settings().slice(2)],
        /--setting secret_key: required: .*; expected sk_ followed by/,
      ],
      [
        ['--connector', 'checkout', '--currencies', 'USD', ...settings(), '--label', 'L'.repeat(65)],
        /--label: expected text of 1 to 64 characters, got 65\n/,
      ],
      [
        ['--connector', 'checkout', '--currencies', 'USD', ...settings(), '--setting', 'api_key=x'],
        /--setting api_key: not a setting of the checkout connector/,
      ],
      [
        ['--connector', 'checkout', '--currencies', 'USD', ...settings().slice(0, -2), '--setting', 'base_url=http://10.0.0.1'],
        /--setting base_url: must be an https:\/\/ address in live mode/,
      ],
      [['--connector', 'checkout', '--currencies', 'USD,XXX', ...settings()], /--currencies: XXX is not a known ISO 4217 code/],
      [['--connector', 'checkout', ...settings()], /--currencies: required/],
    ];
    for (const [args, message] of cases) {
      const env = args.includes('base_url=http://10.0.0.1') ? { ...ENV, PAYGATE_ALLOW_PRIVATE_URLS: 'false' } : ENV;
      const result = paygate(['gateway', 'create', '--merchant-id', 'live-shop', ...args], env);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain(fake.secret_key);
    }
    const invalid_key = paygate([
      'gateway',
      'create',
      '--merchant-id',
      'live-shop',
      '--connector',
      'checkout',
      '--currencies',
      'USD',
      ...settings().slice(2),
      '--setting',
      'secret_key=pk_not_a_secret_key',
    ]);
    expect(invalid_key.status).toBe(2);
    // A secret setting's value is never echoed, only its length.
    expect(invalid_key.stderr).toContain(
      'paygate: --setting secret_key: expected sk_ followed by 8 to 200 printable characters without spaces, got a value of 19 characters that does not fit (not shown: the setting is secret)\n',
    );
    expect(invalid_key.stderr).not.toContain('pk_not_a_secret_key');
    const no_merchant = paygate([
      'gateway',
      'create',
      '--merchant-id',
      'nobody',
      '--connector',
      'checkout',
      '--currencies',
      'USD',
      ...settings(),
    ]);
    expect(no_merchant.status).toBe(1);
    expect(no_merchant.stderr).toMatch(/no such merchant/);
    expect(paygate(['gateway', 'list']).stdout).toBe(before);
  }, 180_000);

  it('a running gateway takes payments through a gateway created while it runs, and none once it is disabled', async () => {
    let child: ChildGateway | null = null;
    try {
      child = await spawnGateway({ ...ENV, PUBLIC_URL: '', PAYGATE_LOG_LEVEL: 'warn' });
      const shop = json(paygate(['merchant', 'create', '--merchant-id', 'late-shop', '--secret', 'late-shop-secret-1']));
      const body = () =>
        saleA(shop as never, { currency: 'USD', notification_url: 'http://127.0.0.1:9/notify', return_url: 'http://127.0.0.1:9/return' });
      expect((await postSigned(child.url, '/api/process', body(), 'late-shop-secret-1')).body).toMatchObject({
        status: 15,
        description: 'Gateway unavailable: this merchant has no gateway yet',
      });
      const gateway = json(
        paygate([
          'gateway',
          'create',
          '--merchant-id',
          'late-shop',
          '--connector',
          'checkout',
          '--currencies',
          'USD',
          ...settings(),
          '--setting',
          `currency_account_id=${CURRENCY_ACCOUNT}`,
        ]),
      );
      expect((await postSigned(child.url, '/api/process', body(), 'late-shop-secret-1')).body).toMatchObject({
        status: 0,
        transaction_status: 'approved',
        payment_processor: 'checkout',
      });
      expect(json(paygate(['gateway', 'disable', '--gateway', String(gateway.gateway)]))).toMatchObject({ enabled: false });
      // The running instance keeps a found merchant for PAYGATE_MERCHANT_CACHE_MS (5 s): the change is seen within it.
      await new Promise((resolve) => setTimeout(resolve, 5_200));
      expect((await postSigned(child.url, '/api/process', body(), 'late-shop-secret-1')).body).toMatchObject({
        status: 15,
        description: `Gateway unavailable: gateway ${String(gateway.gateway)} is disabled`,
      });
      expect(json(paygate(['gateway', 'enable', '--gateway', String(gateway.gateway)]))).toMatchObject({ enabled: true });
      // New credentials: the next request is sent with them.
      expect(
        json(paygate(['gateway', 'settings', '--gateway', String(gateway.gateway), '--setting', 'secret_key=sk_sbox_rotated_key_0001'])),
      ).toMatchObject({ secret_settings: ['secret_key', 'webhook_secret'] });
      await new Promise((resolve) => setTimeout(resolve, 5_200));
      const refused = await postSigned(child.url, '/api/process', body(), 'late-shop-secret-1');
      expect(refused.body).toMatchObject({ status: 0, transaction_status: 'error', error_code: '401' });
      expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk_sbox_rotated_key_0001');
    } finally {
      await child?.kill('SIGTERM');
    }
  }, 180_000);
});
