import { createHmac, timingSafeEqual } from 'node:crypto';

// X-Governor-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the
// receiver's secret>. The timestamp is signed with the body, so a receiver that checks both the
// MAC and the age of t rejects forged and replayed notifications alike.

export const SIGNATURE_HEADER = 'X-Governor-Signature';

function hmacHex(secret: string, timestampS: number, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestampS}.`).update(body).digest('hex');
}

/** The header value for `body` sent at `nowS` (unix seconds). */
export function signGovernorPayload(body: string | Uint8Array, secret: string, nowS: number): string {
  const t = Math.floor(nowS);
  return `t=${t},v1=${hmacHex(secret, t, body)}`;
}

export type SignatureCheck =
  | { ok: true; timestampS: number }
  | { ok: false; reason: 'missing' | 'malformed' | 'expired' | 'mismatch' };

/**
 * Checks a notification on the receiving side. `body` must be the raw request body exactly as
 * received (not re-serialized JSON). `toleranceS` bounds the age (and clock skew) of the signature,
 * e.g. 300; `nowS` is the receiver's clock in unix seconds. Several `v1=` entries are accepted so a
 * secret can be rotated.
 */
export function verifyGovernorSignature(
  header: string | null | undefined,
  body: string | Uint8Array,
  secret: string,
  toleranceS: number,
  nowS: number,
): SignatureCheck {
  if (!header) return { ok: false, reason: 'missing' };
  let timestampS: number | null = null;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, reason: 'malformed' };
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value)) return { ok: false, reason: 'malformed' };
      timestampS = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return { ok: false, reason: 'malformed' };
      candidates.push(value);
    }
  }
  if (timestampS === null || candidates.length === 0) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowS - timestampS) > toleranceS) return { ok: false, reason: 'expired' };
  const expected = Buffer.from(hmacHex(secret, timestampS, body), 'hex');
  const matches = candidates.some((c) => timingSafeEqual(Buffer.from(c, 'hex'), expected));
  return matches ? { ok: true, timestampS } : { ok: false, reason: 'mismatch' };
}
