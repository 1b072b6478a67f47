// The real engines the scale-out tests run against, for other packages' tests: a ClickHouse cluster
// of clickhouse-server processes and a PostgreSQL server, each on free loopback ports.
export {
  type ClickHouseCluster,
  type ClickHouseShard,
  startClickHouseCluster,
} from './clickhouse-cluster.ts';
export { type PostgresServer, startPostgres } from './postgres-server.ts';
export { expectClose } from './expect-close.ts';
