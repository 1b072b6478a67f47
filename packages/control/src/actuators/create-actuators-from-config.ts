import type { ActuatorConfig } from '@governor/conventions';
import type { QueuedActuator } from './create-delivery-queue.ts';
import { createHttpActuator } from './create-http-actuator.ts';

/** Builds the configured actuators; a `secret_env` that is unset is an error, not an unsigned webhook. */
export function createActuatorsFromConfig(
  configs: readonly ActuatorConfig[],
  env: NodeJS.ProcessEnv = process.env,
): QueuedActuator[] {
  return configs.map((config) => {
    let secret: string | null = config.secret ?? null;
    if (config.secret_env) {
      const value = env[config.secret_env];
      if (!value) {
        throw new Error(
          `actuator ${config.name}: environment variable ${config.secret_env} (secret_env) is not set`,
        );
      }
      secret = value;
    }
    return {
      actuator: createHttpActuator({ config, secret }),
      maxAttempts: config.max_attempts,
      backoffMs: config.backoff_ms,
    };
  });
}
