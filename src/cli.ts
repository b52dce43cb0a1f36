#!/usr/bin/env node
// `paygate` commands: start, merchant create / list, user create / list, gateway create / list /
// show / disable / enable / rename / settings (decisions.md §13; the operator API does the same,
// docs/connectors.md), route, bins, sign, check-endpoint, the sandbox's trigger
// (docs/triggers.md) and master-key rotate / status / retire (docs/production.md). An unknown command is named, with the commands it could have been.
// With PAYGATE_WORKERS > 1, start runs a node:cluster primary (cluster.ts) and this same file in
// each worker process, where start runs one gateway.
// The commands themselves are in src/cli/ (gateway.ts, merchant.ts, user.ts, routing.ts, sign.ts,
// trigger.ts, usage.ts); this file is the entry (package.json's bin) and dispatches to them.
// Each command's module is imported when that command runs, not all of them at start: the gateway
// (main.ts) loads the whole HTTP application, and a command that reads one table does not need it
// (it took 1.4 s to load before a `merchant list` read its first row).
import cluster from 'node:cluster';
import { type Config, ConfigError, loadConfig } from './config.js';
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
      const [{ startClusterPrimary }, { createLogger }] = await Promise.all([import('./cluster.js'), import('./logging.js')]);
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
    const { startGateway } = await import('./main.js');
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
  if (command === 'merchant' && sub === 'create') return (await import('./cli/merchant.js')).createMerchant(config, rest);
  if (command === 'merchant' && sub === 'list') return (await import('./cli/merchant.js')).listMerchants(config, rest);
  if (command === 'user' && sub === 'create') return (await import('./cli/user.js')).createUserCommand(config, rest);
  if (command === 'user' && sub === 'list') return (await import('./cli/user.js')).listUsersCommand(config, rest);
  if (command === 'gateway') return (await import('./cli/gateway.js')).gatewayCommand(config, sub, rest);
  if (command === 'route') return (await import('./cli/routing.js')).routeCommand(config, sub, rest);
  if (command === 'bins' && sub === 'load') return (await import('./cli/routing.js')).loadBins(config, rest);
  if (command === 'sign') return (await import('./cli/sign.js')).signCommand(argv.slice(1));
  if (command === 'trigger') return (await import('./cli/trigger.js')).triggerCommand(config, argv.slice(1));
  if (command === 'check-endpoint') return (await import('./cli/check-endpoint.js')).checkEndpointCommand(config, argv.slice(1));
  if (command === 'master-key') return (await import('./cli/master-key.js')).masterKeyCommand(config, sub, rest);
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
