import { describe, expect, it } from 'vitest';
import { requiredScope } from './required-scope.ts';
import { hasScope } from './scopes.ts';

describe('requiredScope', () => {
  it.each([
    ['POST', '/v1/traces', 'ingest'],
    ['POST', '/v1/metrics', 'ingest'],
    ['GET', '/api/health', null],
    ['GET', '/api/ready', null],
    ['HEAD', '/api/health', null],
    ['GET', '/metrics', 'read'],
    ['GET', '/api/signals?window=5m', 'read'],
    ['GET', '/api/events', 'read'],
    ['POST', '/api/sql', 'read'],
    ['POST', '/api/policies/preview', 'read'],
    ['POST', '/api/recommendations/rec-1/approve', 'operate'],
    ['POST', '/api/recommendations/:id/reject', 'operate'],
    ['POST', '/api/recommendations/rec-1/apply', 'operate'],
    ['POST', '/api/control/evaluate', 'operate'],
    ['PUT', '/api/policies', 'operate'],
    ['POST', '/api/receivers/pagerduty/test', 'operate'],
    ['POST', '/api/retention/run', 'admin'],
    ['DELETE', '/api/recommendations/rec-1', 'admin'],
    ['GET', '/', null],
    ['GET', '/assets/index-abc.js', null],
    ['GET', '/recommendations', null],
  ] as const)('%s %s needs %s', (method, path, scope) => {
    expect(requiredScope(method, path)).toBe(scope);
  });

  it('classifies encoded, doubled-slash, upper-case and trailing-slash spellings like the plain path', () => {
    expect(requiredScope('POST', '/%61pi/sql')).toBe('read');
    expect(requiredScope('POST', '//api//sql/')).toBe('read');
    expect(requiredScope('POST', '/API/SQL')).toBe('read');
    expect(requiredScope('POST', '/%76%31/traces')).toBe('ingest');
    expect(requiredScope('POST', '/api/recommendations/a%2Fb/approve')).toBe('admin');
  });
});

describe('hasScope', () => {
  it('lets admin do everything and operate read, but keeps ingest separate', () => {
    expect(hasScope(['admin'], 'ingest')).toBe(true);
    expect(hasScope(['admin'], 'operate')).toBe(true);
    expect(hasScope(['operate'], 'read')).toBe(true);
    expect(hasScope(['operate'], 'ingest')).toBe(false);
    expect(hasScope(['read'], 'operate')).toBe(false);
    expect(hasScope(['ingest'], 'read')).toBe(false);
    expect(hasScope(['read'], 'ingest')).toBe(false);
  });
});
