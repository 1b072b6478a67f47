import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type GovernorConfig, parseGovernorConfig } from '@governor/conventions';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

// No Docker engine here, so docker-compose.scale.yml and deploy/scale/ are checked for agreeing with
// each other: the files they mount exist, Governor's config names ClickHouse services and environment
// variables the compose file provides, the Collector balances over exactly the Governor nodes, and the
// ClickHouse XML defines the cluster and the read-only user Governor relies on.

const ROOT = resolve(import.meta.dirname, '../../..');
const COMPOSE_FILE = 'docker-compose.scale.yml';
const GOVERNOR_FILE = 'deploy/scale/governor.yaml';
const COLLECTOR_FILE = 'deploy/scale/otel-collector.yaml';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
// `merge: true` resolves `<<:` merge keys; aliases (`*name`) are resolved by the parser anyway.
const readYaml = (path: string) => parseYaml(read(path), { merge: true, uniqueKeys: true });

type Volume = string | { type?: string; source?: string; target?: string };
interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  volumes?: Volume[];
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = readYaml(COMPOSE_FILE) as Compose;
const services = compose.services;

/** Short (`src:target[:mode]`) and long (`{ type, source, target }`) volume syntax. */
function mounts(service: Service): { source: string; target: string; bind: boolean }[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume === 'string') {
      const [source = '', target = ''] = volume.split(':');
      return { source, target, bind: source.startsWith('.') || source.startsWith('/') };
    }
    const source = volume.source ?? '';
    return { source, target: volume.target ?? '', bind: volume.type === 'bind' };
  });
}

