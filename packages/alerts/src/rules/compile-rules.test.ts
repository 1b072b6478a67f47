import { parseGovernorConfig } from '@governor/conventions';
import { describe, expect, it } from 'vitest';
import { compileRules } from './compile-rules.ts';

function configWith(raw: object) {
  const parsed = parseGovernorConfig(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

describe('compileRules', () => {
  it('compiles the issue example: a threshold rule needs no type', () => {
    const config = configWith({
      receivers: [{ name: 'ops', type: 'webhook', url: 'http://127.0.0.1:9/hook' }],
      alerts: {
        rules: [
          {
            name: 'ttft-slo',
            signal: 'ttftMs.p95',
            by: ['pool'],
            op: '>',
            threshold: 2000,
            for: '1m',
            severity: 'page',
            receivers: ['ops'],
          },
          { type: 'slo_burn_rate', name: 'budget', objective: 0.99 },
        ],
      },
    });
    const { rules, issues } = compileRules(config);
    expect(issues).toEqual([]);
    expect(rules[0]).toMatchObject({ type: 'threshold', forMs: 60_000, windowMs: 300_000, window: '5m' });
    expect(rules[1]).toMatchObject({
      type: 'slo_burn_rate',
      signal: 'goodput',
      windows: [
        { longMs: 3_600_000, shortMs: 300_000, burnRate: 14.4, severity: 'page' },
        { longMs: 21_600_000, shortMs: 1_800_000, burnRate: 6, severity: 'page' },
      ],
    });
  });

  it('reports unknown receivers, unknown signals and duplicate names with their path', () => {
    const config = configWith({
      alerts: {
        rules: [
          { name: 'x', signal: 'ttftMs.p42', threshold: 1, receivers: ['pager'] },
          { name: 'x', signal: 'errorRate', threshold: 0.1 },
        ],
      },
    });
    expect(compileRules(config).issues.map((i) => i.path)).toEqual([
      'alerts.rules.0.receivers.0',
      'alerts.rules.0.signal',
      'alerts.rules.1.name',
    ]);
  });
});
