#!/usr/bin/env node
// `paygate` commands: start (the default), merchant create, and gateway create / list / show /
// disable / enable / settings (decisions.md §13; the operator API does the same, docs/connectors.md).
// With PAYGATE_WORKERS > 1, start runs a node:cluster primary (cluster.ts) and this same file in
// each worker process, where start runs one gateway.
import cluster from 'node:cluster';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { startClusterPrimary } from './cluster.js';
import { createLogger } from './logging.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { Sealer } from './crypto/sealer.js';
import { CONNECTOR_DEFINITIONS, starterGateway } from './connectors/registry.js';
import {
  type ConnectorCatalog,
  createGateway,
  type GatewayAdminDeps,
  type GatewayOutcome,
  listGatewayViews,
  replaceGatewaySettings,
  setGatewayEnabled,
  showGateway,
} from './operations/gateways.js';
import { MerchantDirectory } from './operations/merchant-directory.js';
import { addRoutingRule, listRoutingRules, parseBinCsv } from './operations/routing-rules.js';
import { checkFrameOrigins } from './domain/frame-origins.js';
import { bodySigningString, signBody } from './domain/signing.js';
import { characterLength, hasContent, textProblem } from './domain/text.js';
import { masterKeyFor, openConfiguredStore, startGateway } from './main.js';
import { createUser } from './operations/backoffice-users.js';
import { wallClock } from './domain/clock.js';

const USAGE = `Usage:
  paygate start                         run the gateway (configuration from the environment;
                                        npm start runs it)
  paygate help                          this text
  paygate merchant create [--merchant-id ID] [--secret SECRET] [--application-key KEY]
                          [--frontend NAME] [--currency CODE] [--frame-origin ORIGIN]...
                          [--display-name NAME]
                                        create a merchant; prints JSON. In sandbox mode it gets
                                        one sandbox gateway; in live mode none (add one below).
                                        --frame-origin (repeatable): an origin such as
                                        https://shop.example allowed to show the application's
                                        init-pay-in cashier in an iframe (docs/cashier.md);
                                        --display-name: the shop name the cashier shows
  paygate user create --email EMAIL --password PASSWORD --role operator|merchant
                      [--merchant-id ID]
                                        a back-office user (docs/backoffice.md); a merchant user
                                        belongs to --merchant-id. Password: 12+ characters.
                                        Prints JSON with user_id, email, role, merchant_id.
  paygate gateway create --merchant-id ID --connector NAME [--currencies USD,EUR,...]
                         [--setting KEY=VALUE]... [--no-mit] [--hold-payouts]
                                        add a gateway to a merchant; prints JSON with its id and
                                        webhook_url. Settings per connector: docs/connectors.md.
                                        Secret settings are sealed and never printed again.
  paygate gateway list [--merchant-id ID]
  paygate gateway show --gateway ID     a gateway, without its secrets
  paygate gateway disable --gateway ID  no new payments go to it (enable undoes it)
  paygate gateway enable --gateway ID
  paygate gateway settings --gateway ID --setting KEY=VALUE...
                                        replace some settings (new credentials)
  paygate route add --merchant-id ID --gateway ID --priority N [--currency USD,EUR]
                    [--min-amount MINOR] [--max-amount MINOR] [--card-brand VISA,...]
                    [--bin-country GB,...]
                                        a routing rule: matching payments go to the gateway,
                                        rules tried by priority (lower first); prints JSON
  paygate route list --merchant-id ID
  paygate route delete --merchant-id ID --rule RULE_ID
  paygate bins load --file PATH         replace the BIN table (CSV lines "prefix,country")
                                        that bin-country conditions read
  paygate sign --secret SECRET [--file BODY.json] [--now]
                                        sign a request body (stdin without --file) as the API
                                        expects (decisions.md §1): prints it with its signature;
                                        --now sets timestamp to the current unix time in seconds.
                                        Prints the string hashed (without the secret) on stderr.
`;

