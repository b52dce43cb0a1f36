// The endpoint checker (issue 28, item 4) against real endpoints over real HTTP, on both stores:
// the example shop (the merchant SDK's webhook handler) and a correct hand-written receiver are
// graded all green; each deliberately broken receiver (test/support/broken-receivers.ts) is graded
// red on the lines of its bug and green elsewhere. Then `paygate check-endpoint` as a process,
// its report and exit codes, and the refusals: an unknown merchant, a URL the gateway never calls.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFICATION_PATH, type RunningShop, startShop } from '../../packages/example-shop/src/shop.js';
import { checkEndpoint, type CheckId, type EndpointReport } from '../../src/operations/endpoint-check.js';
import { type ReceiverKind, startReceiver } from '../support/broken-receivers.js';
import { startTestGateway, TEST_MASTER_KEY, type TestGateway } from '../support/gateway.js';
import { storeKinds } from '../support/stores.js';
import { CLI_ENTRY } from '../support/build.js';

const execFileAsync = promisify(execFile);
const CLI = [CLI_ENTRY];
const ALL: readonly CheckId[] = [
  'acknowledges',
  'duplicate',
  'newer_status',
  'older_after_newer',
  'extra_fields',
  'bad_signature',
  'unsigned',
  'unknown_trace',
  'slow_resend',
];
/** The gateway's notification time-out in these tests: what `too_slow` overruns. */
const TIMEOUT_MS = 1_000;

/** Each broken receiver and the checks it must fail; every other check passes. */
const BROKEN: readonly [ReceiverKind, readonly CheckId[]][] = [
  ['accepts_anything', ['bad_signature', 'unsigned']],
  ['fixed_field_list', ['extra_fields']],
  ['fails_on_duplicates', ['duplicate', 'older_after_newer', 'extra_fields', 'slow_resend']],
  ['unsigned_replies', ALL.filter((id) => id !== 'bad_signature' && id !== 'unsigned')],
  ['unknown_trace_is_an_error', ['unknown_trace']],
  ['too_slow', ALL.filter((id) => id !== 'bad_signature' && id !== 'unsigned')],
];

