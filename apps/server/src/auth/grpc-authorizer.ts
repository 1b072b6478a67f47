import * as grpc from '@grpc/grpc-js';
import { hasScope } from './scopes.ts';
import type { TokenRegistry } from './token-registry.ts';

export interface GrpcDenial {
  code: grpc.status;
  message: string;
}

/**
 * The OTLP/gRPC receiver's `authorize(metadata)`: the call needs `authorization: Bearer <token>`
 * metadata for a token with the ingest scope. Null when allowed (or auth is off).
 */
export function createGrpcAuthorizer(
  registry: TokenRegistry,
): (metadata: grpc.Metadata) => GrpcDenial | null {
  return (metadata) => {
    if (!registry.enabled) return null;
    const value = metadata.get('authorization')[0];
    const present = typeof value === 'string' && value.trim() !== '';
    const match = present ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value) : null;
    if (!present) {
      return {
        code: grpc.status.UNAUTHENTICATED,
        message:
          'GOV_ERR_AUTH_MISSING_TOKEN: OTLP/gRPC export needs a token with scope "ingest": send metadata authorization: Bearer <token> (Collector: headers on the otlp exporter)',
      };
    }
    // Present but not `Bearer <one token>`: a wrong token.
    const principal = match ? registry.authenticate(match[1]!) : null;
    if (!principal) {
      return {
        code: grpc.status.UNAUTHENTICATED,
        message:
          'GOV_ERR_AUTH_INVALID_TOKEN: the bearer token is not one Governor knows; check the exporter headers',
      };
    }
    if (!hasScope(principal.scopes, 'ingest')) {
      return {
        code: grpc.status.PERMISSION_DENIED,
        message: `GOV_ERR_AUTH_MISSING_SCOPE: OTLP/gRPC export needs scope "ingest"; token "${principal.name}" has ${principal.scopes.join(', ')}`,
      };
    }
    return null;
  };
}
