// Prometheus text exposition format 0.0.4: one `# HELP` and `# TYPE` per family, samples
// `name{label="value"} number`, label values escaped (\\, \", \n), help text escaped (\\, \n).
// A family appears once however many samples it has; a sample without a value is left out
// (Prometheus reads an absent series as "no data", which is what null means here).

export type PrometheusType = 'gauge' | 'counter' | 'summary' | 'histogram' | 'untyped';

/** The extra series of a histogram (`_bucket` with `le`, `_sum`, `_count`) or a summary (`_sum`, `_count`). */
export type PrometheusSuffix = '_bucket' | '_sum' | '_count';

export interface PrometheusFamily {
  sample(
    labels: Readonly<Record<string, string | number | null | undefined>>,
    value: number | null | undefined,
    suffix?: PrometheusSuffix,
  ): void;
}

export interface PrometheusText {
  family(name: string, type: PrometheusType, help: string): PrometheusFamily;
  /** The exposition, ending in a newline; families without samples are omitted. */
  toString(): string;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function createPrometheusText(): PrometheusText {
  const families = new Map<string, { type: PrometheusType; help: string; lines: string[] }>();
  return {
    family(name, type, help) {
      if (!METRIC_NAME.test(name)) throw new Error(`invalid Prometheus metric name "${name}"`);
      let family = families.get(name);
      if (!family) {
        family = { type, help, lines: [] };
        families.set(name, family);
      } else if (family.type !== type) {
        throw new Error(`metric family ${name} declared as ${family.type} and ${type}`);
      }
      const lines = family.lines;
      return {
        sample(labels, value, suffix) {
          if (
            suffix !== undefined &&
            !(type === 'histogram' || (type === 'summary' && suffix !== '_bucket'))
          ) {
            throw new Error(`${name}: a ${type} has no ${suffix} series`);
          }
          if (value === null || value === undefined || Number.isNaN(value)) return;
          const parts: string[] = [];
          for (const [label, v] of Object.entries(labels)) {
            if (!LABEL_NAME.test(label) || label.startsWith('__'))
              throw new Error(`invalid Prometheus label name "${label}"`);
            if (v === null || v === undefined || v === '') continue;
            parts.push(`${label}="${escapeLabelValue(String(v))}"`);
          }
          lines.push(
            `${name}${suffix ?? ''}${parts.length > 0 ? `{${parts.join(',')}}` : ''} ${formatValue(value)}`,
          );
        },
      };
    },
    toString() {
      let out = '';
      for (const [name, family] of families) {
        if (family.lines.length === 0) continue;
        out += `# HELP ${name} ${escapeHelp(family.help)}\n# TYPE ${name} ${family.type}\n${family.lines.join('\n')}\n`;
      }
      return out;
    },
  };
}

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
