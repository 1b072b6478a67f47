import { hashString } from '../engine/random.ts';
import { PREFIX_BLOCK_TOKENS } from './workload-types.ts';
import type { PrefixBlocks } from './workload-types.ts';

// Block-id spaces. Mooncake's remapped ids are small integers (< 2^24); synthetic ids live far above
// so that traces and synthetic workflows mixed in one run never alias each other's prefixes.
const SHARED_PROMPT_SPACE = 2 ** 40;
const SESSION_SPACE = 2 ** 42;
const SESSION_STRIDE = 2 ** 20;

/** Ids of a tenant-wide system prompt (`blocks` blocks), identical across that tenant's tasks. */
export function getSharedPromptBlocks(key: string, blocks: number): number[] {
  const base = SHARED_PROMPT_SPACE + (hashString(key) % 2 ** 20) * 64;
  return Array.from({ length: blocks }, (_, i) => base + i);
}

/**
 * Builds per-turn prefixes of a growing session context: every turn shares the blocks of the
 * turns before it; when the context shrinks (compaction or truncation), a new epoch starts and
 * nothing is shared with the old one.
 */
export function createSessionPrefixer(sessionIndex: number, sharedHead: readonly number[] = []) {
  let epoch = 0;
  let previousTokens = 0;
  return (inputTokens: number): PrefixBlocks => {
    if (inputTokens < previousTokens * 0.8) epoch += 1;
    previousTokens = inputTokens;
    const totalBlocks = Math.floor(inputTokens / PREFIX_BLOCK_TOKENS);
    const headBlocks = Math.min(sharedHead.length, totalBlocks);
    return {
      head: headBlocks === sharedHead.length ? sharedHead : sharedHead.slice(0, headBlocks),
      rangeBase: SESSION_SPACE + sessionIndex * SESSION_STRIDE + epoch * 4096,
      rangeCount: totalBlocks - headBlocks,
    };
  };
}
