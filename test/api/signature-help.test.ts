// Help for merchants' developers (issue 19 item 5, decisions.md §15; issue 28 item 2): the sandbox
// shows what it hashed (in the description, or in error_details when the description holds the
// words and the mistake) and names the usual mistakes; a millisecond timestamp is answered as such in both
// environments and in both signing schemes; `paygate sign` signs a body from the command line.
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleA, saleB } from '../support/bodies.js';
import { initCheckout } from '../support/cashier.js';
import { verifyBody } from '../../src/domain/signing.js';
import { postJson, signed } from '../support/client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { v13 } from '../support/v13.js';
import { CLI_ENTRY } from '../support/build.js';

const sha384 = (text: string) => createHash('sha384').update(text, 'utf8').digest('hex');

/** The string decisions.md §1 signs, written here from the rule, without the secret. */
function signingString(body: Record<string, unknown>): string {
  return Object.keys(body)
    .filter((k) => k !== 'signature')
    .sort()
    .map((k) => (body[k] === null || body[k] === undefined || body[k] === false ? '' : body[k] === true ? '1' : String(body[k])))
    .join('');
}

describe('signature help in the sandbox', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('shows the string hashed, secret left out and card fields masked, when it fits 256 characters', async () => {
    const body = {
      merchant_id: gw.merchant.merchant_id,
      application_key: gw.merchant.application_key,
      pin: 'cust-42',
      card_number: '4111111111111111',
      card_exp: '12/2035',
      timestamp: Math.floor(Date.now() / 1000),
      version: '1.2',
    };
    const answer = await postJson(gw.url, '/api/tokenize', { ...body, signature: 'ab'.repeat(48) });
    const description = answer.body.description as string;
    expect(answer.body.status).toBe(2);
    const shown = signingString({ ...body, card_number: '411111******1111', card_exp: '*******' });
    expect(description).toBe(`Invalid signature. Signed here: sha384hex of "${shown}" + secret`);
    expect(description.length).toBeLessThanOrEqual(256);
    expect(description).not.toContain(gw.merchant.secret);
    expect(description).not.toContain('4111111111111111');
    expect(description).not.toContain('12/2035');
    // A whole sale does not fit beside the words: the plain words, never a cut string (the string: below).
    const sale = await postJson(gw.url, '/api/process', { ...saleA(gw.merchant), signature: 'ab'.repeat(48) });
    expect(sale.body).toMatchObject({ status: 2, description: 'Invalid signature' });
    expect(answer.body).not.toHaveProperty('error_details');
  });

  it('names the likely mistake: upper-case hex, keys not sorted, HMAC, a millisecond timestamp', async () => {
    const body = saleA(gw.merchant);
    const secret = gw.merchant.secret;
    const sorted = signingString(body);
    const unsorted = Object.keys(body)
      .map((k) => String(body[k]))
      .join('');
    const timestamp_ms = (body.timestamp as number) * 1000;
    for (const [signature, mistake, extra] of [
      [sha384(sorted + secret).toUpperCase(), 'upper-case hex; use lower-case', {}],
      [sha384(unsorted + secret), 'values not in sorted key order', {}],
      [createHmac('sha384', secret).update(sorted).digest('hex'), 'HMAC; use plain SHA-384 + secret', {}],
      ['0'.repeat(96), 'timestamp in milliseconds', { timestamp: timestamp_ms }],
    ] as const) {
      const answer = await postJson(gw.url, '/api/process', { ...body, ...extra, signature });
      expect(answer.body.status, mistake).toBe(2);
      expect(answer.body.description as string, mistake).toMatch(
        new RegExp(`^Invalid signature \\(likely mistake: ${mistake.replace(/[()+]/g, '\\$&')}\\)`),
      );
      expect(answer.body.description as string).not.toContain(secret);
    }
  });

  /** Card values as the help shows them: the number's first 6 and last 4, the rest starred. */
  const masked = (body: Record<string, unknown>) => {
    const number = body.card_number as string;
    return {
      ...body,
      card_number: `${number.slice(0, 6)}${'*'.repeat(number.length - 10)}${number.slice(-4)}`,
      card_exp: '*******',
      cvv: '***',
    };
  };
  const SHORT_URLS = { return_url: 'https://shop.example/r', notification_url: 'https://shop.example/n' };

  it('gives the string hashed in error_details when the description holds the words and the mistake, on a 1.2 and a 1.1 sale', async () => {
    const secret = gw.merchant.secret;
    for (const body of [saleA(gw.merchant, SHORT_URLS), saleB(gw.merchant, SHORT_URLS)]) {
      const shown = signingString(masked(body));
      expect(shown.length, 'the string fits error_details').toBeLessThanOrEqual(256);
      const upper = await postJson(gw.url, '/api/process', { ...body, signature: sha384(signingString(body) + secret).toUpperCase() });
      expect(upper.body).toMatchObject({
        status: 2,
        version: body.version,
        description: 'Invalid signature (likely mistake: upper-case hex; use lower-case)',
        error_details: shown,
      });
      const plain = await postJson(gw.url, '/api/process', { ...body, signature: 'ab'.repeat(48) });
      expect(plain.body).toMatchObject({ status: 2, description: 'Invalid signature', error_details: shown });
      for (const answer of [upper, plain]) {
        const text = JSON.stringify(answer.body);
        for (const hidden of [secret, body.card_number as string, body.card_exp as string]) expect(text).not.toContain(hidden);
        expect(verifyBody(answer.body, secret)).toBe(true);
      }
    }
  });

  it('judges the signature before the fields: a body with several problems gets the help, then, signed, every problem', async () => {
    const secret = gw.merchant.secret;
    for (const body of [
      saleA(gw.merchant, { ...SHORT_URLS, amount: 'abc', dob: undefined, email: 'nope', phone: undefined }),
      saleB(gw.merchant, { ...SHORT_URLS, amount: 'abc', dob: undefined, email: 'nope', phone: undefined }),
    ]) {
      const sent = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
      const wrong = await postJson(gw.url, '/api/process', { ...sent, signature: sha384(signingString(sent) + secret).toUpperCase() });
      expect(wrong.body).toMatchObject({
        status: 2,
        description: 'Invalid signature (likely mistake: upper-case hex; use lower-case)',
        error_details: signingString(masked(sent)),
      });
      const right = await postJson(gw.url, '/api/process', signed(sent, secret));
      expect(right.body).toMatchObject({
        status: 10,
        version: body.version,
        description:
          'Invalid field: amount (expected a whole number of minor units, 1 to 9007199254740991); Missing required field: dob; ' +
          'Invalid field: email (expected an e-mail address of up to 50 characters); Missing required field: phone',
      });
      expect(right.body).not.toHaveProperty('error_details');
    }
  });

  it('stays within 75 characters on init-* (the string does not fit, the mistake does)', async () => {
    const body = initCheckout(gw.merchant, 'https://shop.example');
    const answer = await postJson(gw.url, '/api/init-checkout', {
      ...body,
      signature: sha384(signingString(body) + gw.merchant.secret).toUpperCase(),
    });
    expect(answer.body).toMatchObject({ status: 2, description: 'Invalid signature (likely mistake: upper-case hex; use lower-case)' });
    // init-* answers keep to the envelope (spec §2.3): no error_details there.
    expect(Object.keys(answer.body).sort()).toEqual(['description', 'signature', 'status', 'timestamp', 'version']);
  });

  it('answers a millisecond timestamp as such, signed or v1.3, instead of "Timestamp expired"', async () => {
    const body = saleA(gw.merchant);
    const answer = await postJson(
      gw.url,
      '/api/process',
      signed({ ...body, timestamp: (body.timestamp as number) * 1000 }, gw.merchant.secret),
    );
    expect(answer.body).toMatchObject({ status: 1, description: 'Timestamp looks like milliseconds: send unix time in seconds' });
    const ms = Date.now();
    for (const method of ['GET', 'POST'] as const) {
      const v = await v13(
        gw.url,
        method,
        '/api/v1.3/subscription-plan',
        gw.merchant,
        method === 'POST' ? { name: 'x', prices: [{ amount: 1, currency: 'USD' }], billing_cycle: 'monthly' } : {},
        { timestamp: ms },
      );
      expect(v.body, method).toMatchObject({ status: 1, description: 'Timestamp looks like milliseconds: send unix time in seconds' });
    }
  });
});

