import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signGovernorPayload, verifyGovernorSignature } from './governor-signature.ts';

const body = '{"version":"4","status":"firing"}';
const secret = 's3cret';
const now = 1_767_225_600;

describe('Governor signatures', () => {
  it('signs t=<unix s>,v1=<HMAC-SHA256 of "<t>.<body>">', () => {
    const header = signGovernorPayload(body, secret, now + 0.7);
    const expected = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    expect(header).toBe(`t=${now},v1=${expected}`);
  });

  it('accepts a fresh signature and a rotated secret among several v1 entries', () => {
    const header = signGovernorPayload(body, secret, now);
    expect(verifyGovernorSignature(header, body, secret, 300, now + 10)).toEqual({
      ok: true,
      timestampS: now,
    });
    const rotated = `${header},v1=${'0'.repeat(64)}`;
    expect(verifyGovernorSignature(rotated, Buffer.from(body), secret, 300, now).ok).toBe(true);
  });

  it('rejects forgeries, replays and garbage', () => {
    const header = signGovernorPayload(body, secret, now);
    expect(verifyGovernorSignature(header, body.replace('firing', 'resolved'), secret, 300, now)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyGovernorSignature(header, body, 'other', 300, now)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyGovernorSignature(header, body, secret, 300, now + 301)).toEqual({
      ok: false,
      reason: 'expired',
    });
    expect(verifyGovernorSignature(undefined, body, secret, 300, now)).toEqual({
      ok: false,
      reason: 'missing',
    });
    expect(verifyGovernorSignature('v1=abc', body, secret, 300, now)).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(verifyGovernorSignature(`t=${now}`, body, secret, 300, now)).toEqual({
      ok: false,
      reason: 'malformed',
    });
    // Re-signing an old body with a new timestamp needs the secret.
    const [, mac] = header.split(',v1=');
    expect(verifyGovernorSignature(`t=${now + 100},v1=${mac}`, body, secret, 300, now + 100)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });
});