describe.each(storeKinds())('the endpoint checker on %s', (kind) => {
  let gw: TestGateway;
  let shop: RunningShop;
  beforeAll(async () => {
    gw = await startTestGateway(kind, { env: { PAYGATE_OUTBOUND_TIMEOUT_MS: String(TIMEOUT_MS) } });
    shop = await startShop({
      paygate: { base_url: gw.url, merchant_id: gw.merchant.merchant_id, secret: gw.merchant.secret, frontend: gw.merchant.frontend },
      port: 0,
      log: () => undefined,
    });
  });
  afterAll(async () => {
    await shop?.close();
    await gw?.close();
  });

  async function report(url: string): Promise<EndpointReport> {
    const outcome = await checkEndpoint(gw.gateway.deps, gw.merchant.merchant_id, url, { slow_resend_ms: 200 });
    if (outcome.kind !== 'report') throw new Error(`no report: ${JSON.stringify(outcome)}`);
    expect(outcome.report.lines.map((line) => line.id)).toEqual(ALL);
    return outcome.report;
  }
  const verdicts = (r: EndpointReport) => Object.fromEntries(r.lines.map((line) => [line.id, line.verdict]));

  it('grades the example shop (the SDK webhook handler) all green', async () => {
    const graded = await report(`${shop.url}${NOTIFICATION_PATH}`);
    expect(verdicts(graded)).toEqual(Object.fromEntries(ALL.map((id) => [id, 'pass'])));
    expect(graded).toMatchObject({ passed: ALL.length, warnings: 0, failed: 0 });
    expect(graded.lines.every((line) => line.fix === null)).toBe(true);
  });

  it('grades a correct hand-written receiver all green', async () => {
    const receiver = await startReceiver('correct', gw.merchant.secret);
    try {
      expect((await report(receiver.url)).failed).toBe(0);
      expect((await report(receiver.url)).warnings).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it.each(BROKEN)('grades a receiver that %s red on the right lines, with a fix on each', async (broken, failing) => {
    const receiver = await startReceiver(broken, gw.merchant.secret, { slow_ms: TIMEOUT_MS + 500 });
    try {
      const graded = await report(receiver.url);
      const failed = graded.lines.filter((line) => line.verdict === 'fail').map((line) => line.id);
      expect(failed).toEqual(failing);
      expect(graded.lines.filter((line) => line.verdict === 'warn')).toEqual([]);
      for (const line of graded.lines) expect(line.fix === null).toBe(line.verdict === 'pass');
    } finally {
      await receiver.close();
    }
  });

  it('says what is wrong in the words of the bug: a forged notification accepted, a reply not signed, a time-out', async () => {
    const anything = await startReceiver('accepts_anything', gw.merchant.secret);
    const unsigned = await startReceiver('unsigned_replies', gw.merchant.secret);
    const slow = await startReceiver('too_slow', gw.merchant.secret, { slow_ms: TIMEOUT_MS + 500 });
    try {
      const forged = (await report(anything.url)).lines.find((line) => line.id === 'bad_signature')!;
      expect(forged.observed).toMatch(/status 0/);
      expect(forged.fix).toMatch(/accepted a notification anyone could have sent/);
      const first = (await report(unsigned.url)).lines[0]!;
      expect(first.observed).toMatch(/reply not signed/);
      expect(first.fix).toMatch(/Sign the reply/);
      const timed_out = (await report(slow.url)).lines[0]!;
      expect(timed_out.observed).toMatch(/no answer/);
      expect(timed_out.fix).toMatch(/Answer within 1 s/);
    } finally {
      await Promise.all([anything.close(), unsigned.close(), slow.close()]);
    }
  });

  it('refuses an unknown merchant, and a URL the gateway never calls, sending nothing', async () => {
    expect(await checkEndpoint(gw.gateway.deps, 'no-such-merchant', `${shop.url}${NOTIFICATION_PATH}`)).toEqual({ kind: 'not_found' });
    expect(await checkEndpoint(gw.gateway.deps, gw.merchant.merchant_id, 'ftp://shop.example/notify')).toMatchObject({
      kind: 'url_not_allowed',
    });
  });

  it('`paygate check-endpoint` prints the graded report and exits 0 when nothing failed, 1 when a check failed', async () => {
    const env = {
      ...process.env,
      PAYGATE_DATA_DIR: gw.data_dir,
      PAYGATE_LOG_LEVEL: 'warn',
      ...(gw.database_url ? { DATABASE_URL: gw.database_url, PAYGATE_MASTER_KEY: TEST_MASTER_KEY } : {}),
    };
    const args = (url: string, ...more: string[]) => [
      ...CLI,
      'check-endpoint',
      '--merchant-id',
      gw.merchant.merchant_id,
      '--slow-ms',
      '100',
      ...more,
      url,
    ];
    const green = await execFileAsync(process.execPath, args(`${shop.url}${NOTIFICATION_PATH}`), { env, timeout: 60_000 });
    expect(green.stdout).toContain(`Checked ${shop.url}${NOTIFICATION_PATH} for merchant ${gw.merchant.merchant_id}`);
    expect(green.stdout).toContain('PASS  6. approved with a wrong signature');
    expect(green.stdout).toContain('9 passed, 0 warnings, 0 failed.');
    const receiver = await startReceiver('accepts_anything', gw.merchant.secret);
    try {
      const red = await execFileAsync(process.execPath, args(receiver.url, '--json'), { env, timeout: 60_000 }).then(
        () => null,
        (error: { code: number; stdout: string }) => error,
      );
      expect(red?.code).toBe(1);
      const parsed = JSON.parse(red!.stdout) as EndpointReport;
      expect(parsed.lines.filter((line) => line.verdict === 'fail').map((line) => line.id)).toEqual(['bad_signature', 'unsigned']);
    } finally {
      await receiver.close();
    }
    const unknown = await execFileAsync(process.execPath, [...CLI, 'check-endpoint', '--merchant-id', 'nobody', receiver.url], {
      env,
      timeout: 60_000,
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(unknown?.code).toBe(3);
    expect(unknown?.stderr).toContain('no merchant nobody');
  }, 120_000);
});
