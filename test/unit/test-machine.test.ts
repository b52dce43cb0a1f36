// The test command on a fresh machine (issue 19): a missing Chromium stops the run at once with
// the one command that fixes it, instead of failing each browser test minutes later. And what
// every start of the gateway shares: npm start without a compiler, its Node.js flags.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureChromium, INSTALL_COMMAND } from '../support/chromium.js';
import { gatewayNodeFlags, HEAP_FLAG } from '../../scripts/node-flags.mjs';

describe('Chromium for the browser tests', () => {
  it('is found where the browser tests look for it', () => {
    expect(ensureChromium(() => undefined)).toBeNull();
  });

  it('named where it was looked for when it is not there, never installed over an explicit path', () => {
    const saved = process.env.PAYGATE_TEST_CHROMIUM;
    process.env.PAYGATE_TEST_CHROMIUM = '/nonexistent/chromium';
    try {
      const lines: string[] = [];
      expect(ensureChromium((line) => lines.push(line))).toBe('Chromium not found at PAYGATE_TEST_CHROMIUM=/nonexistent/chromium');
      expect(lines).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.PAYGATE_TEST_CHROMIUM;
      else process.env.PAYGATE_TEST_CHROMIUM = saved;
    }
    expect(INSTALL_COMMAND).toBe('sudo apt-get install -y chromium');
  });
});

describe('production install (issue 19)', () => {
  const run = (script: string, cwd: string) =>
    spawnSync(process.execPath, [path.resolve(script)], { cwd, encoding: 'utf8', timeout: 30_000 });

  it('npm start runs the built code, and without dist/ says what to run instead of tracing', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-nodist-'));
    const result = run('scripts/start.mjs', empty);
    expect(result.status).toBe(78);
    expect(result.stderr).toBe(
      'paygate: not built yet (no dist/cli.js): run `npm run build` (needs the dev dependencies), then `npm start`\n',
    );
    const scripts = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe('node scripts/start.mjs');
    expect(scripts.prestart).toBeUndefined(); // no compiler on start
  });

  it('the install step without a compiler (npm ci --omit=dev) succeeds and names what is missing', () => {
    const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-nodev-'));
    const without = run('scripts/prepare.mjs', bare);
    expect(without.status).toBe(0);
    expect(without.stderr).toMatch(
      /no TypeScript compiler \(production install\) and no dist\/: build it where dev dependencies are installed/,
    );
    fs.mkdirSync(path.join(bare, 'dist'));
    fs.writeFileSync(path.join(bare, 'dist', 'cli.js'), '');
    expect(run('scripts/prepare.mjs', bare).stderr).toMatch(/using the dist\/ already built/);
  });

  it('the install step builds dist/ when it is older than its sources and keeps it when newer (npx runs it again)', () => {
    // A project of one source file, with this clone's compiler.
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-prepare-'));
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(path.resolve('node_modules/typescript'), path.join(project, 'node_modules/typescript'));
    fs.mkdirSync(path.join(project, 'src'));
    const source = path.join(project, 'src/cli.ts');
    fs.writeFileSync(source, 'export const build_number = 1;\n');
    const compiler_options = { outDir: 'dist', rootDir: 'src', module: 'nodenext', target: 'es2022' };
    fs.writeFileSync(path.join(project, 'tsconfig.build.json'), JSON.stringify({ compilerOptions: compiler_options, include: ['src'] }));
    const built = path.join(project, 'dist/cli.js');

    expect(run('scripts/prepare.mjs', project).status).toBe(0);
    expect(fs.readFileSync(built, 'utf8')).toContain('build_number = 1');
    expect(fs.statSync(built).mode & 0o111).not.toBe(0); // the `paygate` bin runs
    const built_ms = fs.statSync(built).mtimeMs;

    const again = run('scripts/prepare.mjs', project);
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('paygate: dist/ is newer than its sources: kept (npm run build rebuilds it)');
    expect(fs.statSync(built).mtimeMs).toBe(built_ms);

    // A source changed after the build (as a pull or a checkout leaves it): built again.
    fs.writeFileSync(source, 'export const build_number = 2;\n');
    const later = new Date(built_ms + 2_000);
    fs.utimesSync(source, later, later);
    expect(run('scripts/prepare.mjs', project).status).toBe(0);
    expect(fs.readFileSync(built, 'utf8')).toContain('build_number = 2');
    fs.rmSync(project, { recursive: true, force: true });
  });
});

describe("the gateway's Node.js flags (scripts/node-flags.mjs)", () => {
  it('bound the heap on every way of starting it, unless the operator set a bound of their own', () => {
    expect(HEAP_FLAG).toBe('--max-old-space-size=512');
    expect(gatewayNodeFlags({}, [])).toEqual([HEAP_FLAG]);
    expect(gatewayNodeFlags({ NODE_OPTIONS: '--max-old-space-size=2048' }, [])).toEqual([]);
    expect(gatewayNodeFlags({}, ['--max-old-space-size=1024'])).toEqual([]);
    // The image starts dist/cli.js itself, so it sets the same bound in NODE_OPTIONS.
    expect(fs.readFileSync('Dockerfile', 'utf8')).toMatch(new RegExp(`^ENV .*NODE_OPTIONS=${HEAP_FLAG}(\\s|$)`, 'm'));
  });
});
