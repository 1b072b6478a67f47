import type { GroupDimension, SignalGroup } from '@governor/conventions';
import type { Labels } from '../labels.ts';

/** A signal group's key as labels; a dimension without a value is left out, as Prometheus drops empty labels. */
export function groupKeyLabels(group: SignalGroup, by: readonly GroupDimension[]): Labels {
  const labels: Labels = {};
  for (const dimension of by) {
    const value = group.key[dimension];
    if (value !== null && value !== undefined && value !== '') labels[dimension] = String(value);
  }
  return labels;
}
