import { GROUP_DIMENSIONS } from '@governor/conventions';
import { z } from 'zod';
import { ERROR_CODES } from '../errors.ts';
import {
  parseGroupBy,
  parseLimit,
  parseNonNegativeNumber,
  parseRfc3339Ns,
  parseWindowMs,
} from './signals-query.ts';
import { govParse } from './zod-validation.ts';

// Building blocks shared by the route schemas: the error body every route answers, and the query
// parameters of the read API (event times, windows, group-by, limits, dimension filters).

/**
 * An object that passes unknown fields through at run time, typed as its named fields so the
 * signals package's interfaces (which have no index signature) satisfy it.
 */
export function openObject<T extends z.ZodRawShape>(shape: T): z.ZodObject<T> {
  return z.looseObject(shape) as unknown as z.ZodObject<T>;
}

/** Any JSON object (fields documented elsewhere), passed through as is. */
export const AnyObject = z.looseObject({}) as unknown as z.ZodType<object>;

export const ErrorBody = z
  .object({
    error: z.object({
      code: z
        .enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES])
        .describe('Stable code; docs/errors.md'),
      message: z.string().describe('What was wrong and what to do'),
      requestId: z.string().optional().describe('Also in the x-request-id header and the server log'),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The error responses every JSON route may answer (validation, auth, internal). */
export const ERROR_RESPONSES = {
  '4xx': ErrorBody.describe('Bad request, missing/invalid token or scope, not found, conflict'),
  '5xx': ErrorBody.describe('Internal error or temporarily unavailable (see Retry-After)'),
} as const;

/** A duration such as 5m, 1h or 250ms, at most 7 days; parsed to milliseconds. */
export function duration(name: string, fallback: string, description: string) {
  return z
    .string()
    .optional()
    .describe(`${description} Duration such as 30s, 5m, 1h (at most 7d). Default ${fallback}.`)
    .transform(govParse((text: string | undefined) => parseWindowMs(text, name, fallback)));
}

export const GroupBy = z
  .string()
  .optional()
  .describe(`Comma-separated group dimensions: ${GROUP_DIMENSIONS.join(', ')}. Empty: one fleet-wide group.`)
  .transform(govParse((text: string | undefined) => parseGroupBy(text)));

export function limit(fallback: number, max: number) {
  return z
    .string()
    .optional()
    .describe(`At most this many items, 1–${max}. Default ${fallback}.`)
    .transform(govParse((text: string | undefined) => parseLimit(text, fallback, max)));
}

export function nonNegative(name: string, description: string) {
  return z
    .string()
    .optional()
    .describe(description)
    .transform(govParse((text: string | undefined) => parseNonNegativeNumber(text, name)));
}

/** `pool=…&model=…`: keep only rows with these dimension values. */
export const DimensionFilter = Object.fromEntries(
  GROUP_DIMENSIONS.map((d) => [d, z.string().optional().describe(`Only rows whose ${d} is this value`)]),
) as Record<(typeof GROUP_DIMENSIONS)[number], z.ZodOptional<z.ZodString>>;

/** Drops empty and undefined dimension values (an empty `pool=` filters nothing). */
export function dimensionFilter(
  query: Partial<Record<(typeof GROUP_DIMENSIONS)[number], string | undefined>>,
): Partial<Record<(typeof GROUP_DIMENSIONS)[number], string>> {
  const filter: Partial<Record<(typeof GROUP_DIMENSIONS)[number], string>> = {};
  for (const d of GROUP_DIMENSIONS) {
    const value = query[d];
    if (value !== undefined && value !== '') filter[d] = value;
  }
  return filter;
}

/** An optional event time: empty or absent is undefined. */
export function optionalEventTime(name: string, description: string) {
  return z
    .string()
    .optional()
    .describe(`${description} RFC 3339, e.g. 2026-01-01T12:00:00Z; fractions to the nanosecond.`)
    .transform(
      govParse((text: string | undefined) =>
        text === undefined || text === '' ? undefined : parseRfc3339Ns(text, name),
      ),
    );
}
