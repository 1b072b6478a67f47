import { isIP } from 'node:net';
import { ConfigError } from '../load-config.ts';

/** 127.0.0.0/8, ::1, localhost and IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

export type BindCheck = 'auth-on' | 'loopback-no-auth' | 'insecure-no-auth';

/**
 * Without tokens Governor serves everyone who can reach it, so it only listens on loopback —
 * unless started with --insecure (server.insecure / GOVERNOR_INSECURE), which the caller warns about.
 */
export function checkBindAddress(host: string, authEnabled: boolean, insecure: boolean): BindCheck {
  if (authEnabled) return 'auth-on';
  if (isLoopbackHost(host)) return 'loopback-no-auth';
  if (insecure) return 'insecure-no-auth';
  throw new ConfigError(
    `GOV_ERR_AUTH_INSECURE_BIND: refusing to listen on ${host} without API tokens — anyone who can reach it could ingest, read and apply actions. ` +
      'Configure tokens (auth.tokens in the config file, or GOVERNOR_ADMIN_TOKEN / GOVERNOR_TOKENS; see docs/security.md), ' +
      'bind to 127.0.0.1, or pass --insecure if a proxy in front of Governor does the authentication.',
  );
}
