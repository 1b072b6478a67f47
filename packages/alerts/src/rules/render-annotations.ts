import type { Labels } from '../labels.ts';

/** `{{ $value }}`, `{{ $threshold }}`, `{{ $labels.pool }}`…; an unknown name is left as written. */
export function renderAnnotations(
  templates: Record<string, string>,
  labels: Labels,
  values: Record<string, number | string | null>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(templates)) {
    out[name] = template.replace(
      /\{\{\s*\$([a-zA-Z_]\w*)(?:\.([a-zA-Z_]\w*))?\s*\}\}/g,
      (whole, key: string, sub: string | undefined) => {
        if (key === 'labels' && sub !== undefined) return labels[sub] ?? '';
        if (sub === undefined && key in values) return formatValue(values[key] ?? null);
        return whole;
      },
    );
  }
  return out;
}

/** Four significant digits, no exponent for everyday magnitudes. */
export function formatValue(value: number | string | null): string {
  if (value === null) return 'n/a';
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(4)));
}
