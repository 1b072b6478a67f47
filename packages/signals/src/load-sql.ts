import { readFileSync } from 'node:fs';

// Signal SQL lives in .sql files next to the module that runs it. A file may pull in a shared
// fragment with a line `-- @include name.sql` (resolved relative to the including file), which
// keeps one definition of e.g. the windowed request set without copying it between queries.

const INCLUDE = /^--\s*@include\s+([\w./-]+\.sql)\s*$/gm;

export interface LoadSqlOptions {
  /** Fragments to include in place of others, by file name (a variant of the same query). */
  swap?: Readonly<Record<string, string>>;
}

/** Reads a .sql file relative to `baseUrl` (pass `import.meta.url`), expanding `-- @include` lines. */
export function loadSql(baseUrl: string | URL, file: string, options: LoadSqlOptions = {}): string {
  return expand(new URL(file, baseUrl), options.swap ?? {}, []);
}

function expand(url: URL, swap: Readonly<Record<string, string>>, seen: readonly string[]): string {
  if (seen.includes(url.href)) throw new Error(`SQL include cycle: ${[...seen, url.href].join(' → ')}`);
  const text = readFileSync(url, 'utf8');
  return text.replace(INCLUDE, (_line, name: string) =>
    expand(new URL(swap[name] ?? name, url), swap, [...seen, url.href]).trimEnd(),
  );
}
