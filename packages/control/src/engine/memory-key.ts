import {
  RECOMMENDATION_KINDS,
  type RecommendationKind,
  type RecommendationTarget,
} from '@governor/conventions';
import { formatTargetKey, parseTargetKey } from '../target-key.ts';
import type { Direction } from './control-types.ts';

// Keys of the engine's per-target maps, built and read only here: `ControlState.memory` is keyed by
// (kind, target), `rejected` and `holds` by (kind, target, direction). The brands keep one from
// being used for the other, and a hand-built string from being used for either.

declare const brand: unique symbol;
/** One (kind, target): the key of ControlState.memory. */
export type MemoryKey = string & { readonly [brand]: 'MemoryKey' };
/** One (kind, target, direction): the key of ControlState.rejected and ControlState.holds. */
export type DecisionKey = string & { readonly [brand]: 'DecisionKey' };

/** `target` is a target or its formatTargetKey. */
export function memoryKey(kind: RecommendationKind, target: RecommendationTarget | string): MemoryKey {
  return `${kind}|${typeof target === 'string' ? target : formatTargetKey(target)}` as MemoryKey;
}

export function decisionKey(
  kind: RecommendationKind,
  target: RecommendationTarget | string,
  direction: Direction,
): DecisionKey {
  return `${memoryKey(kind, target)}|${direction}` as DecisionKey;
}

/** The kind and target a memory key names. */
export function parseMemoryKey(key: MemoryKey): { kind: RecommendationKind; target: RecommendationTarget } {
  const bar = key.indexOf('|');
  const kind = key.slice(0, bar) as RecommendationKind;
  if (!RECOMMENDATION_KINDS.includes(kind)) throw new Error(`not a memory key: ${key}`);
  return { kind, target: parseTargetKey(key.slice(bar + 1)) };
}
