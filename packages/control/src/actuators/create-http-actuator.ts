import type { ActuatorConfig, ControlAction } from '@governor/conventions';
import { type DeliveryResult, postDelivery } from '@governor/delivery';
import type { Actuator } from './actuator.ts';

export interface HttpActuatorOptions {
  config: ActuatorConfig;
  /** Secrets resolved from `secret`/`secret_env`, then `previous_secret_env` while a rotation rolls out. */
  secrets: readonly string[];
  /** Wall clock in ms for the signature timestamp. */
  now?: () => number;
}

/**
 * POSTs a ControlAction as JSON. `webhook` posts to the URL as given; `simulator` to `{url}/actions`
 * (the simulator's actuator endpoint). The action id is the idempotency key, so a retried delivery
 * is applied at most once by a receiver that honours it.
 */
export function createHttpActuator(options: HttpActuatorOptions): Actuator {
  const { config, secrets } = options;
  const now = options.now ?? Date.now;
  if (!config.url) throw new Error(`actuator ${config.name}: a ${config.type} actuator needs url`);
  const url = config.type === 'simulator' ? `${config.url.replace(/\/+$/, '')}/actions` : config.url;
  return {
    name: config.name,
    type: config.type,
    async deliver(action: ControlAction, signal: AbortSignal): Promise<DeliveryResult> {
      const result = await postDelivery({
        url,
        body: JSON.stringify(action),
        deliveryId: action.id,
        event: `control.${action.type}`,
        secrets,
        timeoutMs: config.timeout_ms,
        signal,
        nowMs: now(),
        userAgent: 'governor-control',
      });
      return result.status === 'delivered' ? result : { ...result, error: `POST ${url}: ${result.error}` };
    },
  };
}
