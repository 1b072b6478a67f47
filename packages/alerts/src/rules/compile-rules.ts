import {
  type AlertRuleConfig,
  type GovernorConfig,
  isSignalPath,
  parseDurationMs,
} from '@governor/conventions';
import type { CompiledRule } from './compiled-rule.ts';

export interface AlertConfigIssue {
  path: string;
  message: string;
}

/**
 * Turns the rules of the config into evaluation-ready form and checks what the schema alone cannot:
 * rule names are unique, signals exist, receivers named by a rule are configured.
 */
export function compileRules(config: Pick<GovernorConfig, 'alerts' | 'receivers' | 'signals'>): {
  rules: CompiledRule[];
  issues: AlertConfigIssue[];
} {
  const issues: AlertConfigIssue[] = [];
  const receiverNames = new Set(config.receivers.map((r) => r.name));
  const seen = new Set<string>();
  const rules: CompiledRule[] = [];
  config.alerts.rules.forEach((rule, index) => {
    const path = `alerts.rules.${index}`;
    if (seen.has(rule.name))
      issues.push({ path: `${path}.name`, message: `rule name "${rule.name}" is used twice` });
    seen.add(rule.name);
    rule.receivers.forEach((name, i) => {
      if (!receiverNames.has(name)) {
        issues.push({
          path: `${path}.receivers.${i}`,
          message: `receiver "${name}" is not defined under receivers: (defined: ${[...receiverNames].join(', ') || 'none'})`,
        });
      }
    });
    if (rule.type !== 'event' && !isSignalPath(rule.signal)) {
      issues.push({
        path: `${path}.signal`,
        message: `unknown signal "${rule.signal}"; use a field of GET /api/signals such as ttftMs.p95, goodput or errorRate`,
      });
    }
    rules.push(compileRule(rule, config.signals.default_window));
  });
  return { rules, issues };
}

function compileRule(rule: AlertRuleConfig, defaultWindow: string): CompiledRule {
  const base = {
    name: rule.name,
    severity: rule.severity,
    receivers: rule.receivers,
    labels: rule.labels,
    annotations: rule.annotations,
  };
  switch (rule.type) {
    case 'threshold': {
      const window = rule.window ?? defaultWindow;
      return {
        ...base,
        type: 'threshold',
        signal: rule.signal,
        by: rule.by,
        op: rule.op,
        threshold: rule.threshold,
        forMs: parseDurationMs(rule.for),
        window,
        windowMs: parseDurationMs(window),
      };
    }
    case 'slo_burn_rate':
      return {
        ...base,
        type: 'slo_burn_rate',
        signal: rule.signal,
        by: rule.by,
        objective: rule.objective,
        minTasks: rule.min_tasks,
        forMs: parseDurationMs(rule.for),
        windows: rule.windows.map((w) => ({
          long: w.long,
          short: w.short,
          longMs: parseDurationMs(w.long),
          shortMs: parseDurationMs(w.short),
          burnRate: w.burn_rate,
          severity: w.severity ?? rule.severity,
        })),
      };
    case 'event':
      return {
        ...base,
        type: 'event',
        source: rule.source,
        by: rule.by,
        resolveAfterMs: parseDurationMs(rule.resolve_after),
        match: Object.fromEntries(
          Object.entries(rule.match).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]),
        ),
      };
  }
}
