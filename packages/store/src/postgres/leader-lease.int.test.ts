import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '../../test/postgres-server.ts';
import { type LeaderLease, startLeaderLease } from './leader-lease.ts';

// One leader at a time among nodes sharing a PostgreSQL database, and a new one soon after the
// leader goes away — stopped, or killed with SIGKILL mid-run (another process, so PostgreSQL sees
// its socket close as it would a crashed node's).

const INTERVAL_MS = 200;
let server: PostgresServer;
const leases: LeaderLease[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await Promise.all(leases.map((l) => l.stop()));
  await server?.stop();
});

function lease(name: string): LeaderLease {
  const l = startLeaderLease({ connectionString: server.url, name, intervalMs: INTERVAL_MS });
  leases.push(l);
  return l;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the leader lease', () => {
  it('has exactly one leader among three nodes, and hands over when the leader stops', async () => {
    const nodes = [lease('one-leader'), lease('one-leader'), lease('one-leader')];
    await until(() => nodes.some((n) => n.isLeader()), 'a leader');
    for (let i = 0; i < 20; i++) {
      expect(nodes.filter((n) => n.isLeader())).toHaveLength(1);
      await sleep(INTERVAL_MS / 2);
    }
    const first = nodes.find((n) => n.isLeader())!;
    await first.stop();
    const rest = nodes.filter((n) => n !== first);
    await until(() => rest.some((n) => n.isLeader()), 'a new leader');
    expect(rest.filter((n) => n.isLeader())).toHaveLength(1);
    // Another lock name elects its own leader.
    const other = lease('another-name');
    await until(() => other.isLeader(), 'the other name’s leader');
  });

  it('is taken over within two attempts after the leader’s process is killed', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../../test/hold-leader-lease.ts', import.meta.url)),
        server.url,
        'failover',
        String(INTERVAL_MS),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await until(() => output.includes('leader'), 'the child to lead');
    const follower = lease('failover');
    await sleep(INTERVAL_MS * 3);
    expect(follower.isLeader()).toBe(false);

    const attemptsBefore = follower.attempts;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    await until(() => follower.isLeader(), 'the follower to take over');
    // The attempt that took the lease was the first or second after the kill: within two intervals.
    expect(follower.attempts - attemptsBefore).toBeLessThanOrEqual(2);
  });
});
