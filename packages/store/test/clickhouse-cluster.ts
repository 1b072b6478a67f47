import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A ClickHouse cluster on loopback for the tests: N clickhouse-server processes (Debian's 18.16,
// `apt-get install clickhouse-server`, installed by scripts/ensure-system-deps.mjs), each one shard
// of the cluster `governor` (remote_servers, native TCP), in a temporary directory removed by
// stop(). No Keeper: DDL runs on each server (ON CLUSTER needs one).

export const CLICKHOUSE_SERVER = '/usr/sbin/clickhouse-server';
export const CLUSTER_NAME = 'governor';

export interface ClickHouseShard {
  /** http://127.0.0.1:<port> */
  url: string;
  tcpPort: number;
  pid: number;
}

export interface ClickHouseCluster {
  cluster: string;
  shards: ClickHouseShard[];
  /** Kills one shard's server at once (SIGKILL), as a crash would. */
  kill(shard: number): Promise<void>;
  stop(): Promise<void>;
}

/** A free loopback port (the OS may hand one out again once closed: callers skip repeats). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export async function startClickHouseCluster(options: { shards?: number } = {}): Promise<ClickHouseCluster> {
  const count = options.shards ?? 2;
  const root = mkdtempSync(join(tmpdir(), 'governor-clickhouse-'));
  // Three distinct free loopback ports per shard: HTTP, native TCP, interserver.
  const taken = new Set<number>();
  const distinctPort = async () => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  const ports: { http: number; tcp: number; interserver: number }[] = [];
  for (let i = 0; i < count; i++)
    ports.push({ http: await distinctPort(), tcp: await distinctPort(), interserver: await distinctPort() });
  const remoteServers = ports
    .map(
      (p) =>
        `<shard><internal_replication>false</internal_replication><replica><host>127.0.0.1</host><port>${p.tcp}</port></replica></shard>`,
    )
    .join('');
  const children: ChildProcess[] = [];
  const shards: ClickHouseShard[] = [];
  try {
    for (const [i, p] of ports.entries()) {
      const dir = join(root, `shard-${i + 1}`);
      for (const sub of ['etc', 'data', 'tmp', 'log', 'user_files', 'format_schemas'])
        mkdirSync(join(dir, sub), { recursive: true });
      writeFileSync(join(dir, 'etc', 'config.xml'), serverConfig(dir, p, remoteServers));
      writeFileSync(join(dir, 'etc', 'users.xml'), USERS_XML);
      const child = spawn(CLICKHOUSE_SERVER, [`--config-file=${join(dir, 'etc', 'config.xml')}`], {
        stdio: 'ignore',
        detached: false,
      });
      children.push(child);
      shards.push({ url: `http://127.0.0.1:${p.http}`, tcpPort: p.tcp, pid: child.pid ?? -1 });
    }
    await Promise.all(shards.map((s, i) => waitUntilUp(s.url, children[i]!, join(root, `shard-${i + 1}`))));
    // A server answers HTTP a moment before its native TCP port listens, and the cluster's DDL and
    // distributed reads go over TCP: wait until the first shard reaches every shard's TCP port.
    for (const shard of shards) await waitUntilReachable(shards[0]!.url, shard.tcpPort);
  } catch (error) {
    await Promise.all(children.map((c) => stopChild(c)));
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return {
    cluster: CLUSTER_NAME,
    shards,
    async kill(shard) {
      const child = children[shard]!;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      await Promise.all(children.map((c) => stopChild(c)));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function waitUntilUp(url: string, child: ChildProcess, dir: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`${url}/?query=SELECT%201`);
      if (response.ok && (await response.text()).trim() === '1') return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let log = '';
  try {
    log = readFileSync(join(dir, 'log', 'clickhouse-server.err.log'), 'utf8')
      .split('\n')
      .slice(-15)
      .join('\n');
  } catch {
    // no log written
  }
  throw new Error(
    `clickhouse-server (${CLICKHOUSE_SERVER}) did not answer on ${url} within 60 s${child.exitCode !== null ? ` (exited with ${child.exitCode})` : ''}; is it installed (apt-get install clickhouse-server)?\n${log}`,
  );
}

async function waitUntilReachable(url: string, tcpPort: number): Promise<void> {
  const query = encodeURIComponent(`SELECT count() FROM remote('127.0.0.1:${tcpPort}', system.one)`);
  const deadline = Date.now() + 30_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/?query=${query}`);
      const text = (await response.text()).trim();
      if (response.ok && text === '1') return;
      last = text.slice(0, 300);
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `clickhouse-server on ${url} could not reach the shard on TCP port ${tcpPort} within 30 s: ${last}`,
  );
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

function serverConfig(
  dir: string,
  p: { http: number; tcp: number; interserver: number },
  remoteServers: string,
): string {
  // ClickHouse 18.16's config root is <yandex>; users_config and mark_cache_size are required.
  // old_parts_lifetime short: a dropped partition must not come back after a restart (18.16 keeps
  // inactive parts for 480 s and reloads them at start).
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${dir}/log/clickhouse-server.log</log>
    <errorlog>${dir}/log/clickhouse-server.err.log</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${p.http}</http_port>
  <tcp_port>${p.tcp}</tcp_port>
  <interserver_http_port>${p.interserver}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <max_connections>1024</max_connections>
  <keep_alive_timeout>3</keep_alive_timeout>
  <max_concurrent_queries>100</max_concurrent_queries>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mark_cache_size>67108864</mark_cache_size>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
  <merge_tree>
    <old_parts_lifetime>1</old_parts_lifetime>
  </merge_tree>
  <remote_servers>
    <${CLUSTER_NAME}>${remoteServers}</${CLUSTER_NAME}>
  </remote_servers>
</yandex>
`;
}

/** `default` writes; `governor_ro` reads only (readonly=1 in its profile: per-request settings cannot lift it). */
const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
      <load_balancing>random</load_balancing>
    </default>
    <readonly>
      <readonly>1</readonly>
      <max_memory_usage>2000000000</max_memory_usage>
    </readonly>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
    <governor_ro>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>readonly</profile>
      <quota>default</quota>
    </governor_ro>
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries>
        <errors>0</errors>
        <result_rows>0</result_rows>
        <read_rows>0</read_rows>
        <execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
`;
