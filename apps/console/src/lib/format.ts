// Number formatting for operators: a missing value is an em dash, never 0.

export const MISSING = '—';

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return MISSING;
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  if (ms === 0) return '0 ms';
  return `${ms.toFixed(2)} ms`;
}

export function formatPercent(ratio: number | null | undefined, digits = 1): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return MISSING;
  return `${(ratio * 100).toFixed(digits)}%`;
}

export function formatRatio(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return MISSING;
  return value.toFixed(digits);
}

export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return MISSING;
  const abs = Math.abs(usd);
  if (abs >= 1000) return `$${usd.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
  if (abs >= 1) return `$${usd.toFixed(2)}`;
  if (abs >= 0.01) return `$${usd.toFixed(3)}`;
  if (abs === 0) return '$0';
  return `$${usd.toPrecision(2)}`;
}

export function formatNumber(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return MISSING;
  const abs = Math.abs(value);
  if (abs >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (abs >= 10_000) return `${(value / 1000).toFixed(1)}k`;
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toFixed(abs >= 100 ? 0 : digits);
}

export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return MISSING;
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function formatDateTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return MISSING;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) return String(value);
  return new Date(ms).toLocaleString([], {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** Formats a value in a unit used by signals and dashboards: ms, $, %, ratio, or plain. */
export function formatWithUnit(
  value: number | null | undefined,
  unit: string | undefined,
  decimals?: number,
): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return MISSING;
  switch (unit) {
    case 'ms':
      return formatMs(value);
    case '$':
    case 'usd':
      return formatUsd(value);
    case '%':
      return formatPercent(value, decimals ?? 1);
    default: {
      const text = decimals === undefined ? formatNumber(value) : value.toFixed(decimals);
      return unit ? `${text} ${unit}` : text;
    }
  }
}

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/** Bytes in binary units (DuckDB's blocks and files are powers of two): `512 B`, `1.5 MiB`, `12 GiB`. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return MISSING;
  if (Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes;
  let unit: (typeof BYTE_UNITS)[number] = 'KiB';
  for (const next of BYTE_UNITS) {
    value /= 1024;
    unit = next;
    if (Math.abs(value) < 1024) break;
  }
  return `${value.toFixed(Math.abs(value) >= 100 ? 0 : 1)} ${unit}`;
}

/** An exact count with thousands separators (row counts an operator compares with SQL). */
export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return MISSING;
  return value.toLocaleString('en-US');
}

/** A retention TTL: 0 keeps forever; under an hour in minutes, whole days in days. */
export function formatTtlHours(hours: number | null | undefined): string {
  if (hours === null || hours === undefined || !Number.isFinite(hours)) return MISSING;
  if (hours <= 0) return 'forever';
  if (hours < 1) return `${Math.round(hours * 60)} min`;
  if (hours >= 24 && hours % 24 === 0) return `${hours / 24} d`;
  return `${Number.isInteger(hours) ? hours : hours.toFixed(1)} h`;
}
