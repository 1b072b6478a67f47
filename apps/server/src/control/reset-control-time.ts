import { readFileSync } from 'node:fs';
import type { PostgresQueryable } from '@governor/alerts';
import type { Store } from '@governor/store';

const RESET_SQL = readFileSync(new URL('./reset-control-time.sql', import.meta.url), 'utf8');
const RESET_POSTGRES_SQL = readFileSync(
  new URL('./reset-control-time.postgres.sql', import.meta.url),
  'utf8',
);
const COUNT_SQL = `SELECT
  (SELECT count(*) FROM control_recommendations
     WHERE greatest(created_ns, updated_ns, coalesce(applied_ns, 0), coalesce(verified_ns, 0)) > $to_ns)::INTEGER AS recommendations,
  (SELECT count(*) FROM control_audit WHERE at_ns > $to_ns)::INTEGER AS audit,
  (SELECT count(*) FROM alert_engine_state
     WHERE name = 'evaluated_until_ns' AND TRY_CAST(value AS BIGINT) > $to_ns)::INTEGER AS alerts`;
const COUNT_POSTGRES_SQL = `SELECT
  (SELECT count(*) FROM control_recommendations
     WHERE greatest(created_ns, updated_ns, coalesce(applied_ns, 0), coalesce(verified_ns, 0)) > $1::bigint)::integer AS recommendations,
  (SELECT count(*) FROM control_audit WHERE at_ns > $1::bigint)::integer AS audit,
  (SELECT count(*) FROM alert_engine_state
     WHERE name = 'evaluated_until_ns'
       AND CASE
         WHEN value !~ '^-?[0-9]{1,19}$' THEN NULL
         WHEN value::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 THEN value::bigint
       END > $1::bigint)::integer AS alerts`;

export interface ControlTimeReset {
  /** Recommendations, audit entries and alert cursors whose event time was moved back to toNs. */
  recommendations: number;
  audit: number;
  alerts: number;
}

const NOTHING: ControlTimeReset = { recommendations: 0, audit: 0, alerts: 0 };

/**
 * Moves control and alert state dated after `toNs` back to `toNs` (one transaction), for
 * `governor control reset --to now`; with `onlyIfAnyAfterNs` (at start: the event-time bound),
 * only when some state lies past that bound, i.e. was poisoned by an event dated in the future.
 */
export async function resetControlTime(
  store: Store,
  toNs: bigint,
  onlyIfAnyAfterNs?: bigint,
): Promise<ControlTimeReset> {
  const count = async (afterNs: bigint) =>
    (await store.query<ControlTimeReset>(COUNT_SQL, { to_ns: afterNs }))[0] ?? NOTHING;
  const total = (c: ControlTimeReset) => c.recommendations + c.audit + c.alerts;
  if (onlyIfAnyAfterNs !== undefined && total(await count(onlyIfAnyAfterNs)) === 0) return NOTHING;
  const found = await count(toNs);
  if (total(found) === 0) return found;
  // One script, one transaction; toNs is a bigint, so inlining it is safe (DuckDB binds no
  // parameters across a multi-statement script).
  const script = RESET_SQL.replaceAll('$to_ns', toNs.toString());
  try {
    await store.execute(`BEGIN TRANSACTION;\n${script}\nCOMMIT;`);
  } catch (error) {
    await store.execute('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return found;
}

/**
 * resetControlTime on the PostgreSQL tables that Governor nodes share (their migrations,
 * migratePostgresControlState and migratePostgresAlertState, must have run).
 */
export async function resetPostgresControlTime(
  db: PostgresQueryable,
  toNs: bigint,
  onlyIfAnyAfterNs?: bigint,
): Promise<ControlTimeReset> {
  const counts = (row: Record<string, unknown> | undefined): ControlTimeReset => ({
    recommendations: Number(row?.recommendations ?? 0),
    audit: Number(row?.audit ?? 0),
    alerts: Number(row?.alerts ?? 0),
  });
  if (onlyIfAnyAfterNs !== undefined) {
    const past = counts((await db.query(COUNT_POSTGRES_SQL, [onlyIfAnyAfterNs.toString()])).rows[0]);
    if (past.recommendations + past.audit + past.alerts === 0) return NOTHING;
  }
  return counts((await db.query(RESET_POSTGRES_SQL, [toNs.toString()])).rows[0]);
}
