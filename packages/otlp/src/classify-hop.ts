import { DEFAULT_HOP_RULES, type HopRule, isHop } from '@governor/conventions';
import type { Attributes } from './types.ts';

interface CompiledRule {
  hop: string;
  spanName: RegExp | null;
  serviceName: RegExp | null;
  attribute: string | null;
  attributeEquals: string | null;
}

export interface HopClassifier {
  classify(spanName: string, service: string | null, attributes: Attributes): string | null;
}

/** Config rules are tried before the defaults; within a rule every given condition must hold. */
export function createHopClassifier(extraRules: readonly HopRule[] = []): HopClassifier {
  const rules: CompiledRule[] = [...extraRules, ...DEFAULT_HOP_RULES].map((rule) => ({
    hop: rule.hop,
    spanName: rule.spanName ? new RegExp(rule.spanName, 'i') : null,
    serviceName: rule.serviceName ? new RegExp(rule.serviceName, 'i') : null,
    attribute: rule.attribute ?? null,
    attributeEquals: rule.attributeEquals ?? null,
  }));
  return {
    classify(spanName, service, attributes) {
      const explicit = attributes['governor.hop'];
      if (isHop(explicit)) return explicit;
      for (const rule of rules) {
        if (rule.attribute !== null) {
          const value = attributes[rule.attribute];
          if (value === undefined) continue;
          if (rule.attributeEquals !== null && String(value) !== rule.attributeEquals) continue;
        }
        if (rule.spanName && !rule.spanName.test(spanName)) continue;
        if (rule.serviceName && !(service !== null && rule.serviceName.test(service))) continue;
        return rule.hop;
      }
      return null;
    },
  };
}
