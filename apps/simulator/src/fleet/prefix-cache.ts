import { countPrefixBlocks, getPrefixBlock } from '../workload/workload-types.ts';
import type { PrefixBlocks } from '../workload/workload-types.ts';

/**
 * A replica's automatic prefix cache: block ids kept in LRU order up to the KV capacity in blocks,
 * as vLLM keeps freed blocks' contents until they are reused. A prompt hits on its leading run of
 * cached blocks only (a prefix, not a set).
 */
export interface PrefixCache {
  /** Number of leading blocks of `prefix` present in the cache. */
  matchBlocks(prefix: PrefixBlocks): number;
  insert(prefix: PrefixBlocks): void;
  clear(): void;
  readonly sizeBlocks: number;
}

export function createPrefixCache(capacityBlocks: number): PrefixCache {
  const lru = new Map<number, true>();
  return {
    matchBlocks(prefix) {
      const total = countPrefixBlocks(prefix);
      let matched = 0;
      while (matched < total && lru.has(getPrefixBlock(prefix, matched))) matched++;
      return matched;
    },
    insert(prefix) {
      const total = countPrefixBlocks(prefix);
      for (let i = 0; i < total; i++) {
        const id = getPrefixBlock(prefix, i);
        lru.delete(id);
        lru.set(id, true);
      }
      if (lru.size > capacityBlocks) {
        let excess = lru.size - capacityBlocks;
        for (const id of lru.keys()) {
          if (excess-- <= 0) break;
          lru.delete(id);
        }
      }
    },
    clear() {
      lru.clear();
    },
    get sizeBlocks() {
      return lru.size;
    },
  };
}
