import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore, type Store } from '@governor/store';

/** A fresh DuckDB in its own temp folder; `reopen` simulates a restart on the same files. */
export async function createTempStore() {
  const dir = mkdtempSync(join(tmpdir(), 'governor-alerts-'));
  let store: Store = await createStore({ dataDir: dir, threads: 1, memoryLimit: '512MB' });
  return {
    dir,
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await createStore({ dataDir: dir, threads: 1, memoryLimit: '512MB' });
      return store;
    },
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
