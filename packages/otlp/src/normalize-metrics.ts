import { Attr } from '@governor/conventions';
import { applyAttributeAliases as withAliases, toStringOrNull } from './attribute-values.ts';
import type { FleetIdentity } from './fleet-identity.ts';
import type { MetricPointRow } from './span-row.ts';
import type { AttributeValue, DecodedMetricsRequest } from './types.ts';

export interface NormalizedMetrics {
  rows: MetricPointRow[];
  rejected: number;
  problems: string[];
}

const MAX_PROBLEMS = 5;
/** The Gateway API Inference Extension's pool gauges, labelled `name` = the InferencePool. */
const GIE_POOL_METRIC_PREFIX = 'inference_pool_';

export function normalizeMetricsRequest(
  request: DecodedMetricsRequest,
  aliases: Readonly<Record<string, string>>,
  identity?: FleetIdentity,
): NormalizedMetrics {
  const rows: MetricPointRow[] = [];
  const problems: string[] = [];
  let rejected = 0;
  for (const rm of request.resourceMetrics) {
    const resource = withAliases(rm.resource, aliases);
    const resourceJson = JSON.stringify(rm.resource);
    const service = toStringOrNull(resource[Attr.serviceName]);
    for (const sm of rm.scopeMetrics) {
      for (const metric of sm.metrics) {
        const problem =
          metric.name === '' ? 'metric has no name' : metric.type === null ? 'metric has no data' : null;
        if (problem) {
          rejected += Math.max(1, metric.points.length);
          if (problems.length < MAX_PROBLEMS) problems.push(`metric "${metric.name}": ${problem}`);
          continue;
        }
        for (const point of metric.points) {
          if (point.timeNs <= 0n || point.timeNs > 0x7fffffffffffffffn) {
            rejected++;
            if (problems.length < MAX_PROBLEMS)
              problems.push(`metric "${metric.name}": data point without time_unix_nano`);
            continue;
          }
          const attrs = withAliases(point.attributes, aliases);
          const get = (key: string): AttributeValue | undefined => attrs[key] ?? resource[key];
          rows.push({
            name: metric.name,
            type: metric.type!,
            unit: metric.unit || null,
            timeNs: point.timeNs,
            startNs: point.startNs > 0n && point.startNs <= 0x7fffffffffffffffn ? point.startNs : null,
            value: point.value,
            count: point.count,
            sum: point.sum,
            min: point.min,
            max: point.max,
            bucketCounts: point.bucketCounts ? JSON.stringify(point.bucketCounts) : null,
            explicitBounds: point.explicitBounds ? JSON.stringify(point.explicitBounds) : null,
            quantiles: point.quantiles ? JSON.stringify(point.quantiles) : null,
            isMonotonic: metric.isMonotonic,
            temporality: metric.temporality & 0xff,
            service,
            pool:
              toStringOrNull(get(Attr.pool)) ??
              (identity && metric.name.startsWith(GIE_POOL_METRIC_PREFIX)
                ? identity.poolNamed(toStringOrNull(attrs.name) ?? '')
                : (identity?.pool(attrs, resource) ?? null)),
            region: toStringOrNull(get(Attr.region) ?? resource['cloud.region']),
            replica: toStringOrNull(get(Attr.replica)) ?? identity?.metricReplica(attrs, resource) ?? null,
            model: toStringOrNull(get(Attr.genAiRequestModel) ?? get('model_name')),
            attributes: JSON.stringify(point.attributes),
            resource: resourceJson,
          });
        }
      }
    }
  }
  return { rows, rejected, problems };
}
