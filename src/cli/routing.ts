// `paygate route add / list / delete` and `paygate bins load`: a merchant's routing rules, and
// the BIN table their bin-country conditions read. Apart from the entry (src/cli.ts) so that file
// stays the dispatch.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { addRoutingRule, listRoutingRules, parseBinCsv } from '../operations/routing-rules.js';
import { openConfiguredStore } from '../main.js';
import { USAGE } from './usage.js';

/** A comma-separated option as a list; undefined when not given. */
function listOption(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',');
}

/** A whole-number option; NaN (refused by the operation, naming it) when it is not one. */
function numberOption(value: string | undefined): number | undefined {
  return value === undefined ? undefined : /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
}

export async function routeCommand(config: Config, sub: string | undefined, argv: string[]): Promise<number> {
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
      'payout-method': { type: 'string' },
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
            payout_methods: listOption(values['payout-method']),
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

export async function loadBins(config: Config, argv: string[]): Promise<number> {
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
