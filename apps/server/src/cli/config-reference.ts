import { GovernorConfig } from '@governor/conventions';
import { z } from 'zod';
import { ENV_OVERRIDES } from '../load-config.ts';

// The configuration reference, generated from the zod schema (GovernorConfig) through its JSON
// Schema: docs/config.md (scripts/gen-config-docs.ts) and `governor config print-defaults` both come
// from listConfigKeys(), so neither can drift from what `governor config check` accepts.

interface JsonSchema {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
}

/** One key of the YAML file. */
export interface ConfigKey {
  /** Dotted path; `[]` marks the items of a list, e.g. `pools[].match`. */
  path: string;
  /** The top-level key it belongs to, e.g. `alerts`. */
  section: string;
  /** For the items of a list with several shapes (alert rules): the `type` that selects this shape. */
  variant?: string;
  /** Nesting below the section (0 for a top-level key). */
  depth: number;
  type: string;
  /** Whether the key must be given (no default, not optional). */
  required: boolean;
  /** The default when the key is left out; `undefined` when there is none. */
  default?: unknown;
  hasDefault: boolean;
  description: string;
  /** The one value a discriminator key (`type` of an alert rule) takes. */
  constant?: unknown;
  /** An object whose keys follow (its own default is theirs). */
  isObject: boolean;
  /** A list of objects whose item keys follow as `path[].key`. */
  isObjectList: boolean;
}

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

