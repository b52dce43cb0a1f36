// `paygate merchant create`: a merchant, with its sandbox gateway in sandbox mode, its shop name
// and the origins allowed to frame its cashier; `paygate merchant list`: the merchants by id, a
// page at a time. Apart from the entry (src/cli.ts) so that file stays the dispatch.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { starterGateway } from '../connectors/registry.js';
import { MerchantDirectory } from '../operations/merchant-directory.js';
import { checkFrameOrigins } from '../domain/frame-origins.js';
import { characterLength, hasContent, textProblem } from '../domain/text.js';
import { sealerFor } from '../store-and-keys.js';
import { printList, utc } from './output.js';
import { openCliStore } from './store-session.js';

export async function createMerchant(config: Config, argv: string[]): Promise<number> {
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
  const { store } = await openCliStore(config);
  try {
    const merchants = new MerchantDirectory(store, await sealerFor(config, store));
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

/** Merchants listed at most by one `merchant list` (--limit), and by default. */
const LIST_MAX = 10_000;
const LIST_DEFAULT = 1_000;

export async function listMerchants(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { after: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  const limit = values.limit === undefined ? LIST_DEFAULT : /^[0-9]{1,6}$/.test(values.limit) ? Number(values.limit) : 0;
  if (limit < 1 || limit > LIST_MAX) {
    process.stderr.write(`paygate: --limit: expected a whole number from 1 to ${LIST_MAX}, got ${JSON.stringify(values.limit)}\n`);
    return 2;
  }
  const { store } = await openCliStore(config);
  try {
    const rows = await store.merchants.list(values.after ?? '', limit + 1);
    const shown = rows.slice(0, limit);
    printList(shown, {
      json: values.json === true,
      headers: ['MERCHANT', 'STATE', 'APPLICATIONS', 'FRONTENDS', 'GATEWAYS', 'CREATED (UTC)'],
      row: (m) => [
        m.merchant_id,
        m.disabled_at_ms === null ? 'enabled' : `disabled since ${utc(m.disabled_at_ms)}`,
        String(m.application_count),
        String(m.frontend_count),
        String(m.gateway_count),
        utc(m.created_at_ms),
      ],
      empty:
        values.after === undefined ? 'no merchant on this store yet (paygate merchant create makes one)' : 'no merchant after that one',
    });
    if (rows.length > limit) process.stderr.write(`paygate: more merchants follow: --after ${shown[shown.length - 1]!.merchant_id}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
