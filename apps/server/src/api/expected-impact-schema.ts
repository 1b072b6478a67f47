import { IMPACT_MEASURES } from '@governor/conventions';
import { z } from 'zod';

// A recommendation's expectedImpact (ExpectedImpact in @governor/conventions). The reference lists
// its known fields, but the response is encoded through an open record: a zod object would move its
// known keys ahead of the others in the JSON, and a record stored with fields no detector writes any
// more is still served as it was.

const ImpactChange = z
  .object({
    from: z.number().nullable().describe('Now'),
    to: z.number().nullable().describe('Predicted after the action'),
  })
  .optional();

const KnownFields = z.object({
  summary: z.string().optional().describe('One sentence an operator reads'),
  weight: z
    .object({ pool: z.string(), from: z.number(), to: z.number() })
    .optional()
    .describe("A shifted pool's share of its model's traffic"),
  ...Object.fromEntries(IMPACT_MEASURES.map((measure) => [measure, ImpactChange])),
});

export const ExpectedImpactBody = z.record(z.string(), z.unknown()).meta({
  id: 'ExpectedImpact',
  description:
    'What the action is predicted to change: each measure as {from, to}, now and after it (verification.predicted holds each `to`)',
  properties: z.toJSONSchema(KnownFields).properties,
});
