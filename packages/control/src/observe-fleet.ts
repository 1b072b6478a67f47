import type { GovernorConfig, SignalGroup } from '@governor/conventions';
import type {
  EngineWork,
  EngineWorkReader,
  PrefillSpeedReader,
  RequestArrival,
  RequestArrivalsReader,
  SignalsReader,
} from '@governor/signals';

// One tick's view of the fleet: each pool's signals over the control window (steady state) and over
// a short window (what changed in the last interval or two), joined with its configuration.

export interface PoolView {
  pool: string;
  model: string | null;
  region: string | null;
  gpuType: string | null;
  /** Signals over control.window. */
  main: SignalGroup | null;
  /** Signals over the short detection window. */
  fast: SignalGroup | null;
  /**
   * Prefill ms per uncached prompt token over the short window (contention and slow GPUs raise it);
   * a request whose spans do not say what it found cached counts its whole prompt.
   */
  prefillMsPerToken: number | null;
  /**
   * Share of the prompt tokens its replicas looked up in their prefix caches over the control window
   * that they found there (vLLM's prefix cache counters, EngineWork.prefixCache); null without them.
   * The pool model reads it where spans do not say what each request found cached.
   */
  prefixHitRate: number | null;
  /** The same for the fastest tenth of long-prompt requests: load slows the typical one, a slow GPU even these. */
  fastestPrefillMsPerToken: number | null;
  /** What its engines did over the short window, from the runtime's counters; null without them. */
  engineWork: EngineWork | null;
  /** Its recent requests over the control window, in arrival order (for replaying on fewer replicas). */
  arrivals: RequestArrival[];
  /** Replicas paid for (running + starting + draining), from governor.pool.replicas. */
  replicas: number | null;
  /** Replicas serving (reporting runtime gauges); null when the fleet sends no per-replica gauges. */
  readyReplicas: number | null;
  minReplicas: number;
  maxReplicas: number | null;
  gpusPerReplica: number;
  gpuHourUsd: number | null;
  /** True when the config gives peak_tokens_per_s_per_replica, which makes compute_util a capacity measure. */
  peakConfigured: boolean;
  /** Completed requests per second over each window. */
  mainRatePerS: number;
  fastRatePerS: number;
}

/** Demand per model and priority over the short window, including requests shed at the gateway. */
export interface PriorityView {
  model: string | null;
  priority: number;
  requests: number;
  fastRatePerS: number;
  errorRate: number | null;
  retryRatio: number | null;
}

export interface FleetObservation {
  atNs: bigint;
  windowMs: number;
  fastWindowMs: number;
  /**
   * How much of the control window the store's telemetry covers (ms, ≤ windowMs): less when the
   * store began within it (a fleet or a store just started). Rates are taken over what is covered.
   */
  coveredMs: number;
  pools: PoolView[];
  priorities: PriorityView[];
}

export interface ObserveOptions {
  signals: SignalsReader;
  /** Ready replicas per pool at `atNs` (see createReadyReplicasReader in @governor/signals); omitted in tests without gauges. */
  readReadyReplicas?: (atNs: bigint) => Promise<Map<string, number>>;
  /** Prefill ms per prompt token per pool (see createPrefillSpeedReader); omitted when spans carry none. */
  readPrefillSpeed?: PrefillSpeedReader;
  /** Engine work per pool (see createEngineWorkReader); omitted when the fleet sends no runtime counters. */
  readEngineWork?: EngineWorkReader;
  /** Each pool's recent requests (see createRequestArrivalsReader); omitted when spans carry no prefill. */
  readRequestArrivals?: RequestArrivalsReader;
  config: GovernorConfig;
  atNs: bigint;
  windowMs: number;
  fastWindowMs: number;
  /**
   * A pool with fewer requests than this in the short window is judged on the control window
   * instead: a handful of requests says nothing, and a quiet pool has no fast changes to catch.
   */
  minFastRequests?: number;
  /**
   * Where the store's telemetry begins (SignalsReader.oldestEventNs; null when it holds none); a
   * window reaching further back covers only the rest. Omitted: the windows are taken as covered.
   */
  telemetryFromNs?: bigint | null;
}

