import { createHmac, timingSafeEqual } from 'node:crypto';

// X-Governor-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">. The timestamp is
// signed with the body, so a receiver that checks both the MAC and the age of t rejects forged and
// replayed deliveries alike. Rotation: while a new secret rolls out the sender signs with the new and
// the previous secret (one v1 each), and a receiver verifies against its current and previous secret,
// so neither side has to switch at the same moment.

/** The age (and clock skew) of a signature receivers should accept, in seconds. */
export const SIGNATURE_TOLERANCE_S = 300;

function hmac(secret: string, timestampS: number, body: string | Uint8Array): Buffer {
  return createHmac('sha256', secret).update(`${timestampS}.`).update(body).digest();
}

const asList = (secrets: string | readonly string[]): string[] =>
  (typeof secrets === 'string' ? [secrets] : [...secrets]).filter((s) => s.length > 0);

/** The header value for `body` sent at `nowS` (unix seconds), with one v1 per secret (current first). */
export function signPayload(
  body: string | Uint8Array,
  secrets: string | readonly string[],
  nowS: number,
): string {
  const t = Math.floor(nowS);
  const macs = asList(secrets).map((secret) => `v1=${hmac(secret, t, body).toString('hex')}`);
  if (macs.length === 0) throw new Error('signPayload needs at least one non-empty secret');
  return [`t=${t}`, ...macs].join(',');
}

export type SignatureCheck =
  | { ok: true; timestampS: number }
  | { ok: false; reason: 'missing' | 'malformed' | 'expired' | 'mismatch' };

/**
 * Checks a delivery on the receiving side. `body` must be the raw request body exactly as received
 * (not re-serialized JSON). `secrets` are the receiver's current and previous secret; any v1 entry
 * matching any of them passes. `nowS` is the receiver's clock in unix seconds.
 */
export function verifySignature(
  header: string | null | undefined,
  body: string | Uint8Array,
  secrets: string | readonly string[],
  nowS: number,
  toleranceS = SIGNATURE_TOLERANCE_S,
): SignatureCheck {
  if (!header) return { ok: false, reason: 'missing' };
  let timestampS: number | null = null;
  const candidates: Buffer[] = [];
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
      candidates.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestampS === null || candidates.length === 0) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowS - timestampS) > toleranceS) return { ok: false, reason: 'expired' };
  const t = timestampS;
  const matches = asList(secrets).some((secret) => {
    const expected = hmac(secret, t, body);
    return candidates.some((c) => timingSafeEqual(c, expected));
  });
  return matches ? { ok: true, timestampS } : { ok: false, reason: 'mismatch' };
}
