import { describe, expect, test } from 'vitest';
import { signWebhookPayload, verifyWebhookSignature } from './sign-webhook-payload.ts';

describe('webhook signatures', () => {
  const body = JSON.stringify({ id: 'a1', kind: 'scale' });
  test('a signature over timestamp and body verifies with the same secret', () => {
    const header = signWebhookPayload('s3cret', body, 1_700_000_000);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature('s3cret', header, body, 1_700_000_010)).toBe(true);
  });
  test('another secret, a changed body, a stale timestamp or garbage fail', () => {
    const header = signWebhookPayload('s3cret', body, 1_700_000_000);
    expect(verifyWebhookSignature('other', header, body, 1_700_000_000)).toBe(false);
    expect(verifyWebhookSignature('s3cret', header, `${body} `, 1_700_000_000)).toBe(false);
    expect(verifyWebhookSignature('s3cret', header, body, 1_700_000_000 + 301)).toBe(false);
    expect(verifyWebhookSignature('s3cret', 'v1=abc', body, 1_700_000_000)).toBe(false);
    expect(verifyWebhookSignature('s3cret', undefined, body, 1_700_000_000)).toBe(false);
  });
});