export async function observeFleet(options: ObserveOptions): Promise<FleetObservation> {
  const { signals, config, atNs, windowMs, fastWindowMs } = options;
  // An optional per-pool reader over a window; nothing where the fleet does not send what it reads.
  const overWindow =
    <T>(read: ((atNs: bigint, windowMs: number) => Promise<Map<string, T>>) | undefined) =>
    (ms: number) =>
      read ? read(atNs, ms) : Promise.resolve(new Map<string, T>());
  const prefillOver = overWindow(options.readPrefillSpeed);
  const engineWorkOver = overWindow(options.readEngineWork);
  const [main, fast, priorities, ready, prefill, prefillMain, engineWork, engineWorkMain, arrivals] =
    await Promise.all([
      signals.snapshot({ windowMs, by: ['pool'], atNs }),
      signals.snapshot({ windowMs: fastWindowMs, by: ['pool'], atNs }),
      // Demand per priority needs counts only (requests, error and retry rates).
      signals.snapshot({ windowMs: fastWindowMs, by: ['model', 'priority'], atNs, countsOnly: true }),
      options.readReadyReplicas
        ? options.readReadyReplicas(atNs)
        : Promise.resolve(new Map<string, number>()),
      prefillOver(fastWindowMs),
      prefillOver(windowMs),
      engineWorkOver(fastWindowMs),
      // Over the control window too, for the prefix cache hit rate of the requests the model replays.
      engineWorkOver(windowMs),
      overWindow(options.readRequestArrivals)(windowMs),
    ]);
  const minFast = options.minFastRequests ?? 0;
  const coveredMs = coverage(options.telemetryFromNs, atNs, windowMs);
  const fastCoveredMs = Math.min(fastWindowMs, coveredMs);
  const mainByPool = indexByPool(main.groups);
  const fastByPool = indexByPool(fast.groups);
  const configured = new Map(config.pools.map((p) => [p.name, p]));
  const names = new Set<string>([...configured.keys(), ...mainByPool.keys(), ...fastByPool.keys()]);

  const missingMetadata = [...names].some((name) => {
    const pool = configured.get(name);
    return !pool?.model || !pool.region || !pool.gpu_type;
  });
  const metadata = missingMetadata
    ? await readPoolMetadata(signals, windowMs, atNs)
    : new Map<string, PoolMetadata>();

  const pools: PoolView[] = [...names].sort().map((name) => {
    const pool = configured.get(name);
    const meta = metadata.get(name);
    const mainGroup = mainByPool.get(name) ?? null;
    const shortGroup = fastByPool.get(name) ?? null;
    const quiet =
      (shortGroup?.requests ?? 0) < minFast && (mainGroup?.requests ?? 0) > (shortGroup?.requests ?? 0);
    const fastGroup = quiet ? mainGroup : shortGroup;
    const gpuType = pool?.gpu_type ?? meta?.gpuType ?? null;
    const prefixHitRate = readHitRate(engineWorkMain.get(name) ?? null);
    return {
      pool: name,
      model: pool?.model ?? meta?.model ?? null,
      region: pool?.region ?? meta?.region ?? null,
      gpuType,
      main: mainGroup,
      fast: fastGroup,
      // A time-weighted mean over the short window; replica counts are whole.
      replicas: roundOrNull(fastGroup?.replicas ?? mainGroup?.replicas ?? null),
      readyReplicas: ready.get(name) ?? null,
      prefillMsPerToken: (quiet ? prefillMain.get(name) : prefill.get(name))?.msPerToken ?? null,
      prefixHitRate,
      // The short window's own fastest requests when it has enough: the control window would mix in
      // requests from before a change.
      fastestPrefillMsPerToken:
        prefill.get(name)?.fastestMsPerToken ??
        (quiet ? prefillMain.get(name)?.fastestMsPerToken : null) ??
        null,
      engineWork: engineWork.get(name) ?? null,
      arrivals: arrivals.get(name) ?? [],
      minReplicas: pool?.min_replicas ?? 1,
      maxReplicas: pool?.max_replicas ?? null,
      gpusPerReplica: pool?.gpus_per_replica ?? 1,
      peakConfigured: pool?.peak_tokens_per_s_per_replica !== undefined,
      gpuHourUsd: gpuType
        ? (config.pricing.gpu_hour_usd[gpuType] ?? config.pricing.default_gpu_hour_usd ?? null)
        : (config.pricing.default_gpu_hour_usd ?? null),
      mainRatePerS: perSecond(mainGroup?.requests ?? 0, coveredMs),
      fastRatePerS: perSecond(fastGroup?.requests ?? 0, quiet ? coveredMs : fastCoveredMs),
    };
  });

  return {
    atNs,
    windowMs,
    fastWindowMs,
    coveredMs,
    pools,
    priorities: priorities.groups
      .filter((g) => g.key.priority !== null && g.key.priority !== undefined)
      .map((g) => ({
        model: g.key.model === null || g.key.model === undefined ? null : String(g.key.model),
        priority: Number(g.key.priority),
        requests: g.requests,
        fastRatePerS: g.requests / (fastWindowMs / 1000),
        errorRate: g.errorRate,
        retryRatio: g.retryRatio,
      }))
      .filter((p) => Number.isFinite(p.priority)),
  };
}

