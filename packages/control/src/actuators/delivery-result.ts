import type { ControlAction } from '@governor/conventions';

/** Expected delivery failures are values, not throws. */
export type DeliveryResult =
  | { status: 'ok'; httpStatus: number | null }
  | { status: 'failed'; error: string; httpStatus: number | null }
  | { status: 'retryable'; afterMs: number | null; error: string; httpStatus: number | null };

/** Something that carries out ControlActions: a webhook, the simulator's actuator endpoint, … */
export interface Actuator {
  readonly name: string;
  readonly type: string;
  deliver(action: ControlAction, signal: AbortSignal): Promise<DeliveryResult>;
}
