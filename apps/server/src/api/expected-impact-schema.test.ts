import { IMPACT_MEASURES } from '@governor/conventions';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { ExpectedImpactBody } from './expected-impact-schema.ts';

describe('the expectedImpact response schema', () => {
  test('serves the object as it was written: its keys in their order, unknown ones kept', () => {
    const impact = {
      summary: 'Fewer requests land on the faulty pool.',
      weight: { pool: 'a100-west', from: 0.5, to: 0.1 },
      errorRate: { from: 0.2, to: 0.01 },
      costUsdPerHour: { from: 12, to: null },
      retiredMeasure: 3,
    };
    const encoded = z.encode(ExpectedImpactBody, impact);
    expect(JSON.stringify(encoded)).toBe(JSON.stringify(impact));
  });

  test('documents every known measure in the API reference', () => {
    const doc = z.toJSONSchema(z.object({ expectedImpact: ExpectedImpactBody })) as {
      $defs: Record<string, { properties?: Record<string, unknown> }>;
    };
    const known = Object.keys(doc.$defs.ExpectedImpact?.properties ?? {});
    expect(known).toEqual(['summary', 'weight', ...IMPACT_MEASURES]);
  });
});
