// The catalogs in docs/ are the merchant's reference: every status value the code can answer
// and every transaction status the state machine knows must be listed there.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPOSIT_TRANSITIONS, PAYOUT_TRANSITIONS } from '../../src/domain/transaction-state.js';
import { Status } from '../../src/http/envelope.js';

/** Every TypeScript source file under src/, with its text. */
function sources(dir = 'src'): { file: string; text: string }[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [{ file: full, text: fs.readFileSync(full, 'utf8') }] : [];
  });
}

/** The file's constants written as `const NAME = 'text'`. */
function stringConstants(text: string): Map<string, string> {
  return new Map([...text.matchAll(/\bconst\s+([A-Z][A-Z0-9_]*)\s*=\s*'([^']*)'/g)].map((m) => [m[1]!, m[2]!]));
}

/**
 * The error_code values the code can write: every quoted text or NAMED constant on the right of an
 * `error_code:` / `error_code =` (ternaries included). Pass-throughs (`result.error_code`) and types add nothing.
 */
function producedErrorCodes(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const { file, text } of sources()) {
    const constants = stringConstants(text);
    for (const match of text.matchAll(/\berror_code\s*(?::|=(?!=))\s*([^,;}\n]+)/g)) {
      const expression = match[1]!;
      const values = [
        ...[...expression.matchAll(/'([^']*)'/g)].map((m) => m[1]!),
        ...[...expression.matchAll(/\b([A-Z][A-Z0-9_]+)\b/g)].map((m) => constants.get(m[1]!)).filter((v): v is string => v !== undefined),
      ];
      for (const value of values) found.set(value, [...(found.get(value) ?? []), file]);
    }
  }
  return found;
}

/**
 * The fixed error_details texts in the code: quoted texts given to `error_details`, and the sandbox
 * processor's `test('…')` texts and failure `details: '…'` (which it prefixes with "[TEST] "). Of a
 * template string, its fixed part after the last interpolation.
 */
function producedErrorDetails(): Set<string> {
  const found = new Set<string>();
  for (const { file, text } of sources()) {
    for (const match of text.matchAll(/\berror_details\s*(?::|=(?!=))\s*'([^']+)'/g)) found.add(match[1]!);
    for (const match of text.matchAll(/\berror_details\s*(?::|=(?!=))\s*`((?:[^`$]|\$\{[^{}`]*\})*)`/g)) {
      const tail = match[1]!.split(/\$\{[^{}`]*\}/).pop()!;
      if (tail.trim().length > 0) found.add(tail);
    }
    if (file.endsWith(path.join('sandbox', 'connector.ts'))) {
      for (const call of text.matchAll(/\btest\(([^)]*)\)/g)) {
        for (const literal of call[1]!.matchAll(/'([^']*)'/g)) found.add(`[TEST] ${literal[1]!}`);
      }
      for (const match of text.matchAll(/\bdetails:\s*'([^']+)'/g)) found.add(`[TEST] ${match[1]!}`);
    }
  }
  return found;
}

describe('docs catalogs', () => {
  it('docs/errors.md has a row for every status value', () => {
    const errors = fs.readFileSync('docs/errors.md', 'utf8');
    for (const [name, value] of Object.entries(Status)) {
      expect(errors, `${name} = ${value}`).toContain(`| \`${value}\` |`);
    }
  });

  it('docs/errors.md lists every error_code value the code can produce, and no other', () => {
    const errors = fs.readFileSync('docs/errors.md', 'utf8');
    const produced = producedErrorCodes();
    // The scan must find the sandbox's two values, or it is not reading the code it should.
    expect([...produced.keys()]).toEqual(expect.arrayContaining(['0', '1']));
    for (const [value, files] of produced) {
      expect(errors, `error_code "${value}" (${[...new Set(files)].join(', ')})`).toContain(`| \`"${value}"\` |`);
    }
    const table = errors.slice(errors.indexOf('## `error_code` values'));
    const listed = [...table.matchAll(/^\| `"([^"]*)"` \|/gm)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThan(0);
    for (const value of listed) expect(produced.has(value), `docs list error_code "${value}"`).toBe(true);
  });

  it('docs/errors.md gives every fixed error_details text the code writes', () => {
    const errors = fs.readFileSync('docs/errors.md', 'utf8');
    const details = producedErrorDetails();
    expect(details.size).toBeGreaterThan(15);
    expect(details).toContain('[TEST] Do not honor');
    for (const text of details) expect(errors, text).toContain(text);
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
