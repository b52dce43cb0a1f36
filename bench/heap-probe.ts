// Looks inside a running gateway's heap from outside, for the memory soak (issue 29, item 4): is a
// rising RSS a leak, or old space V8 has not yet collected? RSS alone cannot tell them apart.
//
// The gateway is started as in production, with no inspector. SIGUSR1 makes Node open one on
// 127.0.0.1:9229 (the default port; the soak runs in a network namespace of its own), and this
// module speaks the Chrome DevTools Protocol to it over a WebSocket (Node 20 needs
// --experimental-websocket in the process that imports this). A probe forces full collections,
// reads process.memoryUsage() and /proc/PID/smaps after them, and may take a heap snapshot whose
// objects it sums by kind and constructor. Two probes, at the warm-up's end and at the soak's end,
// show whether what grew is V8's live heap (a leak in our code) or memory outside it.
import fs from 'node:fs';

const INSPECTOR_PORT = 9229;
const OPEN_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 120_000;
/** Kinds and constructors kept in a probe's summary, largest first. */
const SUMMARY_ROWS_MAX = 400;

export interface MemoryUsage {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

export interface HeapProbe {
  readonly at_s: number;
  /** process.memoryUsage() after two forced full collections (bytes). */
  readonly after_gc: MemoryUsage;
  /** The gateway's RSS from /proc just before the collections (MB). */
  readonly rss_before_gc_mb: number;
  /** Live objects in the snapshot by "kind:constructor" (strings, code and arrays by kind alone). */
  readonly by_kind: Record<string, { count: number; self_bytes: number }>;
  /** 0 when the probe took no snapshot. */
  readonly snapshot_ms: number;
  /** Resident MB after the collections by mapping (/proc/PID/smaps): glibc's main arena, anonymous mappings (V8's heap, other malloc arenas), files. */
  readonly resident_mb: Record<'brk_heap' | 'anonymous' | 'files' | 'other', number>;
}

/** A Chrome DevTools Protocol session with a running gateway's inspector (openInspector). */
export interface Connection {
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  readonly chunks: string[];
  close(): void;
}

/** Opens the gateway's inspector (SIGUSR1: 127.0.0.1:9229) and a protocol session with it; also for cpu-profile.ts. */
export async function openInspector(pid: number): Promise<Connection> {
  process.kill(pid, 'SIGUSR1');
  const deadline = Date.now() + OPEN_TIMEOUT_MS;
  let url: string | undefined;
  while (url === undefined) {
    try {
      const targets = (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json/list`).then((r) => r.json())) as {
        webSocketDebuggerUrl: string;
      }[];
      url = targets[0]?.webSocketDebuggerUrl;
    } catch (error) {
      if (Date.now() > deadline) throw new Error("the gateway's inspector did not open", { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error('inspector WebSocket failed')), { once: true });
  });
  let next_id = 0;
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  const chunks: string[] = [];
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: { chunk?: string } };
    if (message.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(message.params!.chunk!);
    else if (message.id !== undefined) waiting.get(message.id)?.(message as Record<string, unknown>);
  });
  return {
    chunks,
    call(method, params = {}) {
      next_id += 1;
      const id = next_id;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method} took over ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
        waiting.set(id, (message) => {
          clearTimeout(timer);
          waiting.delete(id);
          if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
          else resolve((message.result ?? {}) as Record<string, unknown>);
        });
        socket.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => socket.close(),
  };
}

/** Sums a V8 heap snapshot's nodes by kind, and objects and closures by constructor or function name. */
export function summariseSnapshot(text: string): Record<string, { count: number; self_bytes: number }> {
  const snapshot = JSON.parse(text) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const width = fields.length;
  const type_at = fields.indexOf('type');
  const name_at = fields.indexOf('name');
  const size_at = fields.indexOf('self_size');
  const types = snapshot.snapshot.meta.node_types[0];
  const sums = new Map<string, { count: number; self_bytes: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + type_at]!]!;
    const named = type === 'object' || type === 'closure' || type === 'native';
    const key = named ? `${type}:${snapshot.strings[snapshot.nodes[i + name_at]!]!.slice(0, 60)}` : type;
    const sum = sums.get(key) ?? { count: 0, self_bytes: 0 };
    sum.count += 1;
    sum.self_bytes += snapshot.nodes[i + size_at]!;
    sums.set(key, sum);
  }
  return Object.fromEntries([...sums].sort((a, b) => b[1].self_bytes - a[1].self_bytes).slice(0, SUMMARY_ROWS_MAX));
}

/** Sums /proc/PID/smaps' Rss by what each mapping is. */
function residentByMapping(pid: number): HeapProbe['resident_mb'] {
  const sums = { brk_heap: 0, anonymous: 0, files: 0, other: 0 };
  let current: keyof typeof sums = 'other';
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const name = header[1]!.trim();
      current = name === '[heap]' ? 'brk_heap' : name === '' ? 'anonymous' : name.startsWith('/') ? 'files' : 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) sums[current] += Number(rss[1]) / 1024;
  }
  return sums;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** Collects, measures and snapshots the gateway's heap; the gateway pauses for the snapshot (a second or two). */
export async function probeHeap(pid: number, at_s: number, options: { snapshot: boolean }): Promise<HeapProbe> {
  const rss_before_gc_mb = rssMb(pid);
  const connection = await openInspector(pid);
  try {
    await connection.call('HeapProfiler.enable');
    // Twice: the first full collection can leave objects that only a second one frees (weak callbacks).
    await connection.call('HeapProfiler.collectGarbage');
    await connection.call('HeapProfiler.collectGarbage');
    const evaluated = await connection.call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    const after_gc = JSON.parse((evaluated.result as { value: string }).value) as MemoryUsage;
    const resident_mb = residentByMapping(pid);
    // A snapshot costs the gateway tens of MB of native memory that glibc keeps afterwards, so it
    // would raise the RSS it is meant to explain: only the last probe takes one.
    if (!options.snapshot) return { at_s, after_gc, rss_before_gc_mb, by_kind: {}, snapshot_ms: 0, resident_mb };
    const started = Date.now();
    await connection.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    const snapshot_ms = Date.now() - started;
    const by_kind = summariseSnapshot(connection.chunks.join(''));
    await connection.call('HeapProfiler.disable');
    return { at_s, after_gc, rss_before_gc_mb, by_kind, snapshot_ms, resident_mb };
  } finally {
    connection.close();
  }
}

/** What grew between two probes' snapshots, largest growth first. */
export function heapGrowth(first: HeapProbe, last: HeapProbe, rows: number): { key: string; count: number; self_bytes: number }[] {
  const keys = new Set([...Object.keys(first.by_kind), ...Object.keys(last.by_kind)]);
  return [...keys]
    .map((key) => ({
      key,
      count: (last.by_kind[key]?.count ?? 0) - (first.by_kind[key]?.count ?? 0),
      self_bytes: (last.by_kind[key]?.self_bytes ?? 0) - (first.by_kind[key]?.self_bytes ?? 0),
    }))
    .sort((a, b) => b.self_bytes - a.self_bytes)
    .slice(0, rows);
}

/** A snapshot's largest kinds of live objects. */
export function largestKinds(probe: HeapProbe, rows: number): { key: string; count: number; self_bytes: number }[] {
  return Object.entries(probe.by_kind)
    .map(([key, sum]) => ({ key, ...sum }))
    .sort((a, b) => b.self_bytes - a.self_bytes)
    .slice(0, rows);
}
