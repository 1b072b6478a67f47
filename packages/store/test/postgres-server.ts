import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A PostgreSQL server for the tests: Debian's postgresql-15 (installed by
// scripts/ensure-system-deps.mjs), a fresh cluster in a temporary directory on a free loopback port,
// removed by stop(). PostgreSQL refuses to run as root, so as root it runs as the `postgres` user
// the package creates.

const BIN = '/usr/lib/postgresql/15/bin';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  stop(): Promise<void>;
}

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

export async function startPostgres(): Promise<PostgresServer> {
  const root = mkdtempSync(join(tmpdir(), 'governor-postgres-'));
  const dataDir = join(root, 'data');
  // As root, the server's processes run as `postgres` (spawn's uid/gid), which owns the directory.
  let user: { uid: number; gid: number } | Record<string, never> = {};
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(root, uid, gid);
    user = { uid, gid };
  }
  try {
    execFileSync(`${BIN}/initdb`, ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync'], {
      stdio: 'ignore',
      ...user,
    });
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(
      `initdb (${BIN}/initdb) failed: is postgresql-15 installed (apt-get install postgresql-15)? ${String(error)}`,
    );
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    `${BIN}/postgres`,
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-k',
      root,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'max_connections=50',
    ],
    { stdio: 'ignore', ...user },
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      execFileSync(`${BIN}/pg_isready`, ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        rmSync(root, { recursive: true, force: true });
        throw new Error(`postgres did not accept connections on port ${port} within 30 s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // SIGINT: PostgreSQL's fast shutdown (disconnects sessions, no wait for clients).
        child.kill('SIGINT');
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
