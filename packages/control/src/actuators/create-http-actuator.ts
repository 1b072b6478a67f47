import type { ActuatorConfig, ControlAction } from '@governor/conventions';
import type { Actuator, DeliveryResult } from './delivery-result.ts';
import { IDEMPOTENCY_HEADER, SIGNATURE_HEADER, signWebhookPayload } from './sign-webhook-payload.ts';

export interface HttpActuatorOptions {
  config: ActuatorConfig;
  /** Secret resolved from `secret` or `secret_env`. */
  secret: string | null;
  /** Wall clock in ms for the signature timestamp. */
  now?: () => number;
}

/**
 * POSTs a ControlAction as JSON. `webhook` posts to the URL as given; `simulator` to `{url}/actions`
 * (the simulator's actuator endpoint). The action id is the idempotency key, so a retried delivery
 * is applied at most once by a receiver that honours it.
 */
export function createHttpActuator(options: HttpActuatorOptions): Actuator {
  const { config, secret } = options;
  const now = options.now ?? Date.now;
  const url = config.type === 'simulator' ? `${config.url.replace(/\/+$/, '')}/actions` : config.url;
  return {
    name: config.name,
    type: config.type,
    async deliver(action: ControlAction, signal: AbortSignal): Promise<DeliveryResult> {
      const body = JSON.stringify(action);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'governor-control',
        [IDEMPOTENCY_HEADER]: action.id,
        'x-governor-event': `control.${action.type}`,
      };
      if (secret) headers[SIGNATURE_HEADER] = signWebhookPayload(secret, body, Math.floor(now() / 1000));
      const timeout = AbortSignal.timeout(config.timeout_ms);
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.any([signal, timeout]),
        });
      } catch (error) {
        const reason = timeout.aborted ? `timed out after ${config.timeout_ms} ms` : (error as Error).message;
        if (signal.aborted)
          return {
            status: 'failed',
            error: 'delivery cancelled: Governor is shutting down',
            httpStatus: null,
          };
        return { status: 'retryable', afterMs: null, error: `POST ${url}: ${reason}`, httpStatus: null };
      }
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) return { status: 'ok', httpStatus: response.status };
      const error = `POST ${url} answered ${response.status}`;
      if (
        response.status === 408 ||
        response.status === 425 ||
        response.status === 429 ||
        response.status >= 500
      ) {
        return {
          status: 'retryable',
          afterMs: parseRetryAfterMs(response.headers.get('retry-after')),
          error,
          httpStatus: response.status,
        };
      }
      return { status: 'failed', error, httpStatus: response.status };
    },
  };
}

function parseRetryAfterMs(value: string | null): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
