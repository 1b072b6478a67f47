import {
  GROUP_DIMENSIONS,
  type GovernorConfig,
  type GroupDimension,
  MAX_SIGNAL_GROUPS,
} from '@governor/conventions';

/** A gauge value holds at most this long after its timestamp (Prometheus' default lookback). */
export const GAUGE_STALE_NS = 5n * 60n * 1_000_000_000n;

export interface WindowSpec {
  fromNs: bigint;
  toNs: bigint;
  stepNs: bigint;
  by: readonly GroupDimension[];
  filter: Partial<Record<GroupDimension, string>>;
  /** Incomplete tasks that ended after this (newest event − lateness) are pending. */
  pendingAfterNs: bigint;
}

export type ParamValue = string | number | bigint | boolean | null;

/** Every parameter the window queries may use; each query picks the ones it names. */
export function buildWindowParams(spec: WindowSpec, config: GovernorConfig): Record<string, ParamValue> {
  const params: Record<string, ParamValue> = {
    from_ns: spec.fromNs,
    to_ns: spec.toNs,
    step_ns: spec.stepNs,
    stale_ns: GAUGE_STALE_NS,
    pending_after_ns: spec.pendingAfterNs,
    slo_ttft_ms: config.slo.ttft_ms ?? null,
    slo_e2e_ms: config.slo.e2e_ms ?? null,
    // The pools whose config fills in a dimension their spans lack. Only model, region and GPU type
    // are filled in: when no grouping or filter reads them, the list is empty and the join is free.
    pools_json: configPoolsJson(readsConfigDimensions(spec) ? config.pools : []),
    min_minutes: 5,
    max_groups: MAX_SIGNAL_GROUPS,
  };
  for (const dim of GROUP_DIMENSIONS) {
    params[`by_${dim}`] = spec.by.includes(dim);
    params[`f_${dim}`] = spec.filter[dim] ?? null;
  }
  return params;
}

const CONFIG_DIMENSIONS: readonly GroupDimension[] = ['model', 'region', 'gpu_type'];

/**
 * The config's pools as config-pools.sql reads them. The window queries pass only those they need
 * (none when no grouping or filter reads a config dimension); lists of requests and tasks show every
 * request's model, region and GPU type, so they pass all of them.
 */
export function configPoolsJson(pools: GovernorConfig['pools']): string {
  return JSON.stringify(
    pools.map((p) => ({
      name: p.name,
      gpu_type: p.gpu_type ?? null,
      model: p.model ?? null,
      region: p.region ?? null,
      gpus_per_replica: p.gpus_per_replica,
      peak_tokens_per_s: p.peak_tokens_per_s_per_replica ?? null,
    })),
  );
}

function readsConfigDimensions(spec: WindowSpec): boolean {
  return CONFIG_DIMENSIONS.some((d) => spec.by.includes(d) || spec.filter[d] !== undefined);
}

/**
 * Writes the grouping flags and absent filters of a window query as literals, so DuckDB folds the
 * key and filter expressions away instead of evaluating them per row; only booleans and NULL are
 * written, every filter value stays a parameter.
 */
export function foldWindowFlags(sql: string, params: Readonly<Record<string, ParamValue>>): string {
  return sql.replace(/\$((?:by|f)_[a-z_]+)\b/g, (match, name: string) => {
    const value = params[name];
    if (typeof value === 'boolean') return String(value);
    if (value === null && name.startsWith('f_')) return 'NULL';
    return match;
  });
}
