// A strict reader of the Prometheus text exposition format 0.0.4, for tests: it throws on anything
// Prometheus would reject or that the format forbids (bad names, bad escapes, a TYPE after its
// samples, a family split in two, duplicate series, summary samples without `quantile`…).

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedFamily {
  name: string;
  type: string;
  help: string | null;
  samples: ParsedSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, ParsedFamily> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, ParsedFamily>();
  const closed = new Set<string>();
  const seenSeries = new Set<string>();
  let current: string | null = null;
  const familyOf = (sampleName: string): string => {
    for (const suffix of ['_sum', '_count', '_bucket']) {
      if (sampleName.endsWith(suffix)) {
        const base = sampleName.slice(0, -suffix.length);
        const f = families.get(base);
        if (f && (f.type === 'summary' || f.type === 'histogram')) return base;
      }
    }
    return sampleName;
  };
  const open = (name: string): ParsedFamily => {
    if (current !== name) {
      if (closed.has(name)) throw new Error(`family ${name} appears in two places`);
      if (current !== null) closed.add(current);
      current = name;
    }
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: null, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  text.split('\n').forEach((line, index) => {
    const where = `line ${index + 1}: ${line}`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest = ''] = m;
      if (!NAME.test(name!)) throw new Error(`invalid metric name in ${where}`);
      const f = open(name!);
      if (kind === 'HELP') {
        if (f.help !== null) throw new Error(`second HELP for ${name} at ${where}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`invalid escape in HELP at ${where}`);
        f.help = rest;
      } else {
        if (!TYPES.has(rest)) throw new Error(`unknown type in ${where}`);
        if (f.samples.length > 0) throw new Error(`TYPE after samples at ${where}`);
        if (f.type !== 'untyped' && f.type !== rest) throw new Error(`second TYPE for ${name} at ${where}`);
        f.type = rest;
      }
      return;
    }
    const sample = parseSampleLine(line, where);
    const family = open(familyOf(sample.name));
    if (family.type === 'summary' && sample.name === family.name && !('quantile' in sample.labels)) {
      throw new Error(`summary sample without quantile at ${where}`);
    }
    const id = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seenSeries.has(id)) throw new Error(`duplicate series at ${where}`);
    seenSeries.add(id);
    family.samples.push(sample);
  });
  return families;
}

function parseSampleLine(line: string, where: string): ParsedSample {
  let i = 0;
  while (i < line.length && /[a-zA-Z0-9_:]/.test(line[i]!)) i++;
  const name = line.slice(0, i);
  if (!NAME.test(name)) throw new Error(`invalid metric name at ${where}`);
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      let j = i;
      while (j < line.length && /[a-zA-Z0-9_]/.test(line[j]!)) j++;
      const label = line.slice(i, j);
      if (!LABEL.test(label)) throw new Error(`invalid label name at ${where}`);
      if (label in labels) throw new Error(`duplicate label ${label} at ${where}`);
      if (line[j] !== '=' || line[j + 1] !== '"') throw new Error(`expected ="…" after ${label} at ${where}`);
      j += 2;
      let value = '';
      for (;;) {
        const c = line[j];
        if (c === undefined) throw new Error(`unterminated label value at ${where}`);
        if (c === '"') break;
        if (c === '\\') {
          const e = line[j + 1];
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else throw new Error(`invalid escape \\${e} at ${where}`);
          j += 2;
        } else {
          value += c;
          j++;
        }
      }
      labels[label] = value;
      i = j + 1;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`expected , or } at ${where}`);
    }
    i++;
  }
  const rest = line.slice(i);
  const m = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!m) throw new Error(`expected " value [timestamp]" at ${where}`);
  const raw = m[1]!;
  const value =
    raw === '+Inf'
      ? Number.POSITIVE_INFINITY
      : raw === '-Inf'
        ? Number.NEGATIVE_INFINITY
        : raw === 'NaN'
          ? Number.NaN
          : Number(raw);
  if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`invalid value at ${where}`);
  return { name, labels, value };
}
