// `paygate user create`: a back-office user (docs/backoffice.md), an operator or a merchant's.
// Apart from the entry (src/cli.ts) so that file stays the dispatch.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { createUser } from '../operations/backoffice-users.js';
import { wallClock } from '../domain/clock.js';
import { openConfiguredStore } from '../main.js';
import { USAGE } from './usage.js';

export async function createUserCommand(config: Config, argv: string[]): Promise<number> {
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
