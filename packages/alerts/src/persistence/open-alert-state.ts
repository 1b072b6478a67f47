import type { Store } from '@governor/store';
import { type AlertRepository, createAlertRepository } from './alert-repository.ts';
import {
  createPostgresAlertRepository,
  migratePostgresAlertState,
} from './create-postgres-alert-repository.ts';
import { createDeliveryLog, type DeliveryLog } from './delivery-log.ts';
import { createPostgresDeliveryLog } from './postgres-delivery-log.ts';
import type { PostgresQueryable } from './postgres-queryable.ts';

/** Alert state in PostgreSQL, shared by Governor nodes (store.engine: clickhouse). */
export interface AlertStateOptions {
  /** A pg.Pool (or client) on the database the nodes share. */
  postgres: PostgresQueryable;
}

/**
 * Where the engine keeps its state: PostgreSQL when `state` is given (its tables created when
 * missing), else the embedded store.
 */
export async function openAlertState(
  options: { store?: Store; state?: AlertStateOptions },
  now: () => number,
): Promise<{ repository: AlertRepository; deliveryLog: DeliveryLog }> {
  if (options.state) {
    const db = options.state.postgres;
    await migratePostgresAlertState(db);
    return { repository: createPostgresAlertRepository(db, now), deliveryLog: createPostgresDeliveryLog(db) };
  }
  if (!options.store)
    throw new Error('the alert engine needs a store, or state: { postgres } for shared state');
  return {
    repository: createAlertRepository(options.store, now),
    deliveryLog: createDeliveryLog(options.store),
  };
}
