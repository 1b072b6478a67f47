import type { AlertEventSource, GroupDimension, ThresholdOp } from '@governor/conventions';
import type { Labels } from '../labels.ts';

interface CompiledRuleBase {
  name: string;
  severity: string;
  receivers: string[];
  labels: Labels;
  annotations: Record<string, string>;
}

export interface CompiledThresholdRule extends CompiledRuleBase {
  type: 'threshold';
  signal: string;
  by: GroupDimension[];
  op: ThresholdOp;
  threshold: number;
  forMs: number;
  window: string;
  windowMs: number;
}

export interface CompiledBurnRateWindow {
  long: string;
  short: string;
  longMs: number;
  shortMs: number;
  burnRate: number;
  severity: string;
}

export interface CompiledBurnRateRule extends CompiledRuleBase {
  type: 'slo_burn_rate';
  signal: string;
  by: GroupDimension[];
  objective: number;
  windows: CompiledBurnRateWindow[];
  minTasks: number;
  forMs: number;
}

export interface CompiledEventRule extends CompiledRuleBase {
  type: 'event';
  source: AlertEventSource;
  match: Record<string, string[]>;
  by: string[];
  resolveAfterMs: number;
}

export type CompiledRule = CompiledThresholdRule | CompiledBurnRateRule | CompiledEventRule;
export type SignalRule = CompiledThresholdRule | CompiledBurnRateRule;
