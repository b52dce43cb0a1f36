// `paygate trigger`: the sandbox's flow triggers from the command line (docs/triggers.md). It is a
// client of the running gateway's POST /sandbox/triggers/{name}, not a second gateway on the same
// store: the flows' later steps (an asynchronous result, a 3-D Secure time-out, a renewal) and the
// delivery of every notification are the running gateway's workers' work, and an embedded
// database serves one gateway process. It finds the gateway at --url, PUBLIC_URL or HOST:PORT (the
// same configuration as `npm start`), and its admin token in PAYGATE_ADMIN_TOKEN or, in the
// sandbox, the one the gateway made for itself (sealed in its store, opened with the master key of
// this machine). `--list` needs no gateway.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { endLabel, findTrigger, SANDBOX_TRIGGERS } from '../domain/sandbox-triggers.js';
import { readSandboxAdminToken } from '../operations/sandbox-admin-token.js';
import { TRIGGER_WAIT_MAX_MS, type TriggerReport } from '../operations/sandbox-trigger-run.js';
import { openConfiguredStore, sealerFor } from '../store-and-keys.js';
import { announceStore } from './store-session.js';

const USAGE_LINE = 'usage: paygate trigger NAME --merchant-id ID [--notification-url URL] [--url GATEWAY_URL] [--json] | --list';

export async function triggerCommand(config: Config, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        list: { type: 'boolean' },
        'merchant-id': { type: 'string' },
        'notification-url': { type: 'string' },
        url: { type: 'string' },
        json: { type: 'boolean' },
      },
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`paygate trigger: ${error instanceof Error ? error.message : String(error)}\n${USAGE_LINE}\n`);
    return 64;
  }
  const { values, positionals } = parsed;
  if (values.list) {
    const width = Math.max(...SANDBOX_TRIGGERS.map((t) => t.name.length)) + 2;
    for (const trigger of SANDBOX_TRIGGERS) process.stdout.write(`${trigger.name.padEnd(width)}${trigger.summary}\n`);
    return 0;
  }
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0 || values['merchant-id'] === undefined) {
    process.stderr.write(`paygate trigger: a trigger name and --merchant-id are required\n${USAGE_LINE}\n`);
    return 64;
  }
  if (!findTrigger(name)) {
    process.stderr.write(`paygate trigger: unknown trigger ${name}; paygate trigger --list names them\n`);
    return 64;
  }
  if (config.environment !== 'sandbox') {
    process.stderr.write("paygate trigger: triggers are the sandbox's; PAYGATE_ENV=live has none\n");
    return 64;
  }
  const token = config.admin_token ?? (await storedToken(config));
  if (token === null) {
    process.stderr.write(
      'paygate trigger: no admin token: start the gateway once in this data folder (it makes one), or set PAYGATE_ADMIN_TOKEN\n',
    );
    return 78;
  }
  const base = (values.url ?? gatewayUrl(config)).replace(/\/+$/, '');
  let answer: Response;
  try {
    answer = await fetch(`${base}/sandbox/triggers/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        merchant_id: values['merchant-id'],
        ...(values['notification-url'] === undefined ? {} : { notification_url: values['notification-url'] }),
      }),
      // The gateway answers once the flow's notification was sent, within its own bound.
      signal: AbortSignal.timeout(TRIGGER_WAIT_MAX_MS + config.limits.outbound_timeout_ms + 30_000),
    });
  } catch (error) {
    process.stderr.write(
      `paygate trigger: no gateway answered at ${base} (${error instanceof Error ? error.message : String(error)}); start it with npm start, or give --url\n`,
    );
    return 69;
  }
  const text = await answer.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    process.stderr.write(`paygate trigger: HTTP ${answer.status} from ${base}, not JSON: ${text.slice(0, 200)}\n`);
    return 1;
  }
  if (values.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  if (!answer.ok || body.status !== 0) {
    process.stderr.write(`paygate trigger: HTTP ${answer.status}, status ${String(body.status)}: ${String(body.description)}\n`);
    return 1;
  }
  if (!values.json) process.stdout.write(printed(body as unknown as TriggerReport & { description: string }));
  return 0;
}

/** What a person reads: the outcome, the trace_id, then each notification of the flow with its body as sent. */
function printed(report: TriggerReport & { description: string }): string {
  const lines = [report.description];
  if (report.trace_id !== null) lines.push(`trace_id: ${report.trace_id}`);
  if (report.subscription_id !== null) lines.push(`subscription_id: ${report.subscription_id}`);
  for (const sent of report.notifications) {
    const named = report.notification?.id === sent.id ? " <- the trigger's" : '';
    const outcome = `${sent.state}${sent.attempts > 0 ? ` after ${sent.attempts} attempt(s)` : ''}${sent.last_error ? ` (${sent.last_error})` : ''}`;
    lines.push('', `notification ${sent.id}: ${sent.reports}${named}, POST ${sent.url}: ${outcome}`);
    for (const [header, value] of Object.entries(sent.headers)) lines.push(`${header}: ${value}`);
    lines.push(JSON.stringify(sent.body, null, 2));
  }
  if (!report.reached)
    lines.push('', `Not ${endLabel(findTrigger(report.trigger)!.ends_in)} yet: the gateway notifies it when it happens.`);
  return `${lines.join('\n')}\n`;
}

/** Where `npm start` with this configuration listens: PUBLIC_URL, else HOST:PORT (a wildcard host reached on loopback). */
function gatewayUrl(config: Config): string {
  if (config.public_url !== null) return config.public_url;
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '::1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** The sandbox's own token from its store; null when there is none (or no store here yet: nothing is created). */
async function storedToken(config: Config): Promise<string | null> {
  if (config.database_url === null && !fs.existsSync(path.join(config.data_dir, 'paygate.sqlite'))) return null;
  if (config.master_key === null && !fs.existsSync(config.master_key_file)) return null;
  announceStore(config);
  const store = openConfiguredStore(config);
  try {
    return await readSandboxAdminToken({ store, sealer: await sealerFor(config, store) });
  } catch {
    // A database a gateway of this release never started on has no such table yet.
    return null;
  } finally {
    await store.close();
  }
}
