import { findJemalloc } from '../allocator.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

// `governor start` as a child process, for the benchmark (server and load generator on separate
// event loops) and for tests that kill it. Runs `node -r threadpool-preload.cjs --import tsx cli.ts` rather than the `tsx`
// wrapper so that `pid` is the server itself (a SIGKILL cannot be relayed by a wrapper).

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const CLI_PATH = fileURLToPath(new URL('../cli.ts', import.meta.url));
/** Sizes libuv's pool before it starts (see the file); `pnpm governor` preloads it too. */
export const THREADPOOL_PRELOAD = fileURLToPath(new URL('../../threadpool-preload.cjs', import.meta.url));
/** Node's arguments before CLI_PATH for a Governor process, as `pnpm governor` runs it. */
export const GOVERNOR_NODE_ARGS: readonly string[] = ['-r', THREADPOOL_PRELOAD, '--import', 'tsx'];

export interface GovernorProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly url: string;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** Current and peak resident set size in bytes (Linux /proc), null elsewhere. */
  memory(): { rssBytes: number; peakRssBytes: number } | null;
  /** CPU time so far (Linux /proc): the main thread's, and the whole process's. */
  cpu(): ThreadCpu | null;
  /** The server's malloc: jemalloc when its library is mapped (Linux /proc), else glibc's. */
  allocator(): 'jemalloc' | 'glibc' | 'unknown';
}

export interface ThreadCpu {
  /** Time the main thread ran on a CPU. */
  mainThreadOnCpuMs: number;
  /** Time the main thread was runnable but waiting for a CPU (other processes' load). */
  mainThreadWaitingMs: number;
  /** User + system time of all threads. */
  processCpuMs: number;
}

/** CPU time of a process's main thread and of the whole process (Linux), null elsewhere. */
export function readProcessCpu(pid: number | 'self'): ThreadCpu | null {
  try {
    const main = pid === 'self' ? `/proc/self/task/${process.pid}` : `/proc/${pid}/task/${pid}`;
    const [onCpuNs, waitingNs] = readFileSync(`${main}/schedstat`, 'utf8').split(' ').map(Number) as [
      number,
      number,
    ];
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second on Linux).
    const ticks = Number(fields[11]) + Number(fields[12]);
    return {
      mainThreadOnCpuMs: onCpuNs / 1e6,
      mainThreadWaitingMs: waitingNs / 1e6,
      processCpuMs: ticks * 10,
    };
  } catch {
    return null;
  }
}

export interface SpawnOptions {
  dataDir: string;
  /** Extra `governor start` arguments (e.g. --config). */
  args?: readonly string[];
  /** Environment variables on top of a copy of process.env without GOVERNOR_*. */
  env?: Record<string, string>;
  httpPort?: number;
  grpcPort?: number;
  /** How long to wait for /api/health; default 60 s. */
  startTimeoutMs?: number;
}

/** A port that was free a moment ago (the OS hands out a fresh ephemeral port each time). */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function spawnGovernorProcess(options: SpawnOptions): Promise<GovernorProcess> {
  const httpPort = options.httpPort ?? (await findFreePort());
  const grpcPort = options.grpcPort ?? (await findFreePort());
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('GOVERNOR_')) env[k] = v;
  // As `pnpm governor` runs it (scripts/run-governor.sh; docs/operations.md, "Memory"): jemalloc
  // when installed, else glibc's malloc limited to two arenas.
  const jemalloc = env.LD_PRELOAD ? null : findJemalloc({ ...env, ...options.env });
  Object.assign(
    env,
    {
      GOVERNOR_LOG_LEVEL: 'warn',
      MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? '2',
      ...(jemalloc ? { LD_PRELOAD: jemalloc } : {}),
    },
    options.env,
  );
  const child = spawn(
    process.execPath,
    [
      ...GOVERNOR_NODE_ARGS,
      CLI_PATH,
      'start',
      '--data-dir',
      options.dataDir,
      '--host',
      '127.0.0.1',
      '--http-port',
      String(httpPort),
      '--grpc-port',
      String(grpcPort),
      ...(options.args ?? []),
    ],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  let exitedEarly: number | string | null = null;
  void exited.then((code) => {
    exitedEarly = code;
  });
  for (;;) {
    if (exitedEarly !== null)
      throw new Error(`governor exited (${exitedEarly}) before it was up:\n${output}`);
    try {
      const response = await fetch(`${url}/api/health`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`governor did not answer ${url}/api/health in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pid = child.pid!;
  return {
    child,
    pid,
    url,
    httpPort,
    grpcPort,
    output: () => output,
    exited,
    cpu: () => readProcessCpu(pid),
    allocator() {
      try {
        return readFileSync(`/proc/${pid}/maps`, 'latin1').includes('libjemalloc') ? 'jemalloc' : 'glibc';
      } catch {
        return 'unknown';
      }
    },
    memory() {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const kb = (name: string) =>
          Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
        return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
      } catch {
        return null;
      }
    },
  };
}
