export type { DeliveryResult } from './delivery-result.ts';
export { classifyHttpResponse, isRetryableHttpStatus, ERROR_BODY_EXCERPT_CHARS } from './delivery-result.ts';
export { parseRetryAfterMs } from './parse-retry-after.ts';
export type { BackoffOptions } from './backoff.ts';
export {
  BACKOFF_MULTIPLIER,
  MAX_BACKOFF_MS,
  BACKOFF_JITTER_FLOOR,
  computeBackoffMs,
  retryDelayMs,
} from './backoff.ts';
export { DELIVERY_HEADERS } from './delivery-headers.ts';
export type { SignatureCheck } from './sign-payload.ts';
export { SIGNATURE_TOLERANCE_S, signPayload, verifySignature } from './sign-payload.ts';
export type { PostDeliveryRequest } from './post-delivery.ts';
export { postDelivery } from './post-delivery.ts';
export type { RetryOptions } from './deliver-with-retries.ts';
export { deliverWithRetries, abortableSleep } from './deliver-with-retries.ts';
