// The parts of bench/RESULTS.md that one BENCH_ONLY part writes alone (issue 29: `live`, `soak`):
// each between its own begin and end markers, above the hand-written notes. A full
// `npm run bench` writes them all with the rest of the file; `BENCH_ONLY=live` (or `soak`)
// rewrites its own section in place and leaves everything else as it is, so the ten-minute soak
// can be run again without the other rows, and the other rows without it.
import os from 'node:os';
import { fmt, type Row, type Target } from './harness.js';

export type SectionName = 'live' | 'soak';

const begin = (name: SectionName) => `<!-- bench:${name} begins: written by npm run bench; BENCH_ONLY=${name} rewrites it alone -->`;
const end = (name: SectionName) => `<!-- bench:${name} ends -->`;

/** The machine's state when a section's runs began and ended, for its heading. */
export interface RunContext {
  readonly started_at: Date;
  readonly load_before: number;
  readonly detail: string;
}

export function runContext(detail: string): RunContext {
  return { started_at: new Date(), load_before: os.loadavg()[0]!, detail };
}

export function rowsTable(rows: readonly Row[]): string[] {
  return [
    '| run | requests/s | p50 ms | p99 ms | CPU ms/req | peak RSS MB | answers |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${Math.round(r.rps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.cpu_ms === null ? '' : r.cpu_ms.toFixed(2)} | ${r.rss_mb ?? ''} | ${r.note} |`,
    ),
  ];
}

export function targetsTable(targets: readonly Target[]): string[] {
  return [
    '| target | measured | met |',
    '|---|---|---|',
    ...targets.map((t) => `| ${t.target} | ${t.measured} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} |`),
  ];
}

/** A section with its markers: heading, when and on what machine, then `body`. */
export function section(name: SectionName, title: string, context: RunContext, body: readonly string[]): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return [
    begin(name),
    `## ${title}`,
    '',
    `Written by \`npm run bench\` on ${context.started_at.toISOString().slice(0, 16).replace('T', ' ')} UTC; ${cpu}, ${os.cpus().length} cores, Node ${process.version}; ${context.detail}; load average (1 min) ${context.load_before.toFixed(2)} before these runs, ${os.loadavg()[0]!.toFixed(2)} after them.`,
    '',
    ...body,
    end(name),
  ].join('\n');
}

/**
 * `text` with the section `name` replaced by `content` (a whole section, markers included); a
 * section not there yet goes just before `marker` (the hand-written notes), or at the end.
 */
export function withSection(text: string, name: SectionName, content: string, marker: string): string {
  const from = text.indexOf(begin(name));
  const to = text.indexOf(end(name));
  if (from !== -1 && to > from) return text.slice(0, from) + content + text.slice(to + end(name).length);
  const at = text.indexOf(marker);
  if (at === -1) return `${text.replace(/\n*$/, '\n\n')}${content}\n`;
  return `${text.slice(0, at)}${content}\n\n${text.slice(at)}`;
}