/** The environment as a map; list syntax (`KEY=value`) too. */
function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const eq = entry.indexOf('=');
        return eq < 0 ? [entry, ''] : [entry.slice(0, eq), entry.slice(eq + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

const commandOf = (service: Service) =>
  Array.isArray(service.command) ? service.command : (service.command ?? '').split(/\s+/).filter(Boolean);

/** The services that run a Governor node (`governor start`), not the simulator (`governor sim`). */
const governorServices = Object.entries(services)
  .filter(([, s]) => commandOf(s).join(' ').includes('governor start'))
  .map(([name]) => name)
  .sort();
/** The ClickHouse servers (not Keeper). */
const clickhouseServices = Object.entries(services)
  .filter(([, s]) => (s.image ?? '').startsWith('clickhouse/clickhouse-server'))
  .map(([name]) => name)
  .sort();

/** The repository file mounted into `service` at `target`. */
function mountedFile(service: string, target: string): string | undefined {
  const mount = mounts(services[service]!).find((m) => m.target === target && m.bind);
  return mount?.source.replace(/^\.\//, '');
}

/** The ${…} syntax of a value that compose fills in from the host, or the literal value. */
const literal = (value: string | undefined) =>
  value !== undefined && !value.includes('${') ? value : undefined;

const governorParsed = parseGovernorConfig(readYaml(GOVERNOR_FILE));
function governorConfig(): GovernorConfig {
  if (!governorParsed.ok) {
    throw new Error(
      `${GOVERNOR_FILE} does not validate:\n${governorParsed.issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`,
    );
  }
  return governorParsed.config;
}

const hostOf = (url: string) => new URL(url).hostname;

// --- Minimal XML extraction (ClickHouse config files: no CDATA, no nesting of same-named elements
// where this looks) ---

const stripComments = (xml: string) => xml.replace(/<!--[\s\S]*?-->/g, '');
/** Inner text of every `<name …>…</name>` in `xml` (self-closing elements give ''). */
function elements(xml: string, name: string): string[] {
  const pattern = new RegExp(`<${name}(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${name}\\s*>)`, 'g');
  return [...xml.matchAll(pattern)].map((m) => m[1] ?? '');
}
const element = (xml: string, name: string) => elements(xml, name)[0];
const text = (xml: string | undefined) => xml?.trim();

/** The XML files bind-mounted into a ClickHouse server under `dir` (config.d or users.d). */
function clickhouseXml(service: string, dir: string): { file: string; xml: string }[] {
  return mounts(services[service]!)
    .filter(
      (m) => m.bind && m.target.startsWith(`/etc/clickhouse-server/${dir}/`) && m.target.endsWith('.xml'),
    )
    .map((m) => {
      const file = m.source.replace(/^\.\//, '');
      return { file, xml: stripComments(read(file)) };
    });
}

describe(`${COMPOSE_FILE} and deploy/scale/ agree`, () => {
  it('finds the Governor and ClickHouse services it checks against', () => {
    expect(governorServices.length, `services running \`governor start\` in ${COMPOSE_FILE}`).toBeGreaterThan(
      0,
    );
    expect(clickhouseServices.length, `clickhouse-server services in ${COMPOSE_FILE}`).toBeGreaterThan(0);
  });

  it('1. bind-mounts only files that exist in the repository', () => {
    const missing: string[] = [];
    for (const [name, service] of Object.entries(services)) {
      for (const { source, bind } of mounts(service)) {
        if (bind) {
          if (!existsSync(join(ROOT, source))) missing.push(`${name}: ${source}`);
        } else
          expect(compose.volumes ?? {}, `${name} uses named volume ${source}, not declared`).toHaveProperty([
            source,
          ]);
      }
      if (service.build && typeof service.build === 'object') {
        const dockerfile = join(service.build.context ?? '.', service.build.dockerfile ?? 'Dockerfile');
        if (!existsSync(join(ROOT, dockerfile))) missing.push(`${name}: build ${dockerfile}`);
      }
    }
    expect(missing, `paths in ${COMPOSE_FILE} that do not exist`).toEqual([]);
  });

  it(`2. every Governor service runs ${GOVERNOR_FILE}, which validates and uses the compose file's ClickHouse and environment`, () => {
    for (const name of governorServices) {
      const command = commandOf(services[name]!);
      const configPath = command[command.indexOf('--config') + 1];
      expect(command, `${name}'s command passes --config`).toContain('--config');
      expect(
        mountedFile(name, configPath!),
        `${name} mounts ${GOVERNOR_FILE} at its --config ${configPath}`,
      ).toBe(GOVERNOR_FILE);
    }

    const config = governorConfig();
    expect(config.store.engine, `${GOVERNOR_FILE} store.engine`).toBe('clickhouse');
    const clickhouse = config.store.clickhouse!;

    const urls = [clickhouse.url, ...(clickhouse.shard_urls ?? [])];
    for (const url of urls) {
      expect(clickhouseServices, `${GOVERNOR_FILE}: host of ${url} is a ClickHouse service`).toContain(
        hostOf(url),
      );
    }
    // Governor creates its tables on each shard_url: one per ClickHouse server, none missing.
    expect(
      (clickhouse.shard_urls ?? [clickhouse.url]).map(hostOf).sort(),
      `${GOVERNOR_FILE}: store.clickhouse.shard_urls hosts vs ClickHouse services of ${COMPOSE_FILE}`,
    ).toEqual(clickhouseServices);

    const named: [key: string, variable: string | undefined][] = [
      ['store.clickhouse.user_env', clickhouse.user_env],
      ['store.clickhouse.password_env', clickhouse.password_env],
      ['store.clickhouse.readonly_user_env', clickhouse.readonly_user_env],
      ['store.clickhouse.readonly_password_env', clickhouse.readonly_password_env],
      ['store.postgres.url_env', config.store.postgres.url_env],
      ...config.auth.tokens.map((t, i): [string, string | undefined] => [
        `auth.tokens.${i}.token_env`,
        t.token_env,
      ]),
    ];
    const needed = named.filter((entry): entry is [string, string] => entry[1] !== undefined);
    const unset: string[] = [];
    for (const name of governorServices) {
      const env = environmentOf(services[name]!);
      for (const [key, variable] of needed) {
        if (!(variable in env)) unset.push(`${name}: ${variable} (${key})`);
      }
    }
    expect(unset, `variables ${GOVERNOR_FILE} names but ${COMPOSE_FILE} does not set`).toEqual([]);
  });

  it('3. the Collector balances traces by trace id (metrics by resource or service) over exactly the Governor nodes', () => {
    const collector = readYaml(COLLECTOR_FILE) as {
      exporters: Record<string, Record<string, unknown>>;
      service: { pipelines: Record<string, { exporters?: string[] }> };
    };
    const collectorService = Object.entries(services).find(([, s]) =>
      (s.image ?? '').includes('opentelemetry-collector'),
    );
    expect(collectorService, `a Collector service in ${COMPOSE_FILE}`).toBeDefined();
    const mountedConfig = mounts(collectorService![1]).map((m) => m.source.replace(/^\.\//, ''));
    expect(mountedConfig, `${collectorService![0]} mounts ${COLLECTOR_FILE}`).toContain(COLLECTOR_FILE);

    const { grpc_port: grpcPort, http_port: httpPort } = governorConfig().server;
    const loadbalancing = (pipeline: string) =>
      (collector.service.pipelines[pipeline]?.exporters ?? []).filter(
        (id) => id.split('/')[0] === 'loadbalancing',
      );

    const checkResolver = (id: string) => {
      const exporter = collector.exporters[id]!;
      expect(exporter, `${COLLECTOR_FILE}: exporter ${id} is defined`).toBeDefined();
      // The loadbalancing exporter's `protocol.otlp` is the OTLP/gRPC exporter; an `otlphttp` one would be HTTP.
      const protocols = Object.keys((exporter.protocol ?? {}) as object);
      expect(protocols, `${COLLECTOR_FILE}: ${id}.protocol`).toHaveLength(1);
      const port = protocols[0] === 'otlp' ? grpcPort : protocols[0] === 'otlphttp' ? httpPort : undefined;
      expect(
        port,
        `${COLLECTOR_FILE}: ${id}.protocol.${protocols[0]} is otlp (gRPC) or otlphttp`,
      ).toBeDefined();
      const hostnames = (exporter.resolver as { static?: { hostnames?: string[] } } | undefined)?.static
        ?.hostnames;
      expect(hostnames, `${COLLECTOR_FILE}: ${id}.resolver.static.hostnames`).toBeDefined();
      expect(
        [...hostnames!].sort(),
        `${COLLECTOR_FILE}: ${id} backends vs Governor services of ${COMPOSE_FILE} on ${GOVERNOR_FILE}'s ${protocols[0] === 'otlp' ? 'grpc_port' : 'http_port'}`,
      ).toEqual(governorServices.map((name) => `${name}:${port}`));
    };

    const traces = loadbalancing('traces');
    expect(
      traces,
      `${COLLECTOR_FILE}: the traces pipeline exports through one loadbalancing exporter`,
    ).toHaveLength(1);
    expect(collector.exporters[traces[0]!]?.routing_key, `${COLLECTOR_FILE}: ${traces[0]}.routing_key`).toBe(
      'traceID',
    );
    checkResolver(traces[0]!);

    for (const id of loadbalancing('metrics')) {
      expect(
        ['resource', 'service'],
        `${COLLECTOR_FILE}: ${id}.routing_key (metrics cannot route by traceID)`,
      ).toContain(collector.exporters[id]?.routing_key);
      checkResolver(id);
    }
  });

  it('4. the ClickHouse XML defines the cluster Governor spans and the read-only user it queries as', () => {
    const config = governorConfig();
    // Parsed, so an unset cluster already holds the default from store-config.ts.
    const cluster = config.store.clickhouse!.cluster;

    for (const name of clickhouseServices) {
      const defining = clickhouseXml(name, 'config.d').flatMap(({ file, xml }) =>
        elements(xml, 'remote_servers').flatMap((servers) =>
          elements(servers, cluster).map((body) => ({ file, body })),
        ),
      );
      expect(
        defining.map((d) => d.file),
        `${name}: files under config.d/ defining remote_servers.${cluster} (store.clickhouse.cluster)`,
      ).toHaveLength(1);
      const shards = elements(defining[0]!.body, 'shard');
      const shardHosts = shards.map((shard) =>
        elements(shard, 'replica').map((r) => text(element(r, 'host'))),
      );
      expect(
        shardHosts,
        `${defining[0]!.file}: remote_servers.${cluster} has one shard of one replica per ClickHouse service of ${COMPOSE_FILE}`,
      ).toEqual(clickhouseServices.map((host) => [host]));
    }

    // The read-only user is the value compose gives the variable readonly_user_env names.
    const roVariable = config.store.clickhouse!.readonly_user_env;
    expect(roVariable, `${GOVERNOR_FILE}: store.clickhouse.readonly_user_env`).toBeDefined();
    const roUsers = new Set(governorServices.map((name) => environmentOf(services[name]!)[roVariable!]));
    expect(roUsers.size, `${roVariable} is the same on every Governor service`).toBe(1);
    const roUser = literal([...roUsers][0]);
    expect(roUser, `${COMPOSE_FILE}: ${roVariable} is a literal user name`).toBeDefined();

    for (const name of clickhouseServices) {
      const usersXml = clickhouseXml(name, 'users.d');
      const users = usersXml.flatMap(({ file, xml }) =>
        elements(xml, 'users').flatMap((u) => elements(u, roUser!).map((body) => ({ file, body }))),
      );
      expect(
        users.map((u) => u.file),
        `${name}: users.d/ files defining user ${roUser}`,
      ).toHaveLength(1);
      const profile = text(element(users[0]!.body, 'profile'));
      expect(profile, `${users[0]!.file}: users.${roUser}.profile`).toBeDefined();
      const profileBodies = usersXml.flatMap(({ xml }) =>
        elements(xml, 'profiles').flatMap((p) => elements(p, profile!)),
      );
      expect(
        profileBodies,
        `${name}: mounted users.d/ files defining profile ${profile} (user ${roUser}'s, which must set readonly=1)`,
      ).toHaveLength(1);
      expect(
        text(element(profileBodies[0]!, 'readonly')),
        `${users[0]!.file}: profiles.${profile}.readonly (user ${roUser})`,
      ).toBe('1');
    }
  });
});
