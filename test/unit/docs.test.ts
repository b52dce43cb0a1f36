// The catalogs in docs/ are the merchant's reference: every status value the code can answer
// and every transaction status the state machine knows must be listed there.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEPOSIT_TRANSITIONS, PAYOUT_TRANSITIONS } from '../../src/domain/transaction-state.js';
import { Status } from '../../src/http/envelope.js';

describe('docs catalogs', () => {
  it('docs/errors.md has a row for every status value', () => {
    const errors = fs.readFileSync('docs/errors.md', 'utf8');
    for (const [name, value] of Object.entries(Status)) {
      expect(errors, `${name} = ${value}`).toContain(`| \`${value}\` |`);
    }
  });

  it('docs/statuses.md names every transaction status', () => {
    const statuses = fs.readFileSync('docs/statuses.md', 'utf8');
    for (const status of new Set([...Object.keys(DEPOSIT_TRANSITIONS), ...Object.keys(PAYOUT_TRANSITIONS)])) {
      expect(statuses, status).toContain(`\`${status}\``);
    }
  });

  it('README shows the setup, run and test commands', () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    for (const command of ['npm ci', 'npm start', 'npm test']) expect(readme).toContain(command);
  });
});
