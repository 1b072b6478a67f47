import type { ControlConfig, GovernorConfig } from '@governor/conventions';
import { parseDurationMs } from '@governor/conventions';
import { secondsToNs } from '../time.ts';
import { type ControlTuning, DEFAULT_TUNING } from './control-tuning.ts';

/** What every part of the engine reads and nothing changes after start: config, tuning, windows, clock. */
export interface EngineSettings {
  config: GovernorConfig;
  control: ControlConfig;
  tuning: ControlTuning;
  /** Wall clock (ms) for audit timestamps and human actions before the first tick. */
  now: () => number;
  windowMs: number;
  /** The short detection window. */
  fastWindowMs: number;
  cooldownNs: bigint;
  /** How long a proposal nobody acted on stays open. */
  ttlNs: bigint;
}

export function createEngineSettings(
  config: GovernorConfig,
  tuning: Partial<ControlTuning> | undefined,
  now: () => number,
): EngineSettings {
  const control = config.control;
  const windowMs = parseDurationMs(control.window);
  const intervalMs = control.interval_s * 1000;
  return {
    config,
    control,
    tuning: { ...DEFAULT_TUNING, ...tuning },
    now,
    windowMs,
    // Short enough to see a fault within two ticks, long enough for a usable sample.
    fastWindowMs: Math.min(windowMs, Math.max(intervalMs, 30_000)),
    cooldownNs: secondsToNs(control.cooldown_s),
    ttlNs: secondsToNs(control.recommendation_ttl_s),
  };
}
