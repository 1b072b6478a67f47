import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Store, createStore } from '@governor/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '@governor/store/testing';
import { createPostgresRepository, migratePostgresControlState } from './create-postgres-repository.ts';
import {
  type RollbackStore,
  type RollbackValue,
  createDuckDbRollbackStore,
  createPostgresRollbackStore,
} from './rollback-store.ts';

// One suite, both databases: the value an actuator found in effect before applying is what the
// rollback restores, after a restart on DuckDB (one node) and on PostgreSQL (a new leader too).

interface Engine {
  name: string;
  /** A database; `open` is a node (re)starting on it. */
  create(): Promise<{ open(): Promise<RollbackStore>; close(): Promise<void> }>;
}

let postgres: PostgresServer;
const engines: Engine[] = [
  {
    name: 'DuckDB',
    async create() {
      const dir = mkdtempSync(join(tmpdir(), 'governor-rollback-'));
      let store: Store | null = null;
      return {
        async open() {
          await store?.close();
          store = await createStore({ dataDir: dir });
          return createDuckDbRollbackStore(store);
        },
        async close() {
          await store?.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async create() {
      // Clients rather than pools: a client's end() waits for its session to close.
      const clients: pg.Client[] = [];
      const connect = async () => {
        const client = new pg.Client({ connectionString: postgres.url });
        clients.push(client);
        await client.connect();
        return client;
      };
      await (await connect()).query('DROP TABLE IF EXISTS control_rollback_values');
      return {
        async open() {
          const client = await connect();
          await migratePostgresControlState(client);
          return createPostgresRollbackStore(client);
        },
        close: async () => {
          for (const client of clients) await client.end();
        },
      };
    },
  },
];

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

const replicas = (over: Partial<RollbackValue> = {}): RollbackValue => ({
  actuator: 'kubernetes',
  recommendationId: 'rec-1',
  actionId: 'act-1',
  object: '/apis/apps/v1/namespaces/inference/deployments/llama-8b-h100/scale',
  value: { replicas: 2 },
  recordedAtMs: 1_765_000_000_000,
  ...over,
});

describe.each(engines)('the rollback store on $name', (engine) => {
  it('restores the value in effect before the first apply, after a restart', async () => {
    const db = await engine.create();
    try {
      const first = await db.open();
      expect(await first.recall('kubernetes', 'rec-1')).toBeNull();
      await first.remember(replicas());
      // A retried apply reads its own change back: the first value stays.
      await first.remember(replicas({ actionId: 'act-2', value: { replicas: 3 }, recordedAtMs: 1 }));
      const weights = replicas({
        recommendationId: 'rec-2',
        object: '/apis/gateway.networking.k8s.io/v1/namespaces/inference/httproutes/llama',
        value: {
          backendRefs: [
            { name: 'llama-8b-h100', weight: 50 },
            { name: 'llama-8b-a100', weight: 50 },
          ],
        },
      });
      await first.remember(weights);
      await first.remember(replicas({ actuator: 'http', value: { replicas: 7 } }));

      const restarted = await db.open();
      expect(await restarted.recall('kubernetes', 'rec-1')).toEqual(replicas());
      expect(await restarted.recall('kubernetes', 'rec-2')).toEqual(weights);
      expect(await restarted.recall('http', 'rec-1')).toEqual(
        replicas({ actuator: 'http', value: { replicas: 7 } }),
      );
      expect(await restarted.recall('kubernetes', 'rec-3')).toBeNull();
      // The restarted node retrying the apply does not replace it either.
      await restarted.remember(replicas({ actionId: 'act-3', value: { replicas: 3 } }));
      expect(await restarted.recall('kubernetes', 'rec-1')).toEqual(replicas());
    } finally {
      await db.close();
    }
  });
});

describe('control state on PostgreSQL', () => {
  it('creates its tables once when nodes start together', async () => {
    const nodes = [1, 2, 3, 4].map(() => new pg.Client({ connectionString: postgres.url }));
    try {
      await Promise.all(nodes.map((node) => node.connect()));
      await nodes[0]!.query(
        'DROP TABLE IF EXISTS control_recommendations, control_audit, control_policies, control_rollback_values',
      );
      await Promise.all(nodes.map((node) => migratePostgresControlState(node)));
      expect(await createPostgresRepository(nodes[1]!).listAudit({ limit: 1 })).toEqual([]);
      expect(await createPostgresRollbackStore(nodes[2]!).recall('kubernetes', 'rec-1')).toBeNull();
    } finally {
      for (const node of nodes) await node.end();
    }
  });
});
