import { migratePostgresAlertState } from '@governor/alerts';
import {
  type AlertStateBackend,
  type PostgresServer,
  alertStateBackends,
  startPostgres,
} from '@governor/alerts/testing';
import {
  type ControlRepository,
  createDuckDbRepository,
  createPostgresRepository,
  migratePostgresControlState,
} from '@governor/control';
import { auditEntry, scaleRecord } from '@governor/control/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlTimeReset, resetControlTime, resetPostgresControlTime } from './reset-control-time.ts';

// One suite, both databases: control and alert state dated in the future (left by events from
// the future before intake refused them) moves back the same on the embedded store and on the
// PostgreSQL tables Governor nodes share.

type RecommendationRecord = Parameters<ControlRepository['saveRecommendations']>[0][number];
type AuditEntry = Parameters<ControlRepository['appendAudit']>[0][number];

const MIN = 60_000_000_000n;
const NOW = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z
const PAST = NOW - 10n * MIN;
const BOUND = NOW + 5n * MIN; // now + the accepted skew
const FUTURE = 4_102_444_800_000_000_000n; // 2100-01-01

function recommendation(id: string, times: Partial<RecommendationRecord>): RecommendationRecord {
  return scaleRecord(id, 0, { createdNs: PAST, updatedNs: PAST, hold: null, ...times });
}

function audit(id: string, atNs: bigint): AuditEntry {
  return { ...auditEntry(id, 'proposed-in-2100', 0), atNs, recordedAtMs: 1_767_225_600_000 };
}

interface Db {
  repository: ControlRepository;
  reset(toNs: bigint, onlyIfAnyAfterNs?: bigint): Promise<ControlTimeReset>;
  /** Runs one statement written the same for both databases. */
  sql(text: string): Promise<Record<string, unknown>[]>;
  dispose(): Promise<void>;
}

let postgres: PostgresServer | undefined;
beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

async function open(backend: AlertStateBackend): Promise<Db> {
  const temp = await backend.open();
  if (!backend.shared) {
    const { store } = temp.engineOptions as { store: Parameters<typeof resetControlTime>[0] };
    return {
      repository: createDuckDbRepository(store),
      reset: (toNs, bound) => resetControlTime(store, toNs, bound),
      sql: (text) => store.query(text),
      dispose: () => temp.dispose(),
    };
  }
  const pool = temp.connect();
  try {
    await migratePostgresControlState(pool);
    await migratePostgresAlertState(pool);
  } catch (error) {
    await temp.dispose();
    throw error;
  }
  return {
    repository: createPostgresRepository(pool),
    reset: (toNs, bound) => resetPostgresControlTime(pool, toNs, bound),
    sql: async (text) => (await pool.query(text)).rows,
    dispose: () => temp.dispose(),
  };
}

describe.each(alertStateBackends(() => postgres!.url))('resetting control time on $name', (backend) => {
  it('moves what lies past the bound back to now: unapplied stays unapplied, earlier state stays', async () => {
    const db = await open(backend);
    try {
      const proposed = recommendation('proposed-in-2100', { createdNs: FUTURE, updatedNs: FUTURE });
      const applied = recommendation('applied-in-2100', {
        state: 'applied',
        updatedNs: FUTURE,
        appliedNs: FUTURE,
        actionId: 'act-1',
      });
      const earlier = recommendation('earlier', { state: 'rejected', updatedNs: PAST + MIN });
      await db.repository.saveRecommendations([proposed, applied, earlier]);
      await db.repository.appendAudit([audit('au-1', PAST), audit('au-2', FUTURE)]);
      await db.sql(`UPDATE alert_engine_state SET value = '${FUTURE}' WHERE name = 'evaluated_until_ns'`);
      const cursor = async () =>
        (await db.sql("SELECT value FROM alert_engine_state WHERE name = 'evaluated_until_ns'"))[0]?.value;

      expect(await db.reset(NOW, BOUND)).toEqual({ recommendations: 2, audit: 1, alerts: 1 });
      expect(await db.repository.getRecommendation(proposed.id)).toEqual({
        ...proposed,
        createdNs: NOW,
        updatedNs: NOW,
      });
      expect(await db.repository.getRecommendation(applied.id)).toEqual({
        ...applied,
        updatedNs: NOW,
        appliedNs: NOW,
      });
      expect(await db.repository.getRecommendation(earlier.id)).toEqual(earlier);
      // Still open, not taken for applied: the loop goes on deciding on it.
      expect((await db.repository.loadActive()).map((r) => [r.id, r.state, r.appliedNs]).sort()).toEqual([
        [applied.id, 'applied', NOW],
        [proposed.id, 'proposed', null],
      ]);
      expect(await db.repository.listAudit({ limit: 10 })).toEqual([
        { ...audit('au-2', FUTURE), atNs: NOW },
        audit('au-1', PAST),
      ]);
      expect(await cursor()).toBe(NOW.toString());

      // At the next start nothing lies past the bound: nothing moves.
      expect(await db.reset(NOW, BOUND)).toEqual({ recommendations: 0, audit: 0, alerts: 0 });
      // `governor control reset --to` has no bound: everything after the given time moves.
      expect(await db.reset(PAST + MIN)).toEqual({ recommendations: 2, audit: 1, alerts: 1 });
      expect(await cursor()).toBe((PAST + MIN).toString());
      expect(await db.repository.getRecommendation(earlier.id)).toEqual(earlier);
    } finally {
      await db.dispose();
    }
  });
});
