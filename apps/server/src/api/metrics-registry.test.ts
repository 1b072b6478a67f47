import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from './metrics-registry.ts';

describe('createMetricsRegistry', () => {
  it('concatenates providers and reports each one’s health; a failing provider is left out', async () => {
    const failures: string[] = [];
    const registry = createMetricsRegistry((name) => failures.push(name));
    registry.register('a', () => '# TYPE governor_a gauge\ngovernor_a 1');
    registry.register('b', async () => {
      throw new Error('down');
    });
    registry.register('c', async () => '# TYPE governor_c gauge\ngovernor_c 3\n');
    const text = await registry.collect();
    expect(text).toBe(
      '# TYPE governor_a gauge\ngovernor_a 1\n# TYPE governor_c gauge\ngovernor_c 3\n' +
        '# HELP governor_metrics_provider_up Whether the metrics provider answered this scrape (1) or failed (0).\n' +
        '# TYPE governor_metrics_provider_up gauge\n' +
        'governor_metrics_provider_up{provider="a"} 1\ngovernor_metrics_provider_up{provider="b"} 0\ngovernor_metrics_provider_up{provider="c"} 1\n',
    );
    expect(failures).toEqual(['b']);
  });

  it('replaces a provider registered again under the same name', async () => {
    const registry = createMetricsRegistry();
    registry.register('x', () => 'governor_x 1\n');
    registry.register('x', () => 'governor_x 2\n');
    expect(await registry.collect()).toMatch(/^governor_x 2\n/);
  });
});
