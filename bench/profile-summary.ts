// `npm run bench:profile -- DIR...`: reads the V8 CPU profiles a benchmark wrote
// (BENCH_CPU_PROF_DIR; each opens as a flame graph in Chrome DevTools or speedscope) and writes
// bench/profiles/SUMMARY.md: for each profile, where the gateway's main thread spent the load
// window (the samples from the first to the last one under a request handler: each profile covers
// one measured run, cpu-profile.ts) by part of the gateway, and its costliest functions. Shares of samples,
// not absolute times, so they hold on a busy machine too: contention slows every part alike.
// A part's share is the most its removal can buy: the request log's share is the ceiling of the
// sale throughput it costs (issue 28's 5% budget). Samples blocked in a native call (SQLite's
// fsync at commit) count as busy here though they are not CPU time; the "commit" part names them.
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Parts of the gateway, first match wins, tested against every frame of a sample's stack (innermost first). */
const PARTS: readonly (readonly [string, RegExp])[] = [
  ['request log (masking, queue, its inserts)', /operations\/request-log|requestLog|RequestLog/],
  ['commit (SQLite COMMIT incl. fsync; PostgreSQL COMMIT)', /commitTransaction/],
  ['notification delivery (worker, signing, HTTP out)', /dist\/notifications\/|dist\/outbound\//],
  // Before the HTTP edge: an answer is written to its socket from within the route's own send
  // (Fastify writes synchronously), and that system call is Node's and the kernel's work, not the edge's.
  ['Node writing answers to sockets (writev)', /^(Socket\._writeGeneric|Socket\._writev|writevGeneric|writeGeneric) node:/],
  ['store statements (Kysely, drivers, SQL)', /dist\/store\/|node_modules\/(kysely|pg|pg-protocol|better-sqlite3)\//],
  ['request signature and fingerprints (HMAC)', /dist\/domain\/signing|dist\/crypto\/|requestFingerprint/],
  ['validation (route schemas, fields)', /dist\/http\/fields|@sinclair\/typebox|ajv|fast-json-stringify|secure-json-parse/],
  ['logging (pino)', /node_modules\/(pino|sonic-boom|thread-stream)|dist\/logging/],
  ['operations (sale, lifecycle, routing)', /dist\/operations\//],
  ['HTTP edge (routes, hooks)', /dist\/http\//],
  [
    'Node HTTP and sockets (in and out), Fastify',
    /node_modules\/(fastify|find-my-way|avvio|@fastify)|node:_http|node:net|node:internal\/(streams|http)/,
  ],
  ['garbage collector', /^\(garbage collector\)/],
];
const HANDLER = /^(runSignedRoute|handle|routeHandler)$/;
const TOP_FUNCTIONS = 15;

function summarise(file: string): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const by_id = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stack = (id: number): ProfileNode[] => {
    const frames: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(by_id.get(at)!);
    return frames;
  };
  const frameText = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url}`;
  const in_handler = profile.samples.map((id) =>
    stack(id).some((node) => HANDLER.test(node.callFrame.functionName) && node.callFrame.url.includes('/dist/http/')),
  );
  const first = in_handler.indexOf(true);
  const last = in_handler.lastIndexOf(true);
  if (first < 0) return `## ${path.basename(file)}\n\nNo request was handled while it was recorded.\n`;
  let busy_us = 0;
  let idle_us = 0;
  const by_part = new Map<string, number>();
  const by_function = new Map<string, number>();
  for (let i = first; i <= last; i += 1) {
    const id = profile.samples[i]!;
    const delta_us = profile.timeDeltas[i] ?? 0;
    const leaf = by_id.get(id)!;
    if (leaf.callFrame.functionName === '(idle)') {
      idle_us += delta_us;
      continue;
    }
    busy_us += delta_us;
    const frames = stack(id).map(frameText);
    const part = PARTS.find(([, pattern]) => frames.some((frame) => pattern.test(frame)))?.[0] ?? 'other (Node, V8, the rest)';
    by_part.set(part, (by_part.get(part) ?? 0) + delta_us);
    const name = `${leaf.callFrame.functionName || '(anonymous)'} ${leaf.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${leaf.callFrame.lineNumber + 1}`;
    by_function.set(name, (by_function.get(name) ?? 0) + delta_us);
  }
  const share = (us: number) => `${((100 * us) / busy_us).toFixed(1)}%`;
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return [
    `## ${path.basename(file)}`,
    '',
    `Load window: ${(busy_us / 1000).toFixed(0)} ms busy, ${(idle_us / 1000).toFixed(0)} ms idle on the main thread.`,
    '',
    '| part | share of busy samples |',
    '|---|---:|',
    ...sorted(by_part).map(([part, us]) => `| ${part} | ${share(us)} |`),
    '',
    `Costliest functions (self time):`,
    '',
    '| function | self share |',
    '|---|---:|',
    ...sorted(by_function)
      .slice(0, TOP_FUNCTIONS)
      .map(([name, us]) => `| \`${name}\` | ${share(us)} |`),
    '',
  ].join('\n');
}

function main(): void {
  const inputs = process.argv.slice(2);
  if (inputs.length === 0) throw new Error('usage: profile-summary.ts FILE.cpuprofile|DIR ...');
  const files = inputs.flatMap((input) =>
    fs.statSync(input).isDirectory()
      ? fs
          .readdirSync(input)
          .filter((name) => name.endsWith('.cpuprofile'))
          .sort()
          .map((name) => path.join(input, name))
      : [input],
  );
  const out = path.resolve(import.meta.dirname, 'profiles', 'SUMMARY.md');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const text = [
    '# CPU profiles of the benchmark runs',
    '',
    `Written by \`bench/profile-summary.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC from ${files.map((file) => `\`${path.basename(file)}\``).join(', ')}.`,
    'Each part counts a sample once, for the first part (in the order below) any frame of its stack belongs to.',
    '',
    ...files.map(summarise),
  ].join('\n');
  fs.writeFileSync(out, text);
  process.stdout.write(text);
}

main();
