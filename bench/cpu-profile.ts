// A V8 CPU profile of one measured run of a running gateway, for bench/run.ts (BENCH_CPU_PROF_DIR):
// `node --experimental-websocket --import tsx bench/cpu-profile.ts PID FILE` opens the gateway's
// inspector (heap-probe.ts openInspector), starts V8's sampling profiler, says `profiling` and
// waits; on SIGUSR2 it stops the profiler and writes the profile to FILE (a flame graph in Chrome
// DevTools or speedscope; profile-summary.ts sums it). A profile per run,
// not --cpu-prof's one per process: the replay and find-order runs share the sale run's gateway,
// and a whole-process profile mixes them with the sale run and the set-up between them.
// Its own process because Node 20 has WebSocket only behind --experimental-websocket.
import fs from 'node:fs';
import { openInspector } from './heap-probe.js';

/** V8's interval, as --cpu-prof's default: one sample every millisecond. */
const SAMPLING_INTERVAL_US = 1000;

async function main(): Promise<void> {
  const pid = Number(process.argv[2]);
  const file = process.argv[3];
  if (!Number.isInteger(pid) || pid <= 0 || !file) throw new Error('usage: cpu-profile.ts PID FILE');
  const inspector = await openInspector(pid);
  try {
    await inspector.call('Profiler.enable');
    await inspector.call('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
    await inspector.call('Profiler.start');
    process.stdout.write('profiling\n');
    await new Promise<void>((resolve) => process.once('SIGUSR2', () => resolve()));
    const { profile } = await inspector.call('Profiler.stop');
    fs.writeFileSync(file, JSON.stringify(profile));
    await inspector.call('Profiler.disable');
  } finally {
    inspector.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
