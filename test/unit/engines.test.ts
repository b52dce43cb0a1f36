// package.json's engines is a promise to operators: every package the lockfile installs must run on
// the oldest Node.js it admits, or `npm ci` warns EBADENGINE on a machine we claim to support
// (issue 19: cookie@2, through light-my-request, wanted Node 22; docs/decisions.md says how it is pinned).
import fs from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface Lock {
  packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean; optional?: boolean }>;
}

describe('engines', () => {
  it('every locked package runs on the oldest Node.js that package.json admits', () => {
    const own = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
    const oldest = semver.minVersion(own)!.version;
    const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as Lock;
    const refusing = Object.entries(lock.packages)
      .filter(([name, entry]) => name !== '' && !Array.isArray(entry.engines) && typeof entry.engines?.node === 'string')
      .filter(([, entry]) => !semver.satisfies(oldest, (entry.engines as { node: string }).node))
      .map(([name, entry]) => `${name} wants node ${(entry.engines as { node: string }).node}`);
    expect(refusing, `package.json admits ${own}`).toEqual([]);
    // And this machine is one of them.
    expect(semver.satisfies(process.versions.node, own)).toBe(true);
  });
});
