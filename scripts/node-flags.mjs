// The Node.js flags the gateway runs with, for every way it is started (npm start's
// scripts/start.mjs, the benchmarks; the Dockerfile sets the same in NODE_OPTIONS, and a cluster's
// workers inherit the primary's): one place, so that what is measured is what is shipped.
//
// --max-old-space-size bounds V8's old space, and with it how V8 lets it grow. Without it V8 sizes
// the heap from the machine's memory (about 4 GB on a 24 GB machine) and, for a heap that large,
// lets the old space grow to four times what survived the last full collection before it collects
// again: a gateway that keeps 35 MB of live objects let its resident memory climb by 1.7 MB a
// minute for the whole of a ten-minute soak, garbage not yet collected (bench/RESULTS.md, issue 29
// item 4). With the bound V8 grows the old space by about 1.4 times instead, and the same soak
// levels off within minutes. 512 MB is some fifteen times the live heap of a busy gateway; an
// operator whose gateway needs more sets NODE_OPTIONS=--max-old-space-size=N, which wins.
export const HEAP_FLAG = '--max-old-space-size=512';

/** The flags to add to `node` for the gateway: none that NODE_OPTIONS or the arguments already set. */
export function gatewayNodeFlags(env = process.env, exec_argv = process.execArgv) {
  const set = `${env.NODE_OPTIONS ?? ''} ${exec_argv.join(' ')}`;
  return set.includes('--max-old-space-size') ? [] : [HEAP_FLAG];
}
