import { loadConfig } from '../load-config.ts';
import { type ParsedArgs, flagNumber, flagString } from './parse-args.ts';
import { formatTable } from './format-table.ts';

/**
 * `governor query "SQL"`: asks a running Governor (--url, default http://127.0.0.1:4318) so the
 * server keeps sole ownership of the DuckDB file.
 */
export async function runQueryCommand(args: ParsedArgs): Promise<number> {
  const sql = args.positional.join(' ').trim();
  if (!sql) {
    process.stderr.write(
      'usage: governor query "SELECT …" [--url http://127.0.0.1:4318] [--limit N] [--format table|json|csv]\n',
    );
    return 2;
  }
  const config = loadConfig(flagString(args, 'config'));
  const url = flagString(args, 'url') ?? `http://${config.server.host}:${config.server.http_port}`;
  const limit = flagNumber(args, 'limit') ?? 1000;
  const format = flagString(args, 'format') ?? 'table';
  let response: Response;
  try {
    response = await fetch(`${url}/api/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeader() },
      body: JSON.stringify({ sql, limit }),
    });
  } catch (error) {
    process.stderr.write(
      `cannot reach Governor at ${url} (${(error as Error).message}). Start it with \`pnpm governor start\` or pass --url.\n`,
    );
    return 1;
  }
  const body = (await response.json()) as {
    columns?: { name: string }[];
    rows?: unknown[][];
    truncated?: boolean;
    elapsedMs?: number;
    error?: { code: string; message: string };
  };
  if (!response.ok || !body.columns || !body.rows) {
    process.stderr.write(
      `query failed (${body.error?.code ?? response.status}): ${body.error?.message ?? 'unknown error'}\n`,
    );
    return 1;
  }
  const names = body.columns.map((c) => c.name);
  if (format === 'json')
    process.stdout.write(`${JSON.stringify({ columns: body.columns, rows: body.rows })}\n`);
  else if (format === 'csv') {
    const esc = (v: unknown) => {
      const s = v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
    };
    process.stdout.write(
      `${names.map(esc).join(',')}\n${body.rows.map((r) => r.map(esc).join(',')).join('\n')}\n`,
    );
  } else {
    process.stdout.write(`${formatTable(names, body.rows)}\n`);
    process.stdout.write(
      `(${body.rows.length} row${body.rows.length === 1 ? '' : 's'}${body.truncated ? `, truncated at ${limit}` : ''}, ${body.elapsedMs?.toFixed(1)} ms)\n`,
    );
  }
  return 0;
}

function authHeader(): Record<string, string> {
  const token = process.env.GOVERNOR_TOKEN;
  return token ? { authorization: `Bearer ${token}` } : {};
}
