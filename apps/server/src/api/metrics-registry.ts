// What GET /metrics serves: text fragments in the Prometheus exposition format, one provider per
// area (signals, ingest, the control loop's governor_desired_replicas…). A provider owns its
// family names; the registry only concatenates, so adding families needs no change here.

export type MetricsProvider = () => string | Promise<string>;

export interface MetricsRegistry {
  /** Adds (or replaces) the provider registered under `name`. */
  register(name: string, provider: MetricsProvider): void;
  /** Every provider's text; a provider that throws is left out and reported in governor_metrics_provider_up. */
  collect(): Promise<string>;
}

export function createMetricsRegistry(
  onError: (name: string, error: unknown) => void = () => {},
): MetricsRegistry {
  const providers = new Map<string, MetricsProvider>();
  return {
    register(name, provider) {
      providers.set(name, provider);
    },
    async collect() {
      const results = await Promise.all(
        [...providers].map(async ([name, provider]) => {
          try {
            const text = await provider();
            return { name, text: text === '' || text.endsWith('\n') ? text : `${text}\n`, up: 1 };
          } catch (error) {
            onError(name, error);
            return { name, text: '', up: 0 };
          }
        }),
      );
      const up = results
        .map(
          (r) =>
            `governor_metrics_provider_up{provider="${r.name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"} ${r.up}`,
        )
        .join('\n');
      return (
        results.map((r) => r.text).join('') +
        '# HELP governor_metrics_provider_up Whether the metrics provider answered this scrape (1) or failed (0).\n' +
        '# TYPE governor_metrics_provider_up gauge\n' +
        (up === '' ? '' : `${up}\n`)
      );
    },
  };
}
