// `paygate gateway create / list / show / disable / enable / settings` (decisions.md §13; the
// operator API does the same, docs/connectors.md): a merchant's gateways from the command line.
// Apart from the entry (src/cli.ts) so that file stays the dispatch.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { Sealer } from '../crypto/sealer.js';
import { CONNECTOR_DEFINITIONS } from '../connectors/registry.js';
import {
  type ConnectorCatalog,
  createGateway,
  type GatewayAdminDeps,
  type GatewayOutcome,
  listGatewayViews,
  replaceGatewaySettings,
  setGatewayEnabled,
  showGateway,
} from '../operations/gateways.js';
import { masterKeyFor, openConfiguredStore } from '../main.js';
import { USAGE } from './usage.js';

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

export async function gatewayCommand(config: Config, sub: string | undefined, argv: string[]): Promise<number> {
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