function configJsonSchema(): JsonSchema {
  return z.toJSONSchema(GovernorConfig, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
}

/** Every key GovernorConfig accepts, in schema order; throws if one has no description. */
export function listConfigKeys(): ConfigKey[] {
  const keys: ConfigKey[] = [];
  const root = configJsonSchema();
  for (const [name, schema] of Object.entries(root.properties ?? {})) {
    walkKey(keys, { path: name, section: name, depth: 0, required: isRequired(root, name, schema) }, schema);
  }
  const missing = keys
    .filter((k) => k.description === '')
    .map((k) => k.path + (k.variant ? ` (${k.variant})` : ''));
  if (missing.length > 0) {
    throw new Error(
      `config keys without a description (add .describe() in the schema): ${missing.join(', ')}`,
    );
  }
  return keys;
}

interface KeyPlace {
  path: string;
  section: string;
  variant?: string;
  depth: number;
  required: boolean;
}

function walkKey(keys: ConfigKey[], place: KeyPlace, schema: JsonSchema): void {
  const value = nonNull(schema);
  const items = value.type === 'array' ? value.items : undefined;
  const itemShapes = items ? objectShapes(items) : [];
  const isObject = value.type === 'object' && value.properties !== undefined;
  keys.push({
    ...place,
    type: describeType(schema),
    hasDefault: 'default' in schema,
    ...('default' in schema ? { default: schema.default } : {}),
    required: place.required && !('default' in schema),
    description: schema.description ?? items?.description ?? '',
    ...(value.const === undefined ? {} : { constant: value.const }),
    isObject,
    isObjectList: itemShapes.length > 0,
  });
  if (isObject) walkObject(keys, place, value, `${place.path}.`);
  for (const shape of itemShapes) {
    const variant = itemShapes.length > 1 ? variantOf(shape) : place.variant;
    walkObject(keys, { ...place, ...(variant === undefined ? {} : { variant }) }, shape, `${place.path}[].`);
  }
}

function walkObject(keys: ConfigKey[], place: KeyPlace, object: JsonSchema, prefix: string): void {
  for (const [name, schema] of Object.entries(object.properties ?? {})) {
    walkKey(
      keys,
      { ...place, path: prefix + name, depth: place.depth + 1, required: isRequired(object, name, schema) },
      schema,
    );
  }
}

function isRequired(parent: JsonSchema, name: string, schema: JsonSchema): boolean {
  return (parent.required ?? []).includes(name) && !('default' in schema);
}

/** `X | null` is documented as X ("or null" in the type). */
function nonNull(schema: JsonSchema): JsonSchema {
  const options = schema.anyOf?.filter((s) => s.type !== 'null');
  return options?.length === 1 ? { ...options[0], ...withoutAnyOf(schema) } : schema;
}

function withoutAnyOf(schema: JsonSchema): JsonSchema {
  const { anyOf: _anyOf, ...rest } = schema;
  return rest;
}

/** The object shapes of a list's items: one, or one per variant of a discriminated union. */
function objectShapes(items: JsonSchema): JsonSchema[] {
  const options = items.oneOf ?? items.anyOf;
  if (options) return options.filter((o) => o.type === 'object' && o.properties);
  return items.type === 'object' && items.properties ? [items] : [];
}

function variantOf(shape: JsonSchema): string {
  const type = shape.properties?.type?.const;
  return typeof type === 'string' ? `type: ${type}` : 'variant';
}

/** A short type: `integer, 0–65535`, `number > 0`, `one of watermark, lockstep`, `map of string → number ≥ 0`. */
export function describeType(schema: JsonSchema): string {
  if (schema.anyOf) {
    const nullable = schema.anyOf.some((s) => s.type === 'null');
    const rest = schema.anyOf.filter((s) => s.type !== 'null').map(describeType);
    return rest.join(' or ') + (nullable ? ' or null' : '');
  }
  if (schema.oneOf) return schema.oneOf.map(describeType).join(' or ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return `one of ${schema.enum.join(', ')}`;
  switch (schema.type) {
    case 'string':
      return schema.format === 'uri' ? 'URL' : 'string';
    case 'boolean':
      return 'boolean';
    case 'integer':
    case 'number':
      return schema.type + describeRange(schema);
    case 'array': {
      const items = schema.items ?? {};
      const shapes = objectShapes(items);
      const atLeast = schema.minItems ? ` (at least ${schema.minItems})` : '';
      if (shapes.length > 1) return `list of objects, by type${atLeast}`;
      if (shapes.length === 1) return `list of objects${atLeast}`;
      return `list of ${describeType(items)}${atLeast}`;
    }
    case 'object': {
      if (schema.properties) return 'object';
      const values = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {};
      return `map of string → ${describeType(values)}`;
    }
    default:
      return 'any';
  }
}

function describeRange(schema: JsonSchema): string {
  const lower =
    schema.exclusiveMinimum !== undefined
      ? { op: '>', value: schema.exclusiveMinimum }
      : schema.minimum !== undefined
        ? { op: '≥', value: schema.minimum }
        : null;
  const upper =
    schema.exclusiveMaximum !== undefined
      ? { op: '<', value: schema.exclusiveMaximum }
      : schema.maximum !== undefined && schema.maximum < SAFE_INTEGER
        ? { op: '≤', value: schema.maximum }
        : null;
  if (lower?.op === '≥' && upper?.op === '≤') return `, ${lower.value}–${upper.value}`;
  return [lower, upper]
    .filter((b) => b !== null)
    .map((b, i) => `${i === 0 ? ' ' : ', '}${b.op} ${b.value}`)
    .join('');
}

// --- docs/config.md ----------------------------------------------------------------------------

const DOC_HEADER = `# Configuration reference

<!-- Generated from the zod schema in packages/conventions/src/config/ by scripts/gen-config-docs.ts
     (pnpm docs:config). Do not edit by hand: change the schema's .describe() texts and regenerate;
     apps/server/src/cli/config-reference.test.ts fails while the two disagree. -->

Governor reads one YAML file, \`governor start --config governor.yaml\`. Keys are snake_case; every key
is optional unless marked required, and an unknown key is an error. \`governor config check FILE\`
validates a file (one \`file:line\` message per problem) and \`governor config print-defaults\` prints
every key below with its default, as YAML with the meanings as comments. Durations are strings such
as \`30s\`, \`5m\` or \`1h30m\`.
`;

/** The Markdown page: environment overrides, then one table per top-level key. */
export function renderConfigMarkdown(keys: readonly ConfigKey[] = listConfigKeys()): string {
  const parts = [DOC_HEADER, renderEnvOverrides()];
  const sections = [...new Set(keys.map((k) => k.section))];
  parts.push(`## Sections\n\n${sections.map((s) => `- [\`${s}\`](#${s})`).join('\n')}\n`);
  for (const section of sections) {
    const inSection = keys.filter((k) => k.section === section);
    const top = inSection[0]!;
    const lines = [`## ${section}`, '', `${escapeText(top.description)}`, ''];
    const groups = groupByVariant(inSection.slice(1));
    if (groups.length === 0) {
      lines.push(renderTable([top]));
    } else {
      if (!top.isObject && !top.isObjectList) lines.push(renderTable([top]), '');
      else if (top.isObjectList) lines.push(`A ${top.type}; default: ${formatDefault(top)}.`, '');
      for (const [variant, rows] of groups) {
        const list = rows[0]!.path.slice(0, rows[0]!.path.indexOf('[]') + 2);
        if (variant) lines.push(`### \`${list}\` items with \`${variant}\``, '');
        lines.push(renderTable(rows), '');
      }
    }
    parts.push(`${lines.join('\n').trimEnd()}\n`);
  }
  return `${parts.join('\n').trimEnd()}\n`;
}

function groupByVariant(keys: readonly ConfigKey[]): [string | undefined, ConfigKey[]][] {
  const groups = new Map<string | undefined, ConfigKey[]>();
  for (const key of keys) {
    const list = groups.get(key.variant) ?? [];
    list.push(key);
    groups.set(key.variant, list);
  }
  return [...groups];
}

function renderEnvOverrides(): string {
  const rows = ENV_OVERRIDES.map(([variable, path]) => [`\`${variable}\``, `\`${path.join('.')}\``]);
  return `## Environment overrides

A \`GOVERNOR_*\` variable overrides one key of the file (docs/operations.md has the others, such as
\`GOVERNOR_TOKENS\` and \`GOVERNOR_LOG_LEVEL\`):

${formatTable(['variable', 'key'], rows)}
`;
}

function renderTable(keys: readonly ConfigKey[]): string {
  const rows = keys.map((k) => [
    `\`${k.path}\``,
    escapeText(k.type),
    k.required ? '**required**' : formatDefault(k),
    escapeText(k.description),
  ]);
  return formatTable(['key', 'type', 'default', 'meaning'], rows);
}

function formatDefault(key: ConfigKey): string {
  if (key.isObject) return 'see its keys';
  if (!key.hasDefault) return 'unset';
  return `\`${JSON.stringify(key.default)}\``;
}

/** Plain text in a table cell: `|` would end the cell and `*` start emphasis. */
function escapeText(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('*', '\\*').replaceAll('\n', ' ');
}

/** A Markdown table padded the way Biome formats one, so the generated page passes `biome check`. */
function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c + ' '.repeat(widths[i]! - [...c].length)).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

