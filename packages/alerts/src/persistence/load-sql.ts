import { readFileSync } from 'node:fs';

/**
 * Reads a `.sql` file of named statements, each introduced by a `-- name: camelCaseName` line
 * (the sqlc/yesql convention), so SQL stays in .sql files next to the code that runs it.
 */
export function loadSqlStatements<Name extends string>(
  url: URL,
  names: readonly Name[],
): Record<Name, string> {
  const text = readFileSync(url, 'utf8');
  const found: Record<string, string> = {};
  let current: string | null = null;
  let lines: string[] = [];
  const finish = () => {
    if (current !== null) found[current] = lines.join('\n').trim().replace(/;$/, '');
  };
  for (const line of text.split('\n')) {
    const m = /^--\s*name:\s*(\w+)\s*$/.exec(line);
    if (m) {
      finish();
      current = m[1]!;
      lines = [];
    } else if (current !== null) {
      lines.push(line);
    }
  }
  finish();
  const out = {} as Record<Name, string>;
  for (const name of names) {
    const sql = found[name];
    if (!sql) throw new Error(`${url.pathname}: no statement named ${name}`);
    out[name] = sql;
  }
  return out;
}
