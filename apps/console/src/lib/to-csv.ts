// RFC 4180 CSV: fields with a comma, quote or newline are quoted, quotes doubled, CRLF rows.

function toField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv(columns: string[], rows: unknown[][]): string {
  const lines = [columns.map(toField).join(',')];
  for (const row of rows) lines.push(row.map(toField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** Starts a browser download of `text` as `fileName`. */
export function downloadText(fileName: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
