// Preloaded with `node -r` ahead of everything else (package.json's `governor` and `start` scripts,
// spawnGovernorProcess): sizes libuv's thread pool before its first use, which is the only moment
// UV_THREADPOOL_SIZE is read. An ESM `--import` is too late: loading it already starts the pool.
//
// Every DuckDB statement holds one of those threads until it returns, so the default of 4 let long
// reads and a checkpoint hold all four while the writer's next appender and /metrics waited their
// turn (soak at 80 % of capacity with heavy reads; thread dumps with the event loop idle: readers in
// quantile aggregates, CHECKPOINT, a commit waiting for it).
// The store opens at most STORE_CONNECTIONS connections (packages/store/src/create-store.ts); the
// rest is for gunzip, fs and dns. A larger size given by the operator is kept.
'use strict';

const THREADPOOL_SIZE = 16;
const given = Number(process.env.UV_THREADPOOL_SIZE);
if (!(Number.isInteger(given) && given >= THREADPOOL_SIZE))
  process.env.UV_THREADPOOL_SIZE = String(THREADPOOL_SIZE);