/** Tokens found over tokens looked up in the pool's prefix caches; null where none were looked up. */
function readHitRate(work: EngineWork | null): number | null {
  const c = work?.prefixCache;
  if (!c || !(c.queriedTokens > 0)) return null;
  return Math.min(1, Math.max(0, c.hitTokens / c.queriedTokens));
}

function indexByPool(groups: readonly SignalGroup[]): Map<string, SignalGroup> {
  const out = new Map<string, SignalGroup>();
  for (const g of groups) {
    if (g.key.pool === null || g.key.pool === undefined) continue;
    out.set(String(g.key.pool), g);
  }
  return out;
}

interface PoolMetadata {
  model: string | null;
  region: string | null;
  gpuType: string | null;
}

/** Model, region and GPU type of pools the config does not describe: the dominant value in the window. */
async function readPoolMetadata(
  signals: SignalsReader,
  windowMs: number,
  atNs: bigint,
): Promise<Map<string, PoolMetadata>> {
  const snapshot = await signals.snapshot({ windowMs, by: ['pool', 'model', 'region', 'gpu_type'], atNs });
  const best = new Map<string, { requests: number; meta: PoolMetadata }>();
  for (const g of snapshot.groups) {
    if (g.key.pool === null || g.key.pool === undefined) continue;
    const pool = String(g.key.pool);
    const current = best.get(pool);
    if (current && current.requests >= g.requests) continue;
    const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
    best.set(pool, {
      requests: g.requests,
      meta: { model: text(g.key.model), region: text(g.key.region), gpuType: text(g.key.gpu_type) },
    });
  }
  return new Map([...best].map(([pool, { meta }]) => [pool, meta]));
}

/** Request-weighted mean of a per-group rate; null when no group has both data and requests. */
export function weightedMean(
  groups: readonly (SignalGroup | null)[],
  pick: (g: SignalGroup) => number | null,
): number | null {
  let sum = 0;
  let weight = 0;
  for (const g of groups) {
    if (!g) continue;
    const v = pick(g);
    if (v === null || !Number.isFinite(v) || g.requests <= 0) continue;
    sum += v * g.requests;
    weight += g.requests;
  }
  return weight > 0 ? sum / weight : null;
}

function roundOrNull(v: number | null): number | null {
  return v === null ? null : Math.round(v);
}

/** The part of a window of `windowMs` ending at `atNs` that telemetry from `fromNs` on covers (ms). */
function coverage(fromNs: bigint | null | undefined, atNs: bigint, windowMs: number): number {
  if (fromNs === undefined) return windowMs;
  if (fromNs === null || fromNs >= atNs) return 0;
  return Math.min(windowMs, Number(atNs - fromNs) / 1e6);
}

/** A count over `ms` as a rate per second (0 over no time: nothing was seen). */
function perSecond(count: number, ms: number): number {
  return ms > 0 ? count / (ms / 1000) : 0;
}
