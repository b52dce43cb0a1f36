// `paygate route add / list / delete` and `paygate bins load`: a merchant's routing rules (their
// gateway named by label or id; list prints labels, as a table or JSON lines with --json), and
// the BIN table their bin-country conditions read. Apart from the entry (src/cli.ts) so that file
// stays the dispatch.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { findGateway } from '../operations/gateways.js';
import { addRoutingRule, listRoutingRules, parseBinCsv, type RuleView } from '../operations/routing-rules.js';
import { printList } from './output.js';
import { openCliStore } from './store-session.js';
import { unknownCommand } from './usage.js';

/** A comma-separated option as a list; undefined when not given. */
function listOption(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',');
}

/** A whole-number option; NaN (refused by the operation, naming it) when it is not one. */
function numberOption(value: string | undefined): number | undefined {
  return value === undefined ? undefined : /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
}

/** A rule's conditions in a few words: what payments it takes. */
function conditionsOf(rule: RuleView): string {
  const parts = [
    rule.currencies && `currency ${rule.currencies.join(',')}`,
    rule.amount_min !== null && `amount >= ${rule.amount_min}`,
    rule.amount_max !== null && `amount <= ${rule.amount_max}`,
    rule.card_brands && `brand ${rule.card_brands.join(',')}`,
    rule.bin_countries && `card country ${rule.bin_countries.join(',')}`,
    rule.payout_methods && `payouts by ${rule.payout_methods.join(',')}`,
  ].filter((p): p is string => typeof p === 'string');
  return parts.length === 0 ? 'every payment' : parts.join('; ');
}

export async function routeCommand(config: Config, sub: string | undefined, argv: string[]): Promise<number> {
  if (sub !== 'add' && sub !== 'list' && sub !== 'delete') return unknownCommand(['route', sub]);
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
      json: { type: 'boolean' },
    },
    strict: true,
  });
  const merchant_id = values['merchant-id'];
  if (merchant_id === undefined) {
    process.stderr.write(`paygate: route ${sub} needs --merchant-id ID\n`);
    return 2;
  }
  if (sub === 'add' && (values.gateway === undefined || values.priority === undefined)) {
    process.stderr.write('paygate: route add needs --gateway and --priority\n');
    return 2;
  }
  const { store } = await openCliStore(config);
  try {
    switch (sub) {
      case 'add': {
        // The gateway by its label or id, among the merchant's.
        const found = await findGateway({ store }, values.gateway!, merchant_id);
        if (found.kind === 'ambiguous') {
          process.stderr.write(
            `paygate: --gateway: ${found.gateways.length} of this merchant's gateways are labelled ${JSON.stringify(values.gateway)}: ${found.gateways.map((g) => g.gateway_id).join(', ')}; give the id\n`,
          );
          return 2;
        }
        const outcome = await addRoutingRule(
          store,
          {
            merchant_id,
            gateway_id: found.kind === 'found' ? found.gateway_id : values.gateway!,
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
        printList(rules, {
          json: values.json === true,
          headers: ['PRIORITY', 'GATEWAY', 'TAKES', 'RULE'],
          row: (rule) => [String(rule.priority), rule.gateway_label, conditionsOf(rule), rule.rule_id],
          empty: `merchant ${merchant_id} has no routing rule (its first usable gateway takes every payment)`,
        });
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
  const { store } = await openCliStore(config);
  try {
    await store.transaction((tx) => tx.merchants.replaceBinRanges(parsed.rows));
    process.stdout.write(`${JSON.stringify({ bin_prefixes: parsed.rows.length })}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
