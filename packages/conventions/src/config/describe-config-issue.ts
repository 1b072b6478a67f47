import type { z } from 'zod';

// Turns zod's issues into what an operator can act on: an unknown key gets its own path and the
// keys allowed there (with a "did you mean"), so `server.hots` reads as a typo of `server.host`.

export interface RawIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

export interface DescribedIssue {
  path: string;
  segments: (string | number)[];
  message: string;
}

export function describeIssues(schema: z.ZodType, issues: readonly RawIssue[]): DescribedIssue[] {
  const out: DescribedIssue[] = [];
  for (const issue of issues) {
    const segments = issue.path.map((p) => (typeof p === 'number' ? p : String(p)));
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      const allowed = allowedKeysAt(schema, segments);
      for (const key of issue.keys) {
        const suggestion = allowed ? closest(key, allowed) : null;
        const hint = allowed
          ? `; ${suggestion ? `did you mean "${suggestion}"? ` : ''}allowed here: ${allowed.join(', ')}`
          : '';
        out.push({
          path: join([...segments, key]),
          segments: [...segments, key],
          message: `unknown key${hint}`,
        });
      }
      continue;
    }
    out.push({ path: join(segments), segments, message: issue.message });
  }
  return out;
}

function join(segments: readonly (string | number)[]): string {
  return segments.map(String).join('.') || '(root)';
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Keys of the object schema at `path`, or null when it is not a fixed-shape object. */
export function allowedKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] | null {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (!current) return null;
    const def = defOf(current);
    if (def.type === 'object' && typeof segment === 'string') current = def.shape?.[segment];
    else if (def.type === 'array') current = def.element;
    else if (def.type === 'record') current = def.valueType;
    else return null;
    current = current ? unwrap(current) : undefined;
  }
  if (!current) return null;
  const def = defOf(current);
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : null;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let i = 0; i < 10; i++) {
    const def = defOf(s);
    if (
      (def.type === 'default' ||
        def.type === 'optional' ||
        def.type === 'nullable' ||
        def.type === 'prefault') &&
      def.innerType
    )
      s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else break;
  }
  return s;
}

function closest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
