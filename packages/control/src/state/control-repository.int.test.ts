import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Store, createStore } from '@governor/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '@governor/store/testing';
import type { RecommendationRecord } from '../engine/control-types.ts';
import type { ControlRepository } from './control-repository.ts';
import { createDuckDbRepository } from './create-duckdb-repository.ts';
import { createPostgresRepository, migratePostgresControlState } from './create-postgres-repository.ts';
import { RECORDS_T0_NS, auditEntry, scaleRecord } from '../../test/records.ts';

// One suite, both databases: what a Governor node saves of its recommendations, audit log and
// policies reads back the same from DuckDB (one node) and from PostgreSQL (nodes sharing it).

const T = RECORDS_T0_NS;

interface Engine {
  name: string;
  open(): Promise<{ repository: ControlRepository; close(): Promise<void> }>;
}

let postgres: PostgresServer;
const engines: Engine[] = [
  {
    name: 'DuckDB',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'governor-repo-'));
      const store: Store = await createStore({ dataDir: dir });
      return {
        repository: createDuckDbRepository(store),
        async close() {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      // A client, not a pool: its end() waits for the session to close, so stopping the server
      // afterwards kills no session mid-close.
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      await client.query('DROP TABLE IF EXISTS control_recommendations, control_audit, control_policies');
      await migratePostgresControlState(client);
      await migratePostgresControlState(client);
      return { repository: createPostgresRepository(client), close: () => client.end() };
    },
  },
];

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

describe.each(engines)('the control repository on $name', (engine) => {
  it('reads back what it saved: records with every field, newest first, filtered; updates in place', async () => {
    const { repository, close } = await engine.open();
    try {
      const a = scaleRecord('rec-a', 1);
      const b = scaleRecord('rec-b', 2, {
        kind: 'shift_traffic',
        action: { weights: { 'llama-8b-h100': 0.25, 'llama-8b-a100': 0.75 } },
        previousAction: { weights: { 'llama-8b-h100': 0.5, 'llama-8b-a100': 0.5 } },
        cause: 'efficiency',
        state: 'applied',
        appliedNs: T + 150_000_000_000n,
        actionId: 'act-1',
        hold: null,
      } as Partial<RecommendationRecord>);
      const c = scaleRecord('rec-c', 3, { state: 'rejected', hold: null, waits: null });
      await repository.saveRecommendations([a, b, c]);

      expect(await repository.getRecommendation('rec-b')).toEqual(b);
      expect(await repository.getRecommendation('missing')).toBeNull();
      expect((await repository.listRecommendations({ limit: 10 })).map((r) => r.id)).toEqual([
        'rec-c',
        'rec-b',
        'rec-a',
      ]);
      expect((await repository.listRecommendations({ limit: 2 })).map((r) => r.id)).toEqual([
        'rec-c',
        'rec-b',
      ]);
      expect(
        (await repository.listRecommendations({ limit: 10, states: ['proposed', 'rejected'] })).map(
          (r) => r.id,
        ),
      ).toEqual(['rec-c', 'rec-a']);
      expect(
        (await repository.listRecommendations({ limit: 10, kind: 'shift_traffic' })).map((r) => r.id),
      ).toEqual(['rec-b']);
      // Open and applied ones, oldest first by when they were applied or created.
      expect((await repository.loadActive()).map((r) => r.id)).toEqual(['rec-a', 'rec-b']);

      const approved = {
        ...a,
        state: 'approved',
        updatedNs: a.updatedNs + 1n,
        hold: null,
      } as RecommendationRecord;
      await repository.saveRecommendations([approved]);
      expect(await repository.getRecommendation('rec-a')).toEqual(approved);
      expect(await repository.listRecommendations({ limit: 10 })).toHaveLength(3);
    } finally {
      await close();
    }
  });

  it('keeps the audit log in the order it was appended, per recommendation too', async () => {
    const { repository, close } = await engine.open();
    try {
      await repository.appendAudit([auditEntry('au-1', 'rec-a', 1), auditEntry('au-2', 'rec-b', 2)]);
      await repository.appendAudit([auditEntry('au-3', 'rec-a', 3)]);
      expect((await repository.listAudit({ limit: 10 })).map((e) => e.id)).toEqual(['au-3', 'au-2', 'au-1']);
      expect((await repository.listAudit({ limit: 10, recommendationId: 'rec-a' })).map((e) => e.id)).toEqual(
        ['au-3', 'au-1'],
      );
      expect((await repository.listAudit({ limit: 1 }))[0]).toEqual(auditEntry('au-3', 'rec-a', 3));
    } finally {
      await close();
    }
  });

  it('stores one set of API-set policies, replaced as a whole', async () => {
    const { repository, close } = await engine.open();
    try {
      expect(await repository.loadPolicies()).toBeNull();
      const first = {
        configHash: 'h1',
        policies: [{ name: 'scale-up', kinds: ['scale'], mode: 'auto' }],
        updatedBy: 'alice',
        updatedAtMs: 1,
      };
      await repository.savePolicies(first as never);
      expect(await repository.loadPolicies()).toEqual(first);
      const second = { ...first, configHash: 'h2', policies: [], updatedBy: 'bob', updatedAtMs: 2 };
      await repository.savePolicies(second as never);
      expect(await repository.loadPolicies()).toEqual(second);
    } finally {
      await close();
    }
  });
});
