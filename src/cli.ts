#!/usr/bin/env node
// `paygate` commands: start (the default) and merchant create.
// With PAYGATE_WORKERS > 1, start runs a node:cluster primary (cluster.ts) and this same file in
// each worker process, where start runs one gateway.
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { startClusterPrimary } from './cluster.js';
import { createLogger } from './logging.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { Sealer } from './crypto/sealer.js';
import { MerchantDirectory } from './domain/merchants.js';
import { checkFrameOrigins } from './domain/frame-origins.js';
import { masterKeyFor, openConfiguredStore, startGateway } from './main.js';

const USAGE = `Usage:
  paygate [start]                       run the gateway (configuration from the environment)
  paygate merchant create [--merchant-id ID] [--secret SECRET] [--application-key KEY]
                          [--frontend NAME] [--currency CODE] [--frame-origin ORIGIN]...
                                        create a merchant with one sandbox gateway; prints JSON.
                                        --frame-origin (repeatable): an origin such as
                                        https://shop.example allowed to show the application's
                                        init-pay-in cashier in an iframe (docs/cashier.md)
`;

async function createMerchant(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'merchant-id': { type: 'string' }, secret: { type: 'string' }, 'application-key': { type: 'string' },
      frontend: { type: 'string' }, currency: { type: 'string' }, 'frame-origin': { type: 'string', multiple: true },
    },
    strict: true,
  });
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
    const outcome = await merchants.create({
      merchant_id: values['merchant-id'], secret: values.secret, application_key: values['application-key'],
      frontend: values.frontend, currency: values.currency?.toUpperCase(),
    }, Date.now());
    switch (outcome.kind) {
      case 'created':
        if (frame_origins.origins.length > 0) {
          await store.setFrameOrigins(outcome.merchant.merchant_id, outcome.merchant.application_key, frame_origins.origins);
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
  const [command = 'start', sub, ...rest] = argv;
  if (command === 'start') {
    let stopping: Promise<void> | null = null;
    // One stop for both signals (a terminal's Ctrl-C reaches the primary and its workers alike).
    const onSignal = (close: () => Promise<void>) => () => {
      stopping ??= close().then(() => process.exit(0));
    };
    if (config.workers > 1 && cluster.isPrimary) {
      const primary = await startClusterPrimary(config, createLogger({ level: config.log_level, destination: config.log_file }));
      process.once('SIGTERM', onSignal(() => primary.stop()));
      process.once('SIGINT', onSignal(() => primary.stop()));
      return -1; // keep running
    }
    // A cluster worker: the primary already created the demo merchant.
    const gateway = await startGateway(config, { create_demo: !cluster.isWorker });
    process.once('SIGTERM', onSignal(() => gateway.close()));
    process.once('SIGINT', onSignal(() => gateway.close()));
    return -1; // keep running
  }
  if (command === 'merchant' && sub === 'create') return createMerchant(config, rest);
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
