import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import {
  A100_TRAFFIC,
  H100_TRAFFIC,
  type TestGovernor,
  runTicks,
  startTestGovernor,
} from './fixtures/control-test-governor.ts';

// The KEDA/HPA hand-off: after an auto-applied scale-up, the replica count Governor wants is read
// the ways deploy/kubernetes/ tells KEDA and an HPA to read it — the metrics-api JSON at the
// ScaledObject's valueLocation, and governor_desired_replicas through a real Prometheus with the
// ScaledObject's own query and prometheus-adapter's own metricsQuery.

const ROOT = resolve(import.meta.dirname, '../../../..');
const PROMETHEUS = '/usr/bin/prometheus';

/** Every YAML document of a deploy file, parsed (a syntax error throws). */
function readDocuments(path: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(join(ROOT, path), 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`);
    return doc.toJS() as Record<string, unknown>;
  });
}

// What KEDA (keda.sh/v1alpha1 ScaledObject CRD) and the HPA (autoscaling/v2) require of these
// objects: kinds, target references, and per trigger type the metadata keys the scaler reads.
// KEDA's trigger metadata values are strings; a number there is rejected by the CRD.
const ScaleTargetRef = z.object({ apiVersion: z.string(), kind: z.string(), name: z.string().min(1) });
const Metadata = z.object({ name: z.string().min(1), namespace: z.string().min(1) });
const MetricsApiTrigger = z.object({
  type: z.literal('metrics-api'),
  metadata: z.object({
    url: z.url(),
    valueLocation: z.string().min(1),
    targetValue: z.string().regex(/^\d+(\.\d+)?$/),
    authMode: z.enum(['apiKey', 'basic', 'tls', 'bearer']).optional(),
  }),
  authenticationRef: z.object({ name: z.string().min(1) }).optional(),
});
const PrometheusTrigger = z.object({
  type: z.literal('prometheus'),
  metadata: z.object({
    serverAddress: z.url(),
    query: z.string().min(1),
    threshold: z.string().regex(/^\d+(\.\d+)?$/),
  }),
});
const ScaledObject = z.object({
  apiVersion: z.literal('keda.sh/v1alpha1'),
  kind: z.literal('ScaledObject'),
  metadata: Metadata,
  spec: z.object({
    scaleTargetRef: ScaleTargetRef,
    minReplicaCount: z.number().int().min(0).optional(),
    maxReplicaCount: z.number().int().positive().optional(),
    triggers: z.array(z.discriminatedUnion('type', [MetricsApiTrigger, PrometheusTrigger])).min(1),
  }),
});
const TriggerAuthentication = z.object({
  apiVersion: z.literal('keda.sh/v1alpha1'),
  kind: z.literal('TriggerAuthentication'),
  metadata: Metadata,
  spec: z.object({
    secretTargetRef: z.array(z.object({ parameter: z.string(), name: z.string(), key: z.string() })).min(1),
  }),
});
const ExternalHpa = z.object({
  apiVersion: z.literal('autoscaling/v2'),
  kind: z.literal('HorizontalPodAutoscaler'),
  metadata: Metadata,
  spec: z.object({
    scaleTargetRef: ScaleTargetRef,
    minReplicas: z.number().int().positive(),
    maxReplicas: z.number().int().positive(),
    metrics: z
      .array(
        z.object({
          type: z.literal('External'),
          external: z.object({
            metric: z.object({
              name: z.string(),
              selector: z.object({ matchLabels: z.record(z.string(), z.string()) }),
            }),
            target: z.object({
              type: z.enum(['Value', 'AverageValue']),
              averageValue: z.string().optional(),
              value: z.string().optional(),
            }),
          }),
        }),
      )
      .min(1),
  }),
});
const AdapterConfig = z.object({
  externalRules: z
    .array(
      z.object({
        seriesQuery: z.string(),
        resources: z.object({ namespaced: z.boolean() }),
        name: z.object({ matches: z.string(), as: z.string() }),
        metricsQuery: z.string().includes('<<.LabelMatchers>>'),
      }),
    )
    .min(1),
});

const [scaledObjectDoc, triggerAuthDoc] = readDocuments('deploy/kubernetes/keda-scaledobject.yaml');
const [prometheusScaledObjectDoc] = readDocuments('deploy/kubernetes/keda-scaledobject-prometheus.yaml');
const [hpaDoc, adapterDoc] = readDocuments('deploy/kubernetes/hpa-external.yaml');

describe('deploy/kubernetes autoscaler examples', () => {
  it('carry the fields KEDA and the HPA require', () => {
    const scaledObject = ScaledObject.parse(scaledObjectDoc);
    const auth = TriggerAuthentication.parse(triggerAuthDoc);
    const trigger = scaledObject.spec.triggers[0] as z.infer<typeof MetricsApiTrigger>;
    expect(trigger.authenticationRef?.name).toBe(auth.metadata.name);
    expect(new URL(trigger.metadata.url).pathname).toMatch(/^\/api\/desired-replicas\//);
    ScaledObject.parse(prometheusScaledObjectDoc);
    const hpa = ExternalHpa.parse(hpaDoc);
    expect(hpa.spec.metrics[0]!.external.metric.name).toBe('governor_desired_replicas');
    const adapter = AdapterConfig.parse(
      parseAllDocuments(
        String((adapterDoc as { data: Record<string, string> }).data['config.yaml']),
      )[0]!.toJS(),
    );
    expect(adapter.externalRules[0]!.name.as).toBe(hpa.spec.metrics[0]!.external.metric.name);
  });

  it('a trigger without its required metadata is refused by the check', () => {
    const broken = structuredClone(scaledObjectDoc) as { spec: { triggers: { metadata: object }[] } };
    broken.spec.triggers[0]!.metadata = { url: 'http://governor:4318/api/desired-replicas/h100' };
    expect(ScaledObject.safeParse(broken).success).toBe(false);
  });
});

describe('desired replicas for KEDA and the HPA', () => {
  let g: TestGovernor;
  let prometheus: ChildProcess | null = null;
  let promDir: string | null = null;

  beforeAll(async () => {
    g = await startTestGovernor({
      policies: [{ name: 'auto-scale', match: { kind: ['scale'] }, auto_apply: true }],
    });
    await runTicks(g, [H100_TRAFFIC, A100_TRAFFIC], 0, 180_000);
    const [tick] = await runTicks(g, [{ ...H100_TRAFFIC, queueMs: 3000 }, A100_TRAFFIC], 180_000, 210_000);
    const applied = tick!.actions.find((a) => a.kind === 'scale' && a.target.pool === 'h100-east');
    expect(applied).toMatchObject({ type: 'apply', action: { from: 2, to: 4 } });
  }, 120_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
    if (promDir) rmSync(promDir, { recursive: true, force: true });
    await g?.close();
  });

  it('GET /api/desired-replicas answers the applied decision at the ScaledObject’s valueLocation', async () => {
    const all = await g.request<{ pools: Record<string, { desiredReplicas: number }> }>(
      'GET',
      '/api/desired-replicas',
    );
    expect(all.status).toBe(200);
    expect(all.body.pools).toEqual({
      'a100-west': { desiredReplicas: 2 },
      'h100-east': { desiredReplicas: 4 },
    });

    const trigger = ScaledObject.parse(scaledObjectDoc).spec.triggers[0] as z.infer<typeof MetricsApiTrigger>;
    const path = new URL(trigger.metadata.url).pathname.replace(/[^/]+$/, 'h100-east');
    const one = await g.request<Record<string, unknown>>('GET', path);
    expect(one.status).toBe(200);
    expect(readValueLocation(one.body, trigger.metadata.valueLocation)).toBe(4);
    expect(readValueLocation(all.body, 'pools.h100-east.desiredReplicas')).toBe(4);

    const unknown = await g.request<{ error: { code: string; message: string } }>(
      'GET',
      '/api/desired-replicas/no-such-pool',
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('GOV_ERR_NOT_FOUND');
  });

  it('a real Prometheus scraping /metrics answers the ScaledObject’s and the adapter’s queries with it', async () => {
    promDir = mkdtempSync(join(tmpdir(), 'governor-prometheus-'));
    const port = await freePort();
    writeFileSync(
      join(promDir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: governor\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['${new URL(g.url).host}']\n`,
    );
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(promDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(promDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    const query = async (promql: string): Promise<number[]> => {
      const response = await fetch(
        `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`,
      );
      const body = (await response.json()) as { data: { result: { value: [number, string] }[] } };
      return body.data.result.map((r) => Number(r.value[1]));
    };
    const kedaTrigger = ScaledObject.parse(prometheusScaledObjectDoc).spec.triggers[0] as z.infer<
      typeof PrometheusTrigger
    >;
    const kedaQuery = kedaTrigger.metadata.query.replace('pool="a100"', 'pool="h100-east"');
    expect(kedaQuery).not.toBe(kedaTrigger.metadata.query);
    const fromKeda = await eventually(async () => {
      const values = await query(kedaQuery);
      if (values.length === 0) throw new Error('not scraped yet');
      return values;
    });
    expect(fromKeda).toEqual([4]);

    const rule = AdapterConfig.parse(
      parseAllDocuments(
        String((adapterDoc as { data: Record<string, string> }).data['config.yaml']),
      )[0]!.toJS(),
    ).externalRules[0]!;
    expect(await query(rule.seriesQuery)).toEqual(expect.arrayContaining([4, 2]));
    const adapterQuery = rule.metricsQuery
      .replace('<<.Series>>', 'governor_desired_replicas')
      .replace('<<.LabelMatchers>>', 'pool="a100-west"');
    expect(await query(adapterQuery)).toEqual([2]);
  }, 90_000);
});

/** KEDA's valueLocation is a GJSON path; these paths use only its dotted-key subset. */
function readValueLocation(body: unknown, location: string): unknown {
  let value: unknown = body;
  for (const key of location.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
  return value;
}

async function eventually<T>(fn: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
