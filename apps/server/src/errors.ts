// One place for Governor's error codes: each has an HTTP status and is documented in
// docs/errors.md (a test checks that every code here appears there).

export const ERROR_CODES = {
  GOV_ERR_OTLP_UNDECODABLE: 400,
  GOV_ERR_OTLP_UNSUPPORTED_MEDIA_TYPE: 415,
  GOV_ERR_OTLP_UNSUPPORTED_ENCODING: 415,
  GOV_ERR_OTLP_BODY_TOO_LARGE: 413,
  GOV_ERR_INGEST_QUEUE_FULL: 503,
  GOV_ERR_INGEST_ROLLUP_BEHIND: 503,
  GOV_ERR_INGEST_SHUTTING_DOWN: 503,
  GOV_ERR_INGEST_WRITE_FAILED: 503,
  GOV_ERR_SQL_EMPTY: 400,
  GOV_ERR_SQL_MULTIPLE_STATEMENTS: 400,
  GOV_ERR_SQL_NOT_READ_ONLY: 403,
  GOV_ERR_SQL_INVALID: 400,
  GOV_ERR_SQL_TIMEOUT: 408,
  GOV_ERR_SQL_FAILED: 400,
  GOV_ERR_SQL_FORBIDDEN: 403,
  GOV_ERR_SQL_FILE_ACCESS: 403,
  GOV_ERR_SQL_RESULT_TOO_LARGE: 400,
  GOV_ERR_READ_TIMEOUT: 503,
  GOV_ERR_SHUTTING_DOWN: 503,
  GOV_ERR_READ_BUSY: 503,
  GOV_ERR_REQUEST_INVALID: 400,
  GOV_ERR_NOT_FOUND: 404,
  GOV_ERR_CONFLICT: 409,
  GOV_ERR_DASHBOARD_INVALID: 422,
  GOV_ERR_AUTH_MISSING_TOKEN: 401,
  GOV_ERR_AUTH_MISSING_SCOPE: 403,
  GOV_ERR_AUTH_INVALID_TOKEN: 401,
  GOV_ERR_CONTROL_DISABLED: 409,
  GOV_ERR_CONTROL_TIME_REVERSED: 409,
  GOV_ERR_CONTROL_TIME_AHEAD: 409,
  GOV_ERR_CONTROL_INVALID_TRANSITION: 409,
  GOV_ERR_CONTROL_NOT_LEADER: 503,
  GOV_ERR_POLICY_INVALID: 400,
  GOV_ERR_ALERTS_UNKNOWN_RECEIVER: 404,
  GOV_ERR_ALERTS_STOPPING: 503,
  GOV_ERR_SIGNALS_BAD_WINDOW: 400,
  GOV_ERR_SIGNALS_BAD_DIMENSION: 400,
  GOV_ERR_SIGNALS_BAD_TIME: 400,
  GOV_ERR_SIGNALS_UNKNOWN_SIGNAL: 400,
  GOV_ERR_SIGNALS_TOO_MANY_POINTS: 400,
  GOV_ERR_TRACE_NOT_FOUND: 404,
  GOV_ERR_INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class GovernorError extends Error {
  override readonly name = 'GovernorError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterS?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.statusCode = ERROR_CODES[code];
  }
}

/** Converts anything thrown into a GovernorError, keeping the original as `cause`. */
export function toGovernorError(error: unknown): GovernorError {
  if (error instanceof GovernorError) return error;
  const e = error as {
    code?: unknown;
    statusCode?: unknown;
    message?: unknown;
    validation?: unknown;
    retryAfterS?: unknown;
  };
  if (typeof e?.code === 'string' && e.code in ERROR_CODES) {
    const retryAfterS = typeof e.retryAfterS === 'number' ? e.retryAfterS : undefined;
    return new GovernorError(e.code as ErrorCode, String(e.message), retryAfterS, { cause: error });
  }
  if (e?.validation || e?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const code: ErrorCode =
      e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'GOV_ERR_OTLP_UNSUPPORTED_MEDIA_TYPE'
        : 'GOV_ERR_REQUEST_INVALID';
    return new GovernorError(code, String(e.message), undefined, { cause: error });
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    const code: ErrorCode =
      e.statusCode === 404
        ? 'GOV_ERR_NOT_FOUND'
        : e.statusCode === 413
          ? 'GOV_ERR_OTLP_BODY_TOO_LARGE'
          : e.statusCode === 415
            ? 'GOV_ERR_OTLP_UNSUPPORTED_MEDIA_TYPE'
            : 'GOV_ERR_REQUEST_INVALID';
    return new GovernorError(code, String(e.message), undefined, { cause: error });
  }
  return new GovernorError('GOV_ERR_INTERNAL', 'internal error; see the server log for details', undefined, {
    cause: error,
  });
}