/** The connectors of this release, where they run (the CLI builds none of them). */
function catalogFor(config: Config): ConnectorCatalog {
  const by_name = new Map(CONNECTOR_DEFINITIONS.map((d) => [d.name, d]));
  return {
    definition: (name) => by_name.get(name) ?? null,
    definitions: () => CONNECTOR_DEFINITIONS,
    runsHere: (name) => by_name.get(name)?.environments.includes(config.environment) ?? false,
  };
}

/** KEY=VALUE pairs; a pair without "=" names itself only, never its value (it may be a credential). */
function parseSettings(pairs: readonly string[]): { ok: true; settings: Record<string, string> } | { ok: false; message: string } {
  const settings: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) return { ok: false, message: '--setting takes KEY=VALUE' };
    const key = pair.slice(0, at);
    if (Object.prototype.hasOwnProperty.call(settings, key)) return { ok: false, message: `--setting ${key} given twice` };
    settings[key] = pair.slice(at + 1);
  }
  return { ok: true, settings };
}

function printOutcome(outcome: GatewayOutcome, environment: string): number {
  switch (outcome.kind) {
    case 'ok':
      process.stdout.write(`${JSON.stringify(outcome.gateway)}\n`);
      return 0;
    case 'merchant_not_found':
      process.stderr.write('paygate: no such merchant; create it first with paygate merchant create\n');
      return 1;
    case 'gateway_not_found':
      process.stderr.write('paygate: no such gateway\n');
      return 1;
    case 'unknown_connector':
      process.stderr.write(`paygate: --connector must be one of ${outcome.known.join(', ')}\n`);
      return 2;
    case 'not_here':
      process.stderr.write(
        `paygate: ${outcome.connector} gateways take no payments in ${environment} mode (PAYGATE_ENV); nothing was created\n`,
      );
      return 2;
    case 'invalid':
      process.stderr.write(
        `paygate: ${outcome.field === 'currencies' ? '--currencies' : `--setting ${outcome.field}`}: ${outcome.reason}\n`,
      );
      return 2;
  }
}

async function gatewayCommand(config: Config, sub: string | undefined, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'merchant-id': { type: 'string' },
      connector: { type: 'string' },
      currencies: { type: 'string' },
      setting: { type: 'string', multiple: true },
      gateway: { type: 'string' },
      'no-mit': { type: 'boolean' },
      'hold-payouts': { type: 'boolean' },
    },
    strict: true,
  });
  const settings = parseSettings(values.setting ?? []);
  if (!settings.ok) {
    process.stderr.write(`paygate: ${settings.message}\n`);
    return 2;
  }
  const store = openConfiguredStore(config);
  try {
    await store.migrate();
    const deps: GatewayAdminDeps = {
      store,
      sealer: new Sealer(masterKeyFor(config)),
      connectors: catalogFor(config),
      environment: config.environment,
      allow_private_urls: config.limits.allow_private_urls,
      public_url: () => config.public_url ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
    };
    const gateway_id = values.gateway;
    const needGateway = (): boolean => {
      if (gateway_id !== undefined) return true;
      process.stderr.write(`paygate: gateway ${sub} needs --gateway ID\n`);
      return false;
    };
    switch (sub) {
      case 'create': {
        if (values['merchant-id'] === undefined || values.connector === undefined) {
          process.stderr.write('paygate: gateway create needs --merchant-id and --connector\n');
          return 2;
        }
        return printOutcome(
          await createGateway(
            deps,
            {
              merchant_id: values['merchant-id'],
              connector: values.connector,
              currencies: values.currencies === undefined ? null : values.currencies.split(','),
              settings: settings.settings,
              mit_enabled: values['no-mit'] !== true,
              hold_payouts: values['hold-payouts'] === true,
            },
            Date.now(),
          ),
          config.environment,
        );
      }
      case 'list':
        for (const view of await listGatewayViews(deps, values['merchant-id'] ?? null)) process.stdout.write(`${JSON.stringify(view)}\n`);
        return 0;
      case 'show':
        return needGateway() ? printOutcome(await showGateway(deps, gateway_id!), config.environment) : 2;
      case 'disable':
      case 'enable':
        return needGateway()
          ? printOutcome(await setGatewayEnabled(deps, gateway_id!, sub === 'enable', Date.now()), config.environment)
          : 2;
      case 'settings':
        return needGateway()
          ? printOutcome(await replaceGatewaySettings(deps, gateway_id!, settings.settings, Date.now()), config.environment)
          : 2;
      default:
        process.stderr.write(USAGE);
        return 64;
    }
  } finally {
    await store.close();
  }
}

