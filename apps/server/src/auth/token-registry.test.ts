import { describe, expect, it } from 'vitest';
import { ConfigError } from '../load-config.ts';
import { checkBindAddress, isLoopbackHost } from './check-bind-address.ts';
import { createTokenRegistry, parseTokensEnv, sha256Hex } from './token-registry.ts';

const INGEST = 'ingest-token-0123456789';
const READ = 'read-token-0123456789ab';

describe('createTokenRegistry', () => {
  it('is disabled without tokens', () => {
    const registry = createTokenRegistry({ tokens: [] }, {});
    expect(registry.enabled).toBe(false);
    expect(registry.authenticate('anything')).toBeNull();
  });

  it('accepts tokens by sha256, by env variable and from GOVERNOR_ADMIN_TOKEN / GOVERNOR_TOKENS', () => {
    const registry = createTokenRegistry(
      {
        tokens: [
          { name: 'collector', token_sha256: sha256Hex(INGEST), scopes: ['ingest'] },
          { name: 'grafana', token_env: 'GRAFANA_TOKEN', scopes: ['read'] },
        ],
      },
      {
        GRAFANA_TOKEN: READ,
        GOVERNOR_ADMIN_TOKEN: 'admin-token-0123456789',
        GOVERNOR_TOKENS: 'ops:read+operate:ops-token-0123456789:with:colons, ci:ingest:ci-token-0123456789ab',
      },
    );
    expect(registry.enabled).toBe(true);
    expect(registry.authenticate(INGEST)).toMatchObject({ name: 'collector', scopes: ['ingest'] });
    expect(registry.authenticate(READ)).toMatchObject({ name: 'grafana', scopes: ['read'] });
    expect(registry.authenticate('admin-token-0123456789')).toMatchObject({
      name: 'admin',
      scopes: ['admin'],
    });
    expect(registry.authenticate('ops-token-0123456789:with:colons')).toMatchObject({
      name: 'ops',
      scopes: ['read', 'operate'],
    });
    expect(registry.authenticate('ci-token-0123456789ab')?.name).toBe('ci');
    expect(registry.authenticate(`${INGEST}x`)).toBeNull();
    expect(registry.authenticate('')).toBeNull();
  });

  it('names the unset variable, never a token value, when token_env is missing', () => {
    expect(() =>
      createTokenRegistry(
        { tokens: [{ name: 'grafana', token_env: 'GRAFANA_TOKEN', scopes: ['read'] }] },
        {},
      ),
    ).toThrow(/auth\.tokens\.0 \("grafana"\): token_env GRAFANA_TOKEN is not set/);
  });

  it('refuses short tokens, bad GOVERNOR_TOKENS entries and one token shared by two names', () => {
    expect(() => createTokenRegistry({ tokens: [] }, { GOVERNOR_ADMIN_TOKEN: 'short' })).toThrow(
      /at least 16/,
    );
    expect(() => parseTokensEnv('collector:ingest')).toThrow(/expected name:scope\[\+scope\]:token/);
    expect(() => parseTokensEnv('collector:write:0123456789abcdef0')).toThrow(/unknown scope "write"/);
    const error = (() => {
      try {
        createTokenRegistry({ tokens: [] }, { GOVERNOR_TOKENS: `a:read:${READ},b:ingest:${READ}` });
      } catch (e) {
        return e as Error;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toMatch(/"a" and "b" are the same token/);
    expect(error?.message).not.toContain(READ);
  });
});

describe('checkBindAddress', () => {
  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'governor', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('refuses a public bind without tokens unless --insecure', () => {
    expect(checkBindAddress('0.0.0.0', true, false)).toBe('auth-on');
    expect(checkBindAddress('127.0.0.1', false, false)).toBe('loopback-no-auth');
    expect(checkBindAddress('0.0.0.0', false, true)).toBe('insecure-no-auth');
    expect(() => checkBindAddress('0.0.0.0', false, false)).toThrow(
      /GOV_ERR_AUTH_INSECURE_BIND: refusing to listen on 0\.0\.0\.0 without API tokens.*--insecure/,
    );
  });
});
