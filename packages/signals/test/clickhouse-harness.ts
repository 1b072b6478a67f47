import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import {
  type ClickHouseReader,
  type ClickHouseRollupIo,
  type ClickHouseWriter,
  type DescribedColumn,
  clickHouseSchemaStatements,
  createClickHouseReader,
  createClickHouseRollupIo,
  createClickHouseWriter,
  describeDuckDbTable,
  requestFactsStatements,
} from '@governor/store';
import { type ClickHouseCluster, startClickHouseCluster } from '@governor/store/testing';

// A two-shard ClickHouse cluster with Governor's tables, for the signals' tests on both engines.

export const CLICKHOUSE_DB = 'governor';

export interface ClickHouseForSignals {
  cluster: ClickHouseCluster;
  /** A client of the first shard (queries through the Distributed tables reach every shard). */
  client: ClickHouseClient;
  factColumns: DescribedColumn[];
  io: ClickHouseRollupIo;
  writer: ClickHouseWriter;
  /** Internal reads as the signals make them (createClickHouseReader). */
  reader: ClickHouseReader;
  /** Runs a query and returns its rows as JSON (Int64 as strings, NaN/Inf as strings). */
  rows<T = Record<string, unknown>>(query: string, settings?: Record<string, number>): Promise<T[]>;
  /** Empties the tables on every shard. */
  truncate(): Promise<void>;
  stop(): Promise<void>;
}

export async function startClickHouseForSignals(): Promise<ClickHouseForSignals> {
  const cluster = await startClickHouseCluster({ shards: 2 });
  const factColumns = await describeDuckDbTable('request_facts');
  const clients = cluster.shards.map((s) =>
    createClient({ url: s.url, log: { level: ClickHouseLogLevel.OFF } }),
  );
  for (const c of clients)
    for (const statement of [
      ...clickHouseSchemaStatements({ database: CLICKHOUSE_DB, cluster: cluster.cluster }),
      ...requestFactsStatements({ database: CLICKHOUSE_DB, cluster: cluster.cluster }, factColumns),
    ])
      await c.command({ query: statement });
  const client = clients[0]!;
  return {
    cluster,
    client,
    factColumns,
    io: createClickHouseRollupIo(client, CLICKHOUSE_DB, factColumns),
    writer: createClickHouseWriter(client, CLICKHOUSE_DB),
    reader: createClickHouseReader(client, { database: CLICKHOUSE_DB, readDeadlineMs: 30_000, factColumns }),
    async rows<T>(query: string, settings: Record<string, number> = {}) {
      const result = await client.query({
        query,
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_denormals: 1, ...settings },
      });
      return result.json<T>();
    },
    async truncate() {
      for (const c of clients)
        for (const table of [
          'span_store',
          'metric_store',
          'request_facts',
          'request_extent',
          'span_newest',
          'metric_newest',
        ])
          await c.command({ query: `TRUNCATE TABLE ${CLICKHOUSE_DB}.${table}_local` });
    },
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      await cluster.stop();
    },
  };
}
