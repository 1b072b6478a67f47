import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type ErrorCode, GovernorError } from '../errors.ts';

// Request validation through the routes' zod schemas (fastify-type-provider-zod supplies the
// types, the OpenAPI transform and the response serializer). Validation is ours so a bad request
// answers the project's error body with a stable GOV_ERR_* code instead of Fastify's generic 400:
// a refinement names its code in `params.code` (see `govIssue`), a schema may name a default code
// (`withInvalidCode`), and everything else is GOV_ERR_REQUEST_INVALID.

const defaultCodes = new WeakMap<z.ZodType, ErrorCode>();
const hints = new WeakMap<z.ZodType, string>();

/** Invalid input for `schema` answers `code` (e.g. GOV_ERR_POLICY_INVALID) unless an issue names its own. */
export function withInvalidCode<T extends z.ZodType>(schema: T, code: ErrorCode): T {
  defaultCodes.set(schema, code);
  return schema;
}

/** Appended to the message of a failed validation, e.g. an example of a valid request. */
export function withHint<T extends z.ZodType>(schema: T, hint: string): T {
  hints.set(schema, hint);
  return schema;
}

/**
 * A transform step that runs one of the existing parsers (which throw GovernorError) and turns its
 * failure into a zod issue carrying the GovernorError's code and message.
 */
export function govParse<I, O>(parse: (value: I) => O): (value: I, ctx: z.RefinementCtx) => O {
  return (value, ctx) => {
    try {
      return parse(value);
    } catch (error) {
      if (!(error instanceof GovernorError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message, params: { code: error.code } });
      return z.NEVER;
    }
  };
}

function messageOf(issue: z.core.$ZodIssue, schema: z.ZodType, part: string): string {
  if (issue.code === 'custom' && typeof issue.params?.code === 'string') return issue.message;
  if (issue.code === 'unrecognized_keys') {
    const shape = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
    const what = part === 'querystring' ? 'query parameter' : 'field';
    const names = issue.keys.map((k) => `"${k}"`).join(', ');
    return `unknown ${what} ${names}; this endpoint takes ${shape.join(', ') || 'none'}`;
  }
  const where = issue.path.length > 0 ? issue.path.join('.') : part === 'querystring' ? 'query' : part;
  return `${where}: ${issue.message}`;
}

export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const part = httpPart ?? 'body';
  return (data) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    const issue = result.error.issues[0]!;
    const named = issue.code === 'custom' ? issue.params?.code : undefined;
    const code = (typeof named === 'string' ? named : defaultCodes.get(schema)) ?? 'GOV_ERR_REQUEST_INVALID';
    const hint = hints.get(schema);
    const message = messageOf(issue, schema, part) + (hint ? `; ${hint}` : '');
    return { error: new GovernorError(code as ErrorCode, message) };
  };
};

/**
 * Makes an encapsulated plugin validate and serialize through zod, so a plugin registered on a
 * bare Fastify instance (as the plugin tests do) behaves as it does inside buildApp.
 */
export function useZodSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
}
