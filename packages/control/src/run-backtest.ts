import type { GovernorConfig, Recommendation } from '@governor/conventions';
import type {
  EngineWorkReader,
  PrefillSpeedReader,
  RequestArrivalsReader,
  SignalsReader,
} from '@governor/signals';
import { createControlEngine } from './engine/create-control-engine.ts';
import { createMemoryRepository } from './state/create-memory-repository.ts';
import { secondsToNs } from './time.ts';

// Replays the control loop over stored history: a tick at every control interval from `fromNs` to
// `toNs`, with the configured policies, against an in-memory state (nothing is written to the store,
// nothing is sent to actuators). Auto-applied actions change the simulated state — cooldowns and
// hysteresis behave as they would have — but the history itself cannot show their effect.

export interface BacktestOptions {
  config: GovernorConfig;
  signals: SignalsReader;
  readReadyReplicas?: (atNs: bigint) => Promise<Map<string, number>>;
  readPrefillSpeed?: PrefillSpeedReader;
  readEngineWork?: EngineWorkReader;
  readRequestArrivals?: RequestArrivalsReader;
  fromNs: bigint;
  toNs: bigint;
  onTick?: (atNs: bigint, index: number, total: number) => void;
}

export interface BacktestEntry {
  /** Event time of the tick (RFC 3339). */
  at: string;
  recommendation: Recommendation;
  /** `proposed`, `auto_applied`, `dry_run`, `verified`, `rolled_back`, `expired`… as of this tick. */
  decision: string;
}

export interface BacktestReport {
  from: string;
  to: string;
  ticks: number;
  entries: BacktestEntry[];
}

export async function runBacktest(options: BacktestOptions): Promise<BacktestReport> {
  const repository = createMemoryRepository();
  const engine = await createControlEngine({
    config: { ...options.config, control: { ...options.config.control, tick: 'lockstep' }, actuators: [] },
    signals: options.signals,
    repository,
    readReadyReplicas: options.readReadyReplicas,
    readPrefillSpeed: options.readPrefillSpeed,
    readEngineWork: options.readEngineWork,
    readRequestArrivals: options.readRequestArrivals,
  });
  const interval = secondsToNs(options.config.control.interval_s);
  const entries: BacktestEntry[] = [];
  const total = Number((options.toNs - options.fromNs) / interval) + 1;
  let ticks = 0;
  try {
    for (let at = options.fromNs; at <= options.toNs; at += interval) {
      options.onTick?.(at, ticks, total);
      const evaluated = await engine.evaluate({ atNs: at });
      ticks += 1;
      if (!evaluated.ok) throw new Error(evaluated.message);
      const seen = new Set<string>();
      const audit = await engine.listAudit({ limit: 1000 });
      for (const rec of evaluated.result.recommendations) {
        // The newest audit decision on this recommendation in this tick says what happened to it.
        const decision =
          audit.find((a) => a.recommendationId === rec.id && a.at === evaluated.result.at && !seen.has(a.id))
            ?.decision ?? (rec.updatedAt === rec.createdAt ? 'proposed' : 'refreshed');
        if (decision === 'refreshed') continue;
        entries.push({ at: evaluated.result.at, recommendation: rec, decision });
      }
    }
  } finally {
    await engine.close();
  }
  return {
    from: new Date(Number(options.fromNs / 1_000_000n)).toISOString(),
    to: new Date(Number(options.toNs / 1_000_000n)).toISOString(),
    ticks,
    entries,
  };
}
