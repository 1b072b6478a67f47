import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signPayload, verifySignature } from './sign-payload.ts';

const body = '{"version":"4","status":"firing"}';
const secret = 's3cret';
const now = 1_767_225_600;

describe('Governor signatures', () => {
  it('signs t=<unix s>,v1=<HMAC-SHA256 of "<t>.<body>">', () => {
    const header = signPayload(body, secret, now + 0.7);
    const expected = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    expect(header).toBe(`t=${now},v1=${expected}`);
    expect(verifySignature(header, body, secret, now + 10)).toEqual({ ok: true, timestampS: now });
    expect(verifySignature(header, Buffer.from(body), secret, now).ok).toBe(true);
  });

  it('rotates: a receiver still on the old secret and one already on the new both verify', () => {
    const header = signPayload(body, ['new', 'old'], now);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(header, body, 'old', now).ok).toBe(true);
    expect(verifySignature(header, body, 'new', now).ok).toBe(true);
    // A receiver that rotated first checks its current and previous secret against a sender that has not.
    expect(verifySignature(signPayload(body, 'old', now), body, ['new', 'old'], now).ok).toBe(true);
    expect(verifySignature(signPayload(body, 'older', now), body, ['new', 'old'], now)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects forgeries, replays and garbage', () => {
    const header = signPayload(body, secret, now);
    expect(verifySignature(header, body.replace('firing', 'resolved'), secret, now).ok).toBe(false);
    expect(verifySignature(header, body, 'other', now)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(header, body, secret, now + 301)).toEqual({ ok: false, reason: 'expired' });
    expect(verifySignature(undefined, body, secret, now)).toEqual({ ok: false, reason: 'missing' });
    expect(verifySignature('v1=abc', body, secret, now)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifySignature(`t=${now}`, body, secret, now)).toEqual({ ok: false, reason: 'malformed' });
    // Re-signing an old body with a new timestamp needs the secret.
    const [, mac] = header.split(',v1=');
    expect(verifySignature(`t=${now + 100},v1=${mac}`, body, secret, now + 100)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(() => signPayload(body, [''], now)).toThrow(/non-empty secret/);
  });
});
