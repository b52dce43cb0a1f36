// `paygate user create`: a back-office user (docs/backoffice.md), an operator or a merchant's;
// `paygate user list`: the users, never their password hashes. Apart from the entry (src/cli.ts)
// so that file stays the dispatch.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { createUser, listUserViews } from '../operations/backoffice-users.js';
import { wallClock } from '../domain/clock.js';
import { printList, utc } from './output.js';
import { openCliStore } from './store-session.js';

export async function createUserCommand(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' }, 'merchant-id': { type: 'string' } },
    strict: true,
  });
  for (const name of ['email', 'password', 'role'] as const) {
    if (values[name] === undefined) {
      process.stderr.write(`paygate: user create needs --${name} (paygate help shows every option)\n`);
      return 64;
    }
  }
  const { store } = await openCliStore(config);
  try {
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

/** Users listed at most by one `user list` (--limit), and by default. */
const LIST_MAX = 10_000;
const LIST_DEFAULT = 1_000;

export async function listUsersCommand(config: Config, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { 'merchant-id': { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  const limit = values.limit === undefined ? LIST_DEFAULT : /^[0-9]{1,6}$/.test(values.limit) ? Number(values.limit) : 0;
  if (limit < 1 || limit > LIST_MAX) {
    process.stderr.write(`paygate: --limit: expected a whole number from 1 to ${LIST_MAX}, got ${JSON.stringify(values.limit)}\n`);
    return 2;
  }
  const merchant_id = values['merchant-id'] ?? null;
  const { store } = await openCliStore(config);
  try {
    if (merchant_id !== null && !(await store.merchants.get(merchant_id))) {
      process.stderr.write(`paygate: no merchant ${merchant_id} on this store (paygate merchant list shows them)\n`);
      return 1;
    }
    const users = await listUserViews({ store }, merchant_id, limit + 1);
    printList(users.slice(0, limit), {
      json: values.json === true,
      headers: ['EMAIL', 'ROLE', 'MERCHANT', 'STATE', 'CREATED (UTC)'],
      row: (u) => [u.email, u.role, u.merchant_id ?? '', u.disabled_at_ms === null ? 'active' : 'disabled', utc(u.created_at_ms)],
      empty: 'no back-office user yet (paygate user create --role operator … makes the first)',
    });
    if (users.length > limit) process.stderr.write(`paygate: more than ${limit} users: only the first ${limit} are listed (--limit)\n`);
    return 0;
  } finally {
    await store.close();
  }
}
