import type { ControlAction } from '@governor/conventions';
import type { DeliveryResult } from '@governor/delivery';

/** Something that carries out ControlActions: a webhook, the simulator's actuator endpoint, Kubernetes, … */
export interface Actuator {
  readonly name: string;
  readonly type: string;
  /** One attempt; expected failures are values (`failed`, `retryable`), never throws. */
  deliver(action: ControlAction, signal: AbortSignal): Promise<DeliveryResult>;
}
