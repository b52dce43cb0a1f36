// `paygate gateway create / list / show / disable / enable / settings / rename` (decisions.md
// §13; the operator API does the same, docs/connectors.md): a merchant's gateways from the
// command line. A gateway is named by its label or its id; list prints labels (a table, or JSON
// lines with --json), the others one JSON object. Apart from the entry (src/cli.ts) so that file
// stays the dispatch.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { CONNECTOR_DEFINITIONS } from '../connectors/registry.js';
import {
  type ConnectorCatalog,
  createGateway,
  findGateway,
  type GatewayAdminDeps,
  type GatewayOutcome,
  type GatewayView,
  listGatewayViews,
  renameGateway,
  replaceGatewaySettings,
  setGatewayEnabled,
  showGateway,
} from '../operations/gateways.js';
import { sealerFor } from '../store-and-keys.js';
import { printList } from './output.js';
import { openCliStore } from './store-session.js';
import { unknownCommand } from './usage.js';

const SUBCOMMANDS = ['create', 'list', 'show', 'disable', 'enable', 'settings', 'rename'];

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

/** The option a refused field came from. */
function optionOf(field: string): string {
  if (field === 'currencies') return '--currencies';
  if (field === 'label') return '--label';
  if (field === 'settings') return '--setting';
  return `--setting ${field}`;
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
      process.stderr.write(`paygate: ${optionOf(outcome.field)}: ${outcome.reason}\n`);
      return 2;
  }
}

/** A gateway's state in a list: what a payment finds. */
function stateOf(view: GatewayView, environment: string): string {
  if (!view.enabled) return 'disabled';
  return view.usable_here ? 'enabled' : `enabled (takes no payments in ${environment} mode)`;
}

export async function gatewayCommand(config: Config, sub: string | undefined, argv: string[]): Promise<number> {
  if (sub === undefined || !SUBCOMMANDS.includes(sub)) return unknownCommand(['gateway', sub]);
  const { values } = parseArgs({
    args: argv,
    options: {
      'merchant-id': { type: 'string' },
      connector: { type: 'string' },
      currencies: { type: 'string' },
      setting: { type: 'string', multiple: true },
      gateway: { type: 'string' },
      label: { type: 'string' },
      'no-mit': { type: 'boolean' },
      'hold-payouts': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    strict: true,
  });
  const settings = parseSettings(values.setting ?? []);
  if (!settings.ok) {
    process.stderr.write(`paygate: ${settings.message}\n`);
    return 2;
  }
  if (sub === 'create' && (values['merchant-id'] === undefined || values.connector === undefined)) {
    process.stderr.write('paygate: gateway create needs --merchant-id and --connector\n');
    return 2;
  }
  if (sub !== 'create' && sub !== 'list' && values.gateway === undefined) {
    process.stderr.write(`paygate: gateway ${sub} needs --gateway LABEL_OR_ID\n`);
    return 2;
  }
  if (sub === 'rename' && values.label === undefined) {
    process.stderr.write('paygate: gateway rename needs --label TEXT\n');
    return 2;
  }
  const { store, public_url } = await openCliStore(config);
  try {
    const deps: GatewayAdminDeps = {
      store,
      sealer: await sealerFor(config, store),
      connectors: catalogFor(config),
      environment: config.environment,
      allow_private_urls: config.limits.allow_private_urls,
      public_url,
    };
    const merchant_id = values['merchant-id'] ?? null;
    if (sub === 'create') {
      return printOutcome(
        await createGateway(
          deps,
          {
            merchant_id: merchant_id!,
            connector: values.connector!,
            currencies: values.currencies === undefined ? null : values.currencies.split(','),
            settings: settings.settings,
            mit_enabled: values['no-mit'] !== true,
            hold_payouts: values['hold-payouts'] === true,
            label: values.label,
          },
          Date.now(),
        ),
        config.environment,
      );
    }
    if (sub === 'list') {
      if (merchant_id !== null && !(await store.merchants.get(merchant_id))) {
        process.stderr.write(`paygate: no merchant ${merchant_id} on this store (paygate merchant list shows them)\n`);
        return 1;
      }
      printList(await listGatewayViews(deps, merchant_id), {
        json: values.json === true,
        headers: ['LABEL', 'MERCHANT', 'CONNECTOR', 'CURRENCIES', 'STATE'],
        row: (v) => [v.label, v.merchant_id, v.connector, v.currencies.join(','), stateOf(v, config.environment)],
        empty:
          merchant_id === null
            ? 'no gateway on this store yet'
            : `merchant ${merchant_id} has no gateway yet (paygate gateway create adds one)`,
      });
      return 0;
    }
    // The others name one gateway, by label or id (of --merchant-id only, when given).
    const found = await findGateway(deps, values.gateway!, merchant_id);
    if (found.kind === 'none') {
      process.stderr.write(
        `paygate: no gateway ${JSON.stringify(values.gateway)}${merchant_id === null ? '' : ` of merchant ${merchant_id}`} (paygate gateway list shows them)\n`,
      );
      return 1;
    }
    if (found.kind === 'ambiguous') {
      const ids = found.gateways.map((g) => `${g.gateway_id} (${g.merchant_id})`).join(', ');
      process.stderr.write(
        `paygate: ${found.gateways.length} gateways are labelled ${JSON.stringify(values.gateway)}: ${ids}; give the id\n`,
      );
      return 2;
    }
    const gateway_id = found.gateway_id;
    switch (sub) {
      case 'show':
        return printOutcome(await showGateway(deps, gateway_id), config.environment);
      case 'disable':
      case 'enable':
        return printOutcome(await setGatewayEnabled(deps, gateway_id, sub === 'enable', Date.now()), config.environment);
      case 'rename':
        return printOutcome(await renameGateway(deps, gateway_id, values.label!), config.environment);
      default:
        return printOutcome(await replaceGatewaySettings(deps, gateway_id, settings.settings, Date.now()), config.environment);
    }
  } finally {
    await store.close();
  }
}
