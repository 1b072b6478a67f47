/**
 * The one spelling of every header Governor adds to an outbound delivery, lower-case as Node hands
 * them to a receiver (`req.headers[DELIVERY_HEADERS.signature]`).
 */
export const DELIVERY_HEADERS = {
  /** `t=<unix s>,v1=<hex>[,v1=<hex>…]`, see sign-payload.ts. */
  signature: 'x-governor-signature',
  /** The same on every retry of one delivery: receivers drop duplicates by it (at-least-once). */
  idempotencyKey: 'idempotency-key',
  /** What the body is, e.g. `control.apply`, `control.rollback`, `alert.notification`. */
  event: 'x-governor-event',
} as const;
