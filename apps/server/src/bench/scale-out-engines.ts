import { existsSync, readFileSync } from 'node:fs';
import { readProcessCpu } from './spawn-governor-process.ts';

// What the benchmarks on store.engine: clickhouse need from the machine: the ClickHouse and
// PostgreSQL servers the test helpers (@governor/store/testing) start as processes, and CPU
// figures for processes that are not Governor's (the clickhouse-server processes) and for the
// whole machine (what nobody in the benchmark used: other tenants' load).

const CLICKHOUSE_SERVER = '/usr/sbin/clickhouse-server';
const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';

/** Throws a message saying what to install when a server the benchmark starts is missing. */
export function requireServers(what: { clickhouse: boolean; postgres: boolean }, command: string): void {
  const missing: string[] = [];
  if (what.clickhouse && !existsSync(CLICKHOUSE_SERVER))
    missing.push(`clickhouse-server (${CLICKHOUSE_SERVER}; apt-get install clickhouse-server)`);
  if (what.postgres && !(existsSync(`${POSTGRES_BIN}/postgres`) && existsSync(`${POSTGRES_BIN}/initdb`)))
    missing.push(`PostgreSQL 15 (${POSTGRES_BIN}/postgres and initdb; apt-get install postgresql-15)`);
  if (missing.length > 0)
    throw new BenchSetupError(
      `${command} starts its own servers on loopback and needs ${missing.join(' and ')}; ` +
        '`node scripts/ensure-system-deps.mjs` installs them (Debian/Ubuntu)',
    );
}

/** A benchmark that cannot start on this machine: the CLI prints the message alone (exit code 1). */
export class BenchSetupError extends Error {
  override readonly name = 'BenchSetupError';
}

/** User + system CPU ms of a process and all its threads (Linux /proc), 0 when it is gone. */
export function processCpuMs(pid: number): number {
  return readProcessCpu(pid)?.processCpuMs ?? 0;
}

/** Busy CPU ms of the whole machine since boot (Linux /proc/stat; all cores), null elsewhere. */
export function machineBusyCpuMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    // cpu user nice system idle iowait irq softirq steal …, in clock ticks (1/100 s); steal is
    // time the hypervisor gave to others, not busy time here.
    const [user, nice, system, _idle, _iowait, irq, softirq] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number) as number[];
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)) * 10;
  } catch {
    return null;
  }
}

/** Peak resident set size (VmHWM) of a live process in bytes (Linux /proc), 0 when unknown. */
export function peakRssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
