import { readFileSync } from 'node:fs';

// Signal SQL lives in .sql files next to the module that runs it. A file may pull in a shared
// fragment with a line `-- @include name.sql` (resolved relative to the including file), which
// keeps one definition of e.g. the windowed request set without copying it between queries.

const INCLUDE = /^--\s*@include\s+([\w./-]+\.sql)\s*$/gm;

/** Reads a .sql file relative to `baseUrl` (pass `import.meta.url`), expanding `-- @include` lines. */
export function loadSql(baseUrl: string | URL, file: string, seen: readonly string[] = []): string {
  const url = new URL(file, baseUrl);
  if (seen.includes(url.href)) throw new Error(`SQL include cycle: ${[...seen, url.href].join(' → ')}`);
  const text = readFileSync(url, 'utf8');
  return text.replace(INCLUDE, (_line, name: string) => loadSql(url, name, [...seen, url.href]).trimEnd());
}
