import type { GroupDimension, SignalsSnapshot, ThresholdOp } from '@governor/conventions';
import { fingerprintLabels, formatLabels, type Labels } from '../labels.ts';
import type { ReadSignalValue } from '../signals-source.ts';
import type { CompiledBurnRateRule, CompiledThresholdRule, SignalRule } from './compiled-rule.ts';
import { groupKeyLabels } from './group-labels.ts';
import { formatValue, renderAnnotations } from './render-annotations.ts';

/** A rule whose condition holds for one group at one evaluation time. */
export interface ActiveCondition {
  rule: SignalRule;
  fingerprint: string;
  labels: Labels;
  annotations: Record<string, string>;
  value: number;
  forMs: number;
}

export type SnapshotAt = (windowMs: number, by: GroupDimension[]) => Promise<SignalsSnapshot>;

export function compare(value: number, op: ThresholdOp, threshold: number): boolean {
  switch (op) {
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
    case '==':
      return value === threshold;
    case '!=':
      return value !== threshold;
  }
}

/** Identity labels go last so static labels can never change which alert a group maps to. */
function alertLabels(rule: SignalRule, severity: string, identity: Labels): Labels {
  return { ...rule.labels, severity, ...identity };
}

export async function evaluateThresholdRule(
  rule: CompiledThresholdRule,
  snapshotAt: SnapshotAt,
  readSignalValue: ReadSignalValue,
): Promise<ActiveCondition[]> {
  const snapshot = await snapshotAt(rule.windowMs, rule.by);
  const out: ActiveCondition[] = [];
  for (const group of snapshot.groups) {
    const value = readSignalValue(group, rule.signal);
    if (value === null || !Number.isFinite(value) || !compare(value, rule.op, rule.threshold)) continue;
    const groupLabels = groupKeyLabels(group, rule.by);
    const identity = { alertname: rule.name, ...groupLabels };
    const labels = alertLabels(rule, rule.severity, identity);
    const where = Object.keys(groupLabels).length > 0 ? ` for ${formatLabels(groupLabels)}` : '';
    const templates = {
      summary: `${rule.signal} is ${formatValue(value)} (${rule.op} ${formatValue(rule.threshold)})${where} over ${rule.window}`,
      ...rule.annotations,
    };
    out.push({
      rule,
      fingerprint: fingerprintLabels(identity),
      labels,
      annotations: renderAnnotations(templates, labels, { value, threshold: rule.threshold }),
      value,
      forMs: rule.forMs,
    });
  }
  return out;
}

/**
 * Multiwindow, multi-burn-rate SLO alert (Google SRE workbook, ch. 5): for each window pair, fires
 * when the error budget burns faster than `burnRate` over both the long and the short window. Each
 * pair is its own alert (labels `long_window`, `short_window`) with its own severity.
 */
export async function evaluateBurnRateRule(
  rule: CompiledBurnRateRule,
  snapshotAt: SnapshotAt,
  readSignalValue: ReadSignalValue,
): Promise<ActiveCondition[]> {
  const budget = 1 - rule.objective;
  const out: ActiveCondition[] = [];
  for (const window of rule.windows) {
    const [longSnapshot, shortSnapshot] = await Promise.all([
      snapshotAt(window.longMs, rule.by),
      snapshotAt(window.shortMs, rule.by),
    ]);
    const shortByKey = new Map(
      shortSnapshot.groups.map((g) => [fingerprintLabels(groupKeyLabels(g, rule.by)), g] as const),
    );
    for (const longGroup of longSnapshot.groups) {
      const groupLabels = groupKeyLabels(longGroup, rule.by);
      const shortGroup = shortByKey.get(fingerprintLabels(groupLabels));
      if (!shortGroup || shortGroup.tasks < rule.minTasks) continue;
      const goodLong = readSignalValue(longGroup, rule.signal);
      const goodShort = readSignalValue(shortGroup, rule.signal);
      if (goodLong === null || goodShort === null) continue;
      const burnLong = (1 - goodLong) / budget;
      const burnShort = (1 - goodShort) / budget;
      if (!(burnLong > window.burnRate && burnShort > window.burnRate)) continue;
      const identity = {
        alertname: rule.name,
        long_window: window.long,
        short_window: window.short,
        ...groupLabels,
      };
      const labels = alertLabels(rule, window.severity, identity);
      const where = Object.keys(groupLabels).length > 0 ? ` for ${formatLabels(groupLabels)}` : '';
      const templates = {
        summary:
          `error budget of ${rule.signal} (objective ${formatValue(rule.objective * 100)}%) burning ` +
          `${formatValue(burnLong)}x over ${window.long} and ${formatValue(burnShort)}x over ${window.short} ` +
          `(> ${formatValue(window.burnRate)}x)${where}`,
        ...rule.annotations,
      };
      out.push({
        rule,
        fingerprint: fingerprintLabels(identity),
        labels,
        annotations: renderAnnotations(templates, labels, {
          value: burnLong,
          threshold: window.burnRate,
          burn_rate_long: burnLong,
          burn_rate_short: burnShort,
          objective: rule.objective,
        }),
        value: burnLong,
        forMs: rule.forMs,
      });
    }
  }
  return out;
}

export function evaluateSignalRule(
  rule: SignalRule,
  snapshotAt: SnapshotAt,
  readSignalValue: ReadSignalValue,
): Promise<ActiveCondition[]> {
  return rule.type === 'threshold'
    ? evaluateThresholdRule(rule, snapshotAt, readSignalValue)
    : evaluateBurnRateRule(rule, snapshotAt, readSignalValue);
}