async function createMerchant(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'merchant-id': { type: 'string' },
      secret: { type: 'string' },
      'application-key': { type: 'string' },
      frontend: { type: 'string' },
      currency: { type: 'string' },
      'frame-origin': { type: 'string', multiple: true },
      'display-name': { type: 'string' },
    },
    strict: true,
  });
  const display_name = values['display-name'];
  if (
    display_name !== undefined &&
    (characterLength(display_name) < 1 ||
      characterLength(display_name) > 64 ||
      textProblem(display_name) !== null ||
      !hasContent(display_name))
  ) {
    process.stderr.write('paygate: --display-name must be text of 1 to 64 characters\n');
    return 2;
  }
  // Checked before anything is created, so a bad origin changes nothing.
  const frame_origins = checkFrameOrigins(values['frame-origin'] ?? []);
  if (!frame_origins.ok) {
    process.stderr.write(`paygate: --frame-origin must be an http(s) origin such as https://shop.example (got ${frame_origins.invalid})\n`);
    return 2;
  }
  const store = openConfiguredStore(config);
  try {
    await store.migrate();
    const merchants = new MerchantDirectory(store, new Sealer(masterKeyFor(config)));
    const outcome = await merchants.create(
      {
        merchant_id: values['merchant-id'],
        secret: values.secret,
        application_key: values['application-key'],
        frontend: values.frontend,
        currency: values.currency?.toUpperCase(),
      },
      Date.now(),
      starterGateway(config.environment),
    );
    switch (outcome.kind) {
      case 'created':
        if (display_name !== undefined) {
          // The shop's name for the cashier, on both of the new merchant's identities.
          await store.merchants.setDisplayName(
            outcome.merchant.merchant_id,
            { kind: 'frontend', value: outcome.merchant.frontend },
            display_name,
          );
          await store.merchants.setDisplayName(
            outcome.merchant.merchant_id,
            { kind: 'application_key', value: outcome.merchant.application_key },
            display_name,
          );
        }
        if (frame_origins.origins.length > 0) {
          await store.merchants.setFrameOrigins(outcome.merchant.merchant_id, outcome.merchant.application_key, frame_origins.origins);
          process.stdout.write(`${JSON.stringify({ ...outcome.merchant, frame_origins: frame_origins.origins })}\n`);
        } else {
          process.stdout.write(`${JSON.stringify(outcome.merchant)}\n`);
        }
        return 0;
      case 'exists':
        process.stderr.write(`paygate: merchant ${outcome.merchant_id} already exists; nothing was changed\n`);
        return 1;
      case 'invalid':
        process.stderr.write(`paygate: --${outcome.field} must be ${outcome.reason}\n`);
        return 2;
    }
  } finally {
    await store.close();
  }
}

