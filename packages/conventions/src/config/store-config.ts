import { z } from 'zod';

// Where Governor keeps telemetry and state. `duckdb` (the default): one process, embedded files
// under server.data_dir. `clickhouse`: stateless nodes sharing a ClickHouse cluster for spans,
// metric points and request rollups, and PostgreSQL for recommendations, audit, policies, alert
// state and the leader lease (docs/scale-out.md).

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const ClickHouseStoreConfig = z
  .object({
    url: z
      .url()
      .describe(
        'HTTP URL of a ClickHouse server of the cluster (the nodes query through it), e.g. http://ch-0:8123.',
      ),
    shard_urls: z
      .array(z.url())
      .optional()
      .describe(
        'HTTP URL of one server per shard, for creating the tables on each (without Keeper, ON CLUSTER is unavailable); default: url only, a one-shard cluster.',
      ),
    database: z
      .string()
      .regex(IDENTIFIER, 'letters, digits and _ only')
      .default('governor')
      .describe('The database holding Governor’s tables on every server (created when missing).'),
    cluster: z
      .string()
      .regex(IDENTIFIER, 'letters, digits and _ only')
      .default('governor')
      .describe('The cluster name in the servers’ remote_servers config that the Distributed tables span.'),
    user_env: z
      .string()
      .regex(ENV_NAME)
      .optional()
      .describe(
        'Environment variable holding the ClickHouse user for ingest and internal reads (default user: default).',
      ),
    password_env: z
      .string()
      .regex(ENV_NAME)
      .optional()
      .describe('Environment variable holding that user’s password.'),
    readonly_user_env: z
      .string()
      .regex(ENV_NAME)
      .optional()
      .describe(
        'Environment variable holding a ClickHouse user whose profile sets readonly=1, for ad-hoc SQL (POST /api/sql); unset, ad-hoc SQL is refused on this engine.',
      ),
    readonly_password_env: z
      .string()
      .regex(ENV_NAME)
      .optional()
      .describe('Environment variable holding the read-only user’s password.'),
  })
  .strict();
export type ClickHouseStoreConfig = z.infer<typeof ClickHouseStoreConfig>;

export const PostgresStoreConfig = z
  .object({
    url_env: z
      .string()
      .regex(ENV_NAME)
      .default('GOVERNOR_POSTGRES_URL')
      .describe(
        'Environment variable holding the PostgreSQL connection string (postgres://user:pass@host/db).',
      ),
  })
  .strict();
export type PostgresStoreConfig = z.infer<typeof PostgresStoreConfig>;

export const StoreConfig = z
  .object({
    engine: z
      .enum(['duckdb', 'clickhouse'])
      .default('duckdb')
      .describe(
        'duckdb: embedded in this process, files under server.data_dir. clickhouse: ClickHouse for telemetry and PostgreSQL for state, shared by several Governor nodes (docs/scale-out.md).',
      ),
    clickhouse: ClickHouseStoreConfig.optional().describe(
      'The ClickHouse cluster; required with engine: clickhouse.',
    ),
    postgres: PostgresStoreConfig.default(PostgresStoreConfig.parse({})).describe(
      'The PostgreSQL the nodes share (engine: clickhouse).',
    ),
  })
  .strict()
  .refine((s) => s.engine !== 'clickhouse' || s.clickhouse !== undefined, {
    message: 'engine: clickhouse needs a clickhouse section (at least clickhouse.url)',
    path: ['clickhouse'],
  })
  .describe('Where telemetry and state live (docs/scale-out.md).');
export type StoreConfig = z.infer<typeof StoreConfig>;

/** The ClickHouse section of a config whose engine is clickhouse (the schema requires it then). */
export function clickHouseStoreOf(store: StoreConfig): ClickHouseStoreConfig {
  if (store.engine !== 'clickhouse' || !store.clickhouse)
    throw new Error('store.engine is not clickhouse: no ClickHouse section');
  return store.clickhouse;
}
