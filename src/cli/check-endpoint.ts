// `paygate check-endpoint --merchant-id M URL`: the endpoint checker (operations/endpoint-check.ts)
// from the command line, against the store the configuration names. Prints a graded report: each
// check, what a correct endpoint does, what this one did, and the fix; `--json` prints the report
// as one JSON object for a script. Exit 0 when nothing failed, 1 when a check failed, 2 for a
// usage error, 3 for an unknown merchant or a URL the gateway would not call.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { wallClock } from '../domain/clock.js';
import { createLogger } from '../logging.js';
import { sealerFor } from '../store-and-keys.js';
import { openCliStore } from './store-session.js';
import { checkEndpoint, type EndpointReport, SLOW_RESEND_MAX_MS } from '../operations/endpoint-check.js';
import { MerchantDirectory } from '../operations/merchant-directory.js';

const MARK = { pass: 'PASS', warn: 'WARN', fail: 'FAIL' } as const;

export function renderReport(report: EndpointReport): string {
  const lines = [`Checked ${report.url} for merchant ${report.merchant_id}: ${report.lines.length} notifications sent.`, ''];
  for (const line of report.lines) {
    lines.push(`${MARK[line.verdict]}  ${line.step}. ${line.title}`);
    lines.push(`      a correct endpoint: ${line.expected}`);
    lines.push(`      this one:           ${line.observed}`);
    if (line.fix !== null) lines.push(`      fix:                ${line.fix}`);
  }
  lines.push('', `${report.passed} passed, ${report.warnings} warnings, ${report.failed} failed.`);
  return `${lines.join('\n')}\n`;
}

export async function checkEndpointCommand(config: Config, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { 'merchant-id': { type: 'string' }, 'slow-ms': { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`paygate check-endpoint: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const merchant_id = values['merchant-id'];
  const url = positionals[0];
  if (!merchant_id || url === undefined || positionals.length !== 1) {
    process.stderr.write('paygate check-endpoint: usage: paygate check-endpoint --merchant-id ID [--slow-ms MS] [--json] URL\n');
    return 2;
  }
  const slow_ms = values['slow-ms'] === undefined ? undefined : Number(values['slow-ms']);
  if (slow_ms !== undefined && (!Number.isInteger(slow_ms) || slow_ms < 0 || slow_ms > SLOW_RESEND_MAX_MS)) {
    process.stderr.write(`paygate check-endpoint: --slow-ms must be a whole number of milliseconds from 0 to ${SLOW_RESEND_MAX_MS}\n`);
    return 2;
  }
  const { store } = await openCliStore(config);
  try {
    const merchants = new MerchantDirectory(store, await sealerFor(config, store));
    // The report is the output; the operation's own log line goes nowhere a script reads.
    const logger = createLogger({ level: 'warn', destination: config.log_file });
    const outcome = await checkEndpoint({ merchants, config, clock: wallClock, logger }, merchant_id, url, {
      ...(slow_ms !== undefined ? { slow_resend_ms: slow_ms } : {}),
    });
    switch (outcome.kind) {
      case 'not_found':
        process.stderr.write(`paygate check-endpoint: no merchant ${merchant_id}\n`);
        return 3;
      case 'url_not_allowed':
        process.stderr.write(`paygate check-endpoint: the gateway does not call ${url}: ${outcome.reason}\n`);
        return 3;
      case 'report':
        process.stdout.write(values.json ? `${JSON.stringify(outcome.report)}\n` : renderReport(outcome.report));
        return outcome.report.failed > 0 ? 1 : 0;
    }
  } finally {
    await store.close();
  }
}