async function createUserCommand(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' }, 'merchant-id': { type: 'string' } },
    strict: true,
  });
  for (const name of ['email', 'password', 'role'] as const) {
    if (values[name] === undefined) {
      process.stderr.write(`paygate: --${name} is required\n${USAGE}`);
      return 64;
    }
  }
  const store = openConfiguredStore(config);
  try {
    await store.migrate();
    const outcome = await createUser(
      { store, clock: wallClock },
      {
        email: values.email!,
        password: values.password!,
        role: values.role!,
        merchant_id: values['merchant-id'] ?? null,
      },
    );
    switch (outcome.kind) {
      case 'created':
        process.stdout.write(`${JSON.stringify(outcome.user)}\n`);
        return 0;
      case 'exists':
        process.stderr.write('paygate: a user with this e-mail already exists; nothing was changed\n');
        return 1;
      case 'merchant_not_found':
        process.stderr.write('paygate: --merchant-id names no merchant; create it first with paygate merchant create\n');
        return 1;
      case 'invalid':
        process.stderr.write(`paygate: --${outcome.field === 'merchant_id' ? 'merchant-id' : outcome.field} must be ${outcome.reason}\n`);
        return 2;
    }
  } finally {
    await store.close();
  }
}

/** A comma-separated option as a list; undefined when not given. */
function listOption(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',');
}

/** A whole-number option; NaN (refused by the operation, naming it) when it is not one. */
function numberOption(value: string | undefined): number | undefined {
  return value === undefined ? undefined : /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
}

async function routeCommand(config: Config, sub: string | undefined, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'merchant-id': { type: 'string' },
      gateway: { type: 'string' },
      priority: { type: 'string' },
      currency: { type: 'string' },
      'min-amount': { type: 'string' },
      'max-amount': { type: 'string' },
      'card-brand': { type: 'string' },
      'bin-country': { type: 'string' },
      rule: { type: 'string' },
    },
    strict: true,
  });
  const merchant_id = values['merchant-id'];
  if (merchant_id === undefined) {
    process.stderr.write(`paygate: route ${sub ?? ''} needs --merchant-id ID\n`);
    return 2;
  }
  const store = openConfiguredStore(config);
  try {
    await store.migrate();
    switch (sub) {
      case 'add': {
        if (values.gateway === undefined || values.priority === undefined) {
          process.stderr.write('paygate: route add needs --gateway and --priority\n');
          return 2;
        }
        const outcome = await addRoutingRule(
          store,
          {
            merchant_id,
            gateway_id: values.gateway,
            priority: numberOption(values.priority)!,
            currencies: listOption(values.currency),
            amount_min_minor: numberOption(values['min-amount']),
            amount_max_minor: numberOption(values['max-amount']),
            card_brands: listOption(values['card-brand']),
            bin_countries: listOption(values['bin-country']),
          },
          Date.now(),
        );
        if (outcome.kind === 'ok') {
          process.stdout.write(`${JSON.stringify(outcome.rule)}\n`);
          return 0;
        }
        if (outcome.kind === 'merchant_not_found') {
          process.stderr.write('paygate: no such merchant\n');
          return 1;
        }
        process.stderr.write(`paygate: --${outcome.field}: ${outcome.reason}\n`);
        return 2;
      }
      case 'list': {
        const rules = await listRoutingRules(store, merchant_id);
        if (rules === null) {
          process.stderr.write('paygate: no such merchant\n');
          return 1;
        }
        for (const rule of rules) process.stdout.write(`${JSON.stringify(rule)}\n`);
        return 0;
      }
      case 'delete':
        if (values.rule === undefined) {
          process.stderr.write('paygate: route delete needs --rule RULE_ID\n');
          return 2;
        }
        if (!(await store.merchants.deleteRoutingRule(merchant_id, values.rule))) {
          process.stderr.write('paygate: no such rule for this merchant\n');
          return 1;
        }
        return 0;
      default:
        process.stderr.write(USAGE);
        return 64;
    }
  } finally {
    await store.close();
  }
}

