import type {
  ExportStorage,
  RetentionRunSummary,
  StorageResponse,
  TableStorage,
} from '@governor/conventions';
import { requestJson } from '../lib/api-client.ts';

export type { ExportStorage, RetentionRunSummary, StorageResponse, TableStorage };

// GET /api/storage (scope read; docs/operations.md, "Retention"): disk use per table, the Parquet
// export folder, retention TTLs, the next run and the last run per table.

export function fetchStorage(signal?: AbortSignal): Promise<StorageResponse> {
  return requestJson<StorageResponse>('/api/storage', signal ? { signal } : {});
}
