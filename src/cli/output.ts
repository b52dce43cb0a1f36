// How the CLI's list commands print (issue 30): a table a person reads by default, one JSON
// object a line with --json for a script. Apart so every list prints alike.

/** Columns padded to their widest cell; the last one is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

/**
 * Prints a list: JSON lines with `json`, else a table; an empty list prints nothing on stdout and
 * `empty` on stderr (a table without rows would read as a header to parse).
 */
export function printList<T>(
  items: readonly T[],
  options: {
    readonly json: boolean;
    readonly headers: readonly string[];
    readonly row: (item: T) => readonly string[];
    readonly empty: string;
  },
): void {
  if (options.json) {
    for (const item of items) process.stdout.write(`${JSON.stringify(item)}\n`);
    return;
  }
  if (items.length === 0) {
    process.stderr.write(`paygate: ${options.empty}\n`);
    return;
  }
  process.stdout.write(table(options.headers, items.map(options.row)));
}

/** A time as the tables show it: UTC, to the second. */
export function utc(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
