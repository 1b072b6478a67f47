import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { checkConfig } from '../src/load-config.ts';

// No Docker engine here, so docker-compose.yml and deploy/ are checked for what can be checked:
// they parse, reference files that exist, agree on ports, use only documented Collector keys, and
// Prometheus' own promtool accepts the scrape config.

const ROOT = resolve(import.meta.dirname, '../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const compose = parse(read('docker-compose.yml')) as Compose;
const collector = parse(read('deploy/otel-collector.yaml')) as Record<string, unknown>;
const scratch = mkdtempSync(join(tmpdir(), 'governor-deploy-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  secrets?: string[];
  depends_on?: Record<string, unknown> | string[];
}
interface Compose {
  services: Record<string, Service>;
  secrets?: Record<string, { environment?: string; file?: string }>;
  volumes?: Record<string, unknown>;
}

const services = compose.services;
const containerPort = (mapping: string) => Number(mapping.split(':').at(-1));
const mounts = (s: Service) =>
  (s.volumes ?? []).map((v) => {
    const [source, target] = v.split(':');
    return { source: source!, target: target! };
  });
const mountedFile = (service: string, target: string) => {
  const mount = mounts(services[service]!).find((m) => m.target === target);
  expect(mount, `${service} mounts ${target}`).toBeDefined();
  return mount!.source.replace(/^\.\//, '');
};

describe('docker-compose.yml', () => {
  it('has Governor, the simulator, the Collector and Prometheus', () => {
    expect(Object.keys(services).sort()).toEqual(['governor', 'otel-collector', 'prometheus', 'simulator']);
    expect(services['otel-collector']!.image).toMatch(
      /^otel\/opentelemetry-collector-contrib:\d+\.\d+\.\d+$/,
    );
    expect(services.prometheus!.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(services.simulator!.image).toBe(services.governor!.image);
  });

  it('references only files that exist', () => {
    const build = services.governor!.build!;
    expect(existsSync(join(ROOT, build.context, build.dockerfile))).toBe(true);
    for (const [name, service] of Object.entries(services)) {
      for (const { source } of mounts(service)) {
        if (source.startsWith('.') || source.startsWith('/')) {
          expect(existsSync(join(ROOT, source)), `${name} mounts ${source}`).toBe(true);
        } else expect(compose.volumes ?? {}, `${name} uses volume ${source}`).toHaveProperty(source);
      }
      for (const secret of service.secrets ?? []) expect(compose.secrets ?? {}).toHaveProperty(secret);
      for (const dependency of Array.isArray(service.depends_on)
        ? service.depends_on
        : Object.keys(service.depends_on ?? {}))
        expect(services).toHaveProperty(dependency);
    }
  });

  it('starts Governor on all interfaces with its config and every token it expects', () => {
    const governor = services.governor!;
    expect(governor.command?.join(' ')).toMatch(
      /^pnpm governor start --host 0\.0\.0\.0 --config \/etc\/governor\/governor\.yaml$/,
    );
    const dockerfile = read(governor.build!.dockerfile);
    expect(dockerfile).toMatch(/npx -y pnpm@12\.4\.2 install --frozen-lockfile/);
    expect(dockerfile).toMatch(/CMD \["pnpm", "governor", "start", "--host", "0\.0\.0\.0"/);
    const configFile = mountedFile('governor', '/etc/governor/governor.yaml');
    // Literal values as written (GOVERNOR_LOG_LEVEL is checked too); a stand-in for each ${…} secret.
    const env = Object.fromEntries(
      Object.entries(governor.environment ?? {}).map(([k, v]) => [
        k,
        v.startsWith('${') ? `${k.toLowerCase()}-value-0123456789` : v,
      ]),
    );
    const checked = checkConfig(join(ROOT, configFile), env);
    expect(checked.ok ? [] : checked.errors).toEqual([]);
    if (!checked.ok) return;
    // Every token_env the config names is passed into the container.
    for (const token of checked.config.auth.tokens) {
      if (token.token_env) expect(governor.environment).toHaveProperty(token.token_env);
    }
    expect(governor.environment).toHaveProperty('GOVERNOR_ADMIN_TOKEN');
    expect(checked.config.server.host).toBe('0.0.0.0');
    expect(governor.ports?.map(containerPort)).toEqual([checked.config.server.http_port]);
  });

  it('wires simulator → Collector → Governor ← Prometheus on consistent ports', () => {
    const config = checkConfig(join(ROOT, mountedFile('governor', '/etc/governor/governor.yaml')), {
      GOVERNOR_INGEST_TOKEN: 'x'.repeat(20),
      GOVERNOR_METRICS_TOKEN: 'y'.repeat(20),
    });
    if (!config.ok) throw new Error(config.errors.join('\n'));
    const { http_port: httpPort, grpc_port: grpcPort } = config.config.server;

    const receivers = (collector.receivers as { otlp: { protocols: Record<string, { endpoint: string }> } })
      .otlp.protocols;
    const grpcIn = Number(receivers.grpc!.endpoint.split(':').at(-1));
    const httpIn = Number(receivers.http!.endpoint.split(':').at(-1));
    expect(services['otel-collector']!.ports?.map(containerPort).sort()).toEqual([grpcIn, httpIn].sort());

    const sim = services.simulator!.command!;
    expect(sim.slice(0, 3)).toEqual(['pnpm', 'governor', 'sim']);
    expect(sim[sim.indexOf('--target') + 1]).toBe(`http://otel-collector:${httpIn}`);

    const exporters = collector.exporters as Record<
      string,
      { endpoint: string; headers: Record<string, string> }
    >;
    expect(exporters['otlphttp/governor']!.endpoint).toBe(`http://governor:${httpPort}`);
    expect(exporters['otlp/governor']!.endpoint).toBe(`governor:${grpcPort}`);
    for (const exporter of Object.values(exporters)) {
      const auth = Object.entries(exporter.headers).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the Collector's own ${env:…} syntax, literally.
      expect(auth).toBe('Bearer ${env:GOVERNOR_INGEST_TOKEN}');
    }
    expect(services['otel-collector']!.environment).toHaveProperty('GOVERNOR_INGEST_TOKEN');

    const prometheus = parse(read(mountedFile('prometheus', '/etc/prometheus/prometheus.yml'))) as {
      scrape_configs: {
        metrics_path: string;
        authorization: { credentials_file: string };
        static_configs: { targets: string[] }[];
      }[];
    };
    const job = prometheus.scrape_configs[0]!;
    expect(job.metrics_path).toBe('/metrics');
    expect(job.static_configs[0]!.targets).toEqual([`governor:${httpPort}`]);
    expect(job.authorization.credentials_file).toBe('/run/secrets/governor_metrics_token');
    expect(compose.secrets?.governor_metrics_token).toEqual({ environment: 'GOVERNOR_METRICS_TOKEN' });
  });
});

describe('deploy/otel-collector.yaml', () => {
  // Keys from the Collector's documentation: the OTLP receiver, the prometheus receiver (its
  // `config` is a Prometheus scrape config, checked by promtool below), the k8sattributes and batch
  // processors, the otlp and otlphttp exporters (endpoint, headers, compression, tls,
  // retry_on_failure) and pipelines.
  const DOCUMENTED: Record<string, unknown> = {
    receivers: {
      otlp: { protocols: { grpc: { endpoint: true }, http: { endpoint: true } } },
      prometheus: { config: true, trim_metric_suffixes: true },
    },
    processors: {
      batch: { send_batch_size: true, timeout: true, send_batch_max_size: true },
      k8sattributes: {
        auth_type: true,
        passthrough: true,
        filter: true,
        extract: { metadata: true, labels: true, annotations: true },
        pod_association: true,
      },
    },
    exporters: {
      otlphttp: {
        endpoint: true,
        headers: '*',
        compression: true,
        retry_on_failure: { enabled: true },
        tls: { insecure: true },
      },
      otlp: {
        endpoint: true,
        headers: '*',
        compression: true,
        retry_on_failure: { enabled: true },
        tls: { insecure: true },
      },
    },
    service: {
      pipelines: {
        traces: { receivers: true, processors: true, exporters: true },
        metrics: { receivers: true, processors: true, exporters: true },
      },
    },
  };
  const componentType = (key: string) => key.split('/')[0]!;

  function undocumented(value: unknown, allowed: unknown, path: string, componentLevel: boolean): string[] {
    if (allowed === true || allowed === '*') return [];
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
    const problems: string[] = [];
    for (const [key, child] of Object.entries(value)) {
      const lookup = componentLevel ? componentType(key) : key;
      const next = (allowed as Record<string, unknown>)[lookup];
      if (next === undefined) problems.push(`${path}${key}`);
      else problems.push(...undocumented(child, next, `${path}${key}.`, false));
    }
    return problems;
  }

  it('uses only documented keys', () => {
    const problems: string[] = [];
    for (const [section, body] of Object.entries(collector)) {
      const allowed = DOCUMENTED[section];
      if (allowed === undefined) problems.push(section);
      else problems.push(...undocumented(body, allowed, `${section}.`, section !== 'service'));
    }
    expect(problems).toEqual([]);
  });

  it('has pipelines whose components are all defined', () => {
    const pipelines = (collector.service as { pipelines: Record<string, Record<string, string[]>> })
      .pipelines;
    expect(Object.keys(pipelines).sort()).toEqual(['metrics', 'traces']);
    for (const pipeline of Object.values(pipelines)) {
      for (const kind of ['receivers', 'processors', 'exporters'] as const) {
        for (const id of pipeline[kind] ?? [])
          expect(collector[kind] as object, `${kind} ${id}`).toHaveProperty([id]);
      }
    }
  });
});

describe('deploy/otel-collector.yaml scrape config', () => {
  // Debian's promtool is built without Kubernetes discovery, so each job's kubernetes_sd_configs is
  // checked here (role pod) and swapped for a static target before promtool checks the rest
  // (relabel rules, regexes, intervals). The Collector unescapes $$ to $ before Prometheus reads it.
  it('passes promtool check config, discovering pods', () => {
    const scrape = structuredClone(
      (collector.receivers as { prometheus: { config: { scrape_configs: Record<string, unknown>[] } } })
        .prometheus.config,
    );
    expect(scrape.scrape_configs.map((job) => job.job_name)).toEqual(['inference-runtimes', 'dcgm-exporter']);
    for (const job of scrape.scrape_configs) {
      expect(job.kubernetes_sd_configs).toEqual([{ role: 'pod' }]);
      delete job.kubernetes_sd_configs;
      job.static_configs = [{ targets: ['10.0.0.1:8000'] }];
    }
    const file = join(scratch, 'collector-scrape.yml');
    writeFileSync(file, stringify(scrape).replaceAll('$$', '$'));
    const output = execFileSync('/usr/bin/promtool', ['check', 'config', file], { stdio: 'pipe' }).toString();
    expect(output).toContain('SUCCESS');
  });

  it("docker-compose's command-line overrides leave pipelines of defined components without the Kubernetes ones", () => {
    const overrides = (services['otel-collector']!.command ?? [])
      .filter((arg) => arg.startsWith('--config=yaml:'))
      .map((arg) => {
        const [path, value] = arg.slice('--config=yaml:'.length).split(': ');
        return { path: path!.split('::'), value: parse(value!) as string[] };
      });
    expect(overrides.length).toBeGreaterThan(0);
    for (const { path, value } of overrides) {
      expect(path.slice(0, 2)).toEqual(['service', 'pipelines']);
      for (const id of value) expect(collector[path[3]!] as object, `${path[3]} ${id}`).toHaveProperty([id]);
      expect(value).not.toContain('k8sattributes');
      expect(value).not.toContain('prometheus');
    }
  });
});

describe('deploy/prometheus.yml', () => {
  const promtool = '/usr/bin/promtool';

  it('passes promtool check config', () => {
    expect(
      existsSync(promtool),
      'promtool (Debian package prometheus; scripts/ensure-system-deps.mjs installs it)',
    ).toBe(true);
    const file = join(ROOT, 'deploy/prometheus.yml');
    execFileSync(promtool, ['check', 'config', '--syntax-only', file], { stdio: 'pipe' });
    // The full check also opens the bearer token file; point it at a real one.
    const tokenFile = join(scratch, 'governor_metrics_token');
    writeFileSync(tokenFile, 'a-read-token-for-promtool\n');
    const copy = join(scratch, 'prometheus.yml');
    writeFileSync(copy, readFileSync(file, 'utf8').replace('/run/secrets/governor_metrics_token', tokenFile));
    const output = execFileSync(promtool, ['check', 'config', copy], { stdio: 'pipe' }).toString();
    expect(output).toContain('SUCCESS');
  });
});
