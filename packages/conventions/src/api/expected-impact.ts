// What a recommendation predicts (`expectedImpact`): one sentence for an operator, and each measure
// it moves as { from, to }, its value now and the one the action is expected to bring (null where
// unknown, e.g. a TTFT p95 target without an SLO). Verification reports each `to` as `predicted`,
// and holds a scale-in to its `withinSloShare`.
//   ttftP95Ms               TTFT p95 (ms)
//   withinSloShare          share of tasks within the SLO, now and after (the pool models': a
//                           scale-in's pool, or a shift's pools, objective/predict-shift.ts)
//   utilization             busy share of a pool's replicas
//   costUsdPerHour          the pool's replicas' cost per hour
//   requestsPerS            requests per second admitted (shedding) or carried (a peer's)
//   requestsPerSPerReplica  requests per second each replica carries
//   replicas                replica count
//   fraction                share of a model's new tasks moved to a smaller model
//   retryRatio              retries per first attempt
//   errorRate               error rate of the model (or the pool it fails on)
//   memoryUtil              KV cache memory utilization of the pool
// A traffic shift names its pool with its share of the model's traffic: weight { pool, from, to }.

export const IMPACT_MEASURES = [
  'ttftP95Ms',
  'withinSloShare',
  'utilization',
  'costUsdPerHour',
  'requestsPerS',
  'requestsPerSPerReplica',
  'replicas',
  'fraction',
  'retryRatio',
  'errorRate',
  'memoryUtil',
] as const;
export type ImpactMeasure = (typeof IMPACT_MEASURES)[number];

export function isImpactMeasure(value: string): value is ImpactMeasure {
  return (IMPACT_MEASURES as readonly string[]).includes(value);
}

/** A measure now (`from`) and as predicted after the action (`to`). */
export type ImpactChange = {
  from: number | null;
  to: number | null;
};

/** A shifted pool's share of its model's traffic, now and after the shift. */
export type WeightChange = {
  pool: string;
  from: number;
  to: number;
};

export type ExpectedImpact = {
  summary?: string;
  weight?: WeightChange;
} & { [M in ImpactMeasure]?: ImpactChange };

/** What verification reads as predicted: each measure's `to`, and the shifted pool's share. */
export type PredictedAfter = { [M in ImpactMeasure | 'weight']?: number };
