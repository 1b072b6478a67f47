import pg from 'pg';

// Which node runs the control loop and the alert engine: the one holding a PostgreSQL session-level
// advisory lock (`pg_try_advisory_lock(hashtext(name))`) on a connection of its own. PostgreSQL
// releases the lock when that session ends — the node stopped, crashed (the kernel closes its
// socket and the backend sees EOF at once), or lost the database — so there is no expiry to tune
// and no clock to trust. Every node tries once per interval; the leader instead checks its session
// once per interval (a failed check, or one slower than half the interval, ends its leadership at
// once: it may no longer hold the lock). So when a leader dies, another takes over at its next
// attempt, within one interval of PostgreSQL seeing the session end.

export interface LeaderLeaseOptions {
  connectionString: string;
  /** The lock's name; nodes sharing a database and a name elect one leader. */
  name: string;
  /** How often a follower tries to take the lease and the leader checks it holds it. */
  intervalMs: number;
  /** Called when this node becomes the leader (true) or stops being it (false). */
  onChange?: (leader: boolean) => void;
  /** Called when a connection or check fails (the lease keeps trying). */
  onError?: (error: Error) => void;
}

export interface LeaderLease {
  isLeader(): boolean;
  /** Attempts made to take the lease while a follower (for the tests and /metrics). */
  readonly attempts: number;
  /** Stops trying; a leader releases the lease at once (the next node takes it at its next try). */
  stop(): Promise<void>;
}

export function startLeaderLease(options: LeaderLeaseOptions): LeaderLease {
  let client: pg.Client | null = null;
  let leader = false;
  let attempts = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  const setLeader = (value: boolean) => {
    if (leader === value) return;
    leader = value;
    options.onChange?.(value);
  };
  const dropClient = (error: unknown) => {
    setLeader(false);
    const old = client;
    client = null;
    old?.end().catch(() => undefined);
    options.onError?.(error instanceof Error ? error : new Error(String(error)));
  };

  const tick = async () => {
    try {
      if (!client) {
        const c = new pg.Client({
          connectionString: options.connectionString,
          keepAlive: true,
          connectionTimeoutMillis: Math.max(1000, options.intervalMs),
          query_timeout: Math.max(250, Math.floor(options.intervalMs / 2)),
          application_name: 'governor-leader-lease',
        });
        // An idle client's socket error (the server went away) arrives here, not at a query.
        c.on('error', (error) => {
          if (client === c) dropClient(error);
        });
        await c.connect();
        client = c;
      }
      if (leader) {
        await client.query('SELECT 1');
      } else {
        attempts++;
        const result = await client.query<{ ok: boolean }>(
          'SELECT pg_try_advisory_lock(hashtext($1)) AS ok',
          [options.name],
        );
        if (result.rows[0]?.ok === true && !stopped) setLeader(true);
      }
    } catch (error) {
      dropClient(error);
    }
  };

  const loop = () => {
    if (stopped) return;
    running = tick().finally(() => {
      if (!stopped) timer = setTimeout(loop, options.intervalMs);
    });
  };
  loop();

  return {
    isLeader: () => leader,
    get attempts() {
      return attempts;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      const c = client;
      client = null;
      if (c) {
        if (leader)
          await c.query('SELECT pg_advisory_unlock(hashtext($1))', [options.name]).catch(() => undefined);
        await c.end().catch(() => undefined);
      }
      setLeader(false);
    },
  };
}
