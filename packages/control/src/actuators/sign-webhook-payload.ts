import { createHmac, timingSafeEqual } from 'node:crypto';

// Webhook signatures, Stripe-style: `X-Governor-Signature: t=<unix seconds>,v1=<hex>` where v1 is
// HMAC-SHA256(secret, "<t>.<raw body>"). Signing the timestamp lets receivers refuse replays.

export const SIGNATURE_HEADER = 'x-governor-signature';
export const IDEMPOTENCY_HEADER = 'idempotency-key';

export function signWebhookPayload(secret: string, body: string, unixS: number): string {
  const digest = createHmac('sha256', secret).update(`${unixS}.${body}`).digest('hex');
  return `t=${unixS},v1=${digest}`;
}

/** For receivers: true when `header` signs `body` with `secret` and is at most `toleranceS` old. */
export function verifyWebhookSignature(
  secret: string,
  header: string | undefined,
  body: string,
  nowUnixS: number,
  toleranceS = 300,
): boolean {
  if (!header) return false;
  const parts = new Map(
    header.split(',').map((p) => {
      const eq = p.indexOf('=');
      return [p.slice(0, eq).trim(), p.slice(eq + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1');
  if (!Number.isInteger(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(nowUnixS - t) > toleranceS) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}