// --- governor config print-defaults --------------------------------------------------------------

/**
 * A complete governor.yaml: every key with its default and its meaning as a comment. A key without
 * a default, and the keys of list items (lists default to empty), are commented out with their type,
 * so the file parses to exactly the defaults and shows what each list item may hold.
 */
export function renderDefaultsYaml(keys: readonly ConfigKey[] = listConfigKeys()): string {
  const out = [
    '# Governor configuration with every key at its default (governor config print-defaults).',
    '# Commented-out keys have no default or belong to list items; docs/config.md explains each one.',
  ];
  let previous: ConfigKey | undefined;
  // An optional section without a default (store.clickhouse) is written commented out, keys and
  // all: its defaults alone would make a section that lacks its required keys.
  let commentedOut: string | null = null;
  for (const key of keys) {
    if (key.depth === 0) out.push('');
    if (commentedOut !== null && !key.path.startsWith(commentedOut)) commentedOut = null;
    if (commentedOut === null && key.isObject && !key.hasDefault && !key.required && !key.path.includes('[]'))
      commentedOut = `${key.path}.`;
    const name = key.path.slice(key.path.lastIndexOf(key.path.endsWith(']') ? '[' : '.') + 1);
    const inList = key.path.includes('[]');
    const startsItem =
      inList &&
      (previous?.isObjectList === true && key.path.startsWith(`${previous.path}[].`)
        ? true
        : previous?.variant !== key.variant && key.variant !== undefined);
    const column = '  '.repeat(key.depth);
    const commentColumn = inList ? `# ${column}  ` : column;
    if (startsItem && key.variant !== undefined && key.variant !== previous?.variant)
      out.push(`# ${column}# items with ${key.variant}:`);
    for (const line of wrap(key.description, 98 - commentColumn.length))
      out.push(`${commentColumn}# ${line}`);
    const value = key.isObject
      ? inList || hasPrintedChild(keys, key)
        ? ''
        : ' {}'
      : key.hasDefault || key.constant !== undefined
        ? ` ${formatYamlValue(key.hasDefault ? key.default : key.constant)}`
        : ` <${key.type}>${key.required ? ' (required)' : ''}`;
    if (inList) out.push(`# ${column}${startsItem ? '- ' : '  '}${name}:${value}`);
    else if (commentedOut !== null) out.push(`${column}# ${name}:${key.isObject ? '' : value}`);
    else if (key.hasDefault || key.isObject) out.push(`${column}${name}:${value}`);
    else out.push(`${column}# ${name}:${value}`);
    previous = key;
  }
  return `${out.join('\n')}\n`;
}

/** Whether an object key has a child printed as YAML (else it is written `{}`, not left null). */
function hasPrintedChild(keys: readonly ConfigKey[], parent: ConfigKey): boolean {
  return keys.some(
    (k) =>
      k.path.startsWith(`${parent.path}.`) &&
      !k.path.includes('[]', parent.path.length) &&
      (k.hasDefault || k.isObject),
  );
}

function formatYamlValue(value: unknown): string {
  // JSON is YAML 1.2 flow syntax: strings quoted, lists and maps in brackets.
  return JSON.stringify(value);
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/)) {
    if (current && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) lines.push(current);
  return lines;
}