describe('live mode', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { env: { PAYGATE_ENV: 'live' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('says only "Invalid signature", and answers a millisecond timestamp as such too', async () => {
    const body = saleA(gw.merchant);
    const bad = await postJson(gw.url, '/api/process', {
      ...body,
      signature: sha384(signingString(body) + gw.merchant.secret).toUpperCase(),
    });
    expect(bad.body).toMatchObject({ status: 2, description: 'Invalid signature' });
    expect(bad.body).not.toHaveProperty('error_details');
    const ms = await postJson(
      gw.url,
      '/api/process',
      signed({ ...body, timestamp: (body.timestamp as number) * 1000 }, gw.merchant.secret),
    );
    expect(ms.body).toMatchObject({ status: 1, description: 'Timestamp looks like milliseconds: send unix time in seconds' });
  });
});

describe('paygate sign', () => {
  const sign = (args: string[], input: string) =>
    spawnSync(process.execPath, [CLI_ENTRY, 'sign', ...args], {
      input,
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('signs the test vector of decisions.md §1 and shows the string it hashed', () => {
    const vector =
      '{"merchant_id":"demo-merchant","application_key":"demo-app","transaction_type":"sale","order_id":"order-1001","amount":1999,"currency":"USD","pin":"cust-42","card_number":"4111111111111111","card_exp":"12/2030","cvv":"568","timestamp":1763740800,"version":"1.2","variable1":null}';
    const result = sign(['--secret', 'demo-secret'], vector);
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ...JSON.parse(vector),
      signature: '22ea89076da77fc6651e451b6c7389c2e1a0acf7584824bc0c32f79ce624b080f180c6e74cd3007013a3e8e6d4259650',
    });
    expect(result.stderr).toBe(
      'signed: sha384hex of "1999demo-app12/20304111111111111111USD568demo-merchantorder-1001cust-421763740800sale1.2" + secret\n',
    );
  });

  it('sets the timestamp with --now, and refuses what the API would refuse', () => {
    const now = sign(['--secret', 's3cret-value', '--now'], '{"merchant_id":"m","timestamp":1}');
    const body = JSON.parse(now.stdout) as Record<string, unknown>;
    expect(Math.abs((body.timestamp as number) - Date.now() / 1000)).toBeLessThan(30);
    expect(body.signature).toBe(sha384(`m${String(body.timestamp)}s3cret-value`));
    expect(sign(['--secret', 'x'], '[1]')).toMatchObject({ status: 65, stderr: 'paygate sign: the body must be a JSON object\n' });
    expect(sign(['--secret', 'x'], '{"a":{"b":1}}')).toMatchObject({
      status: 65,
      stderr: 'paygate sign: field a is nested; the API takes flat values only\n',
    });
    expect(sign([], '{}')).toMatchObject({ status: 64 });
  });
});