async function loadBins(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { file: { type: 'string' } }, strict: true });
  if (values.file === undefined) {
    process.stderr.write('paygate: bins load needs --file PATH\n');
    return 2;
  }
  let text: string;
  try {
    text = fs.readFileSync(values.file, 'utf8');
  } catch (error) {
    process.stderr.write(`paygate: cannot read ${values.file}: ${(error as Error).message}\n`);
    return 1;
  }
  const parsed = parseBinCsv(text);
  if (!parsed.ok) {
    process.stderr.write(`paygate: ${values.file} line ${parsed.line}: ${parsed.reason}; nothing was loaded\n`);
    return 2;
  }
  const store = openConfiguredStore(config);
  try {
    await store.migrate();
    await store.transaction((tx) => tx.merchants.replaceBinRanges(parsed.rows));
    process.stdout.write(`${JSON.stringify({ bin_prefixes: parsed.rows.length })}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** Body fields at most, as the API takes (decisions.md §5). */
const SIGN_MAX_BYTES = 64 * 1024;

/** `paygate sign`: what a merchant's code must produce, for a body written by hand or by a test. */
function signCommand(args: string[]): number {
  const { values } = parseArgs({
    args,
    options: { secret: { type: 'string' }, file: { type: 'string' }, now: { type: 'boolean' } },
    strict: true,
  });
  if (!values.secret) {
    process.stderr.write('paygate sign: --secret is required (the merchant secret)\n');
    return 64;
  }
  const text = fs.readFileSync(values.file ?? 0, 'utf8');
  if (Buffer.byteLength(text) > SIGN_MAX_BYTES) {
    process.stderr.write(`paygate sign: the body is over ${SIGN_MAX_BYTES} bytes, which the API refuses\n`);
    return 65;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    process.stderr.write('paygate sign: the body must be a JSON object\n');
    return 65;
  }
  const message: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  delete message.signature;
  if (values.now) message.timestamp = Math.floor(Date.now() / 1000);
  const nested = Object.keys(message).find((key) => typeof message[key] === 'object' && message[key] !== null);
  if (nested !== undefined) {
    process.stderr.write(`paygate sign: field ${nested} is nested; the API takes flat values only\n`);
    return 65;
  }
  process.stderr.write(`signed: sha384hex of "${bodySigningString(message, '')}" + secret\n`);
  process.stdout.write(`${JSON.stringify({ ...message, signature: signBody(message, values.secret) })}\n`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`paygate: configuration error: ${error.message}\n`);
      return 78;
    }
    throw error;
  }
  // No command prints the usage (decisions.md §15): `paygate start` runs the gateway.
  if (argv.length === 0) {
    process.stderr.write(USAGE);
    return 64;
  }
  const [command = 'start', sub, ...rest] = argv;
  if (command === 'start') {
    let stopping: Promise<void> | null = null;
    // One stop for both signals (a terminal's Ctrl-C reaches the primary and its workers alike).
    const onSignal = (close: () => Promise<void>) => () => {
      stopping ??= close().then(() => process.exit(0));
    };
    if (config.workers > 1 && cluster.isPrimary) {
      const primary = await startClusterPrimary(config, createLogger({ level: config.log_level, destination: config.log_file }));
      process.once(
        'SIGTERM',
        onSignal(() => primary.stop()),
      );
      process.once(
        'SIGINT',
        onSignal(() => primary.stop()),
      );
      return -1; // keep running
    }
    // A cluster worker: the primary already created the demo merchant.
    const gateway = await startGateway(config, { create_demo: !cluster.isWorker });
    process.once(
      'SIGTERM',
      onSignal(() => gateway.close()),
    );
    process.once(
      'SIGINT',
      onSignal(() => gateway.close()),
    );
    return -1; // keep running
  }
  if (command === 'merchant' && sub === 'create') return createMerchant(config, rest);
  if (command === 'user' && sub === 'create') return createUserCommand(config, rest);
  if (command === 'gateway') return gatewayCommand(config, sub, rest);
  if (command === 'route') return routeCommand(config, sub, rest);
  if (command === 'bins' && sub === 'load') return loadBins(config, rest);
  if (command === 'sign') return signCommand(argv.slice(1));
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return 0;
  }
  process.stderr.write(USAGE);
  return 64;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`paygate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
