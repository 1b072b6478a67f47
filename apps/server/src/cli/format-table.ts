/** Renders rows as an aligned text table for the terminal. */
export function formatTable(columns: readonly string[], rows: readonly unknown[][]): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const text = rows.map((r) => r.map(cell).map((s) => (s.length > 60 ? `${s.slice(0, 57)}...` : s)));
  const widths = columns.map((c, i) => Math.max(c.length, ...text.map((r) => r[i]?.length ?? 0)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...text.map(line)].join('\n');
}
