#!/usr/bin/env node
// `paygate` commands: start, merchant create / list, user create / list, gateway create / list /
// show / disable / enable / rename / settings (decisions.md §13; the operator API does the same,
// docs/connectors.md), route, bins, sign, check-endpoint, the sandbox's trigger
// (docs/triggers.md) and master-key rotate / status / retire (docs/production.md). An unknown command is named, with the commands it could have been.
// With PAYGATE_WORKERS > 1, start runs a node:cluster primary (cluster.ts) and this same file in
// each worker process, where start runs one gateway.
// The commands themselves are in src/cli/ (gateway.ts, merchant.ts, user.ts, routing.ts, sign.ts,
// trigger.ts, usage.ts); this file is the entry (package.json's bin) and dispatches to them.
import cluster from 'node:cluster';
import { startClusterPrimary } from './cluster.js';
import { createLogger } from './logging.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { startGateway } from './main.js';
import { checkEndpointCommand } from './cli/check-endpoint.js';
import { gatewayCommand } from './cli/gateway.js';
import { masterKeyCommand } from './cli/master-key.js';
import { createMerchant, listMerchants } from './cli/merchant.js';
import { loadBins, routeCommand } from './cli/routing.js';
import { signCommand } from './cli/sign.js';
import { triggerCommand } from './cli/trigger.js';
import { createUserCommand, listUsersCommand } from './cli/user.js';
import { unknownCommand, USAGE } from './cli/usage.js';

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
  if (command === 'merchant' && sub === 'list') return listMerchants(config, rest);
  if (command === 'user' && sub === 'create') return createUserCommand(config, rest);
  if (command === 'user' && sub === 'list') return listUsersCommand(config, rest);
  if (command === 'gateway') return gatewayCommand(config, sub, rest);
  if (command === 'route') return routeCommand(config, sub, rest);
  if (command === 'bins' && sub === 'load') return loadBins(config, rest);
  if (command === 'sign') return signCommand(argv.slice(1));
  if (command === 'trigger') return triggerCommand(config, argv.slice(1));
  if (command === 'check-endpoint') return checkEndpointCommand(config, argv.slice(1));
  if (command === 'master-key') return masterKeyCommand(config, sub, rest);
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return 0;
  }
  // merchant, user and bins with a second word they do not take; anything else unknown as a whole.
  return unknownCommand(['merchant', 'user', 'bins'].includes(command) ? [command, sub] : [command]);
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
