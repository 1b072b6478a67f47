import type { Outcome } from '@governor/conventions';

/** conventions' OUTCOMES, kept here as a type-checked list so the bundle needs no runtime import. */
export const OUTCOMES_FOR_FILTER: readonly Outcome[] = [
  'success',
  'error',
  'timeout',
  'rejected',
  'preempted',
  'cancelled',
];
