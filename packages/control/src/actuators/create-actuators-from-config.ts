import type { ActuatorConfig } from '@governor/conventions';
import type { QueuedActuator } from './create-delivery-queue.ts';
import { createHttpActuator } from './create-http-actuator.ts';

/** Builds the configured actuators; a `secret_env` that is unset is an error, not an unsigned webhook. */
export function createActuatorsFromConfig(
  configs: readonly ActuatorConfig[],
  env: NodeJS.ProcessEnv = process.env,
): QueuedActuator[] {
  return configs.map((config) => ({
    actuator: createHttpActuator({ config, secrets: resolveSecrets(config, env) }),
    maxAttempts: config.max_attempts,
    backoffMs: config.backoff_ms,
  }));
}

/** Current secret first, then the previous one while a rotation rolls out. */
function resolveSecrets(config: ActuatorConfig, env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (key: 'secret_env' | 'previous_secret_env'): string => {
    const name = config[key];
    const value = name ? env[name] : undefined;
    if (!value) throw new Error(`actuator ${config.name}: environment variable ${name} (${key}) is not set`);
    return value;
  };
  const current = config.secret_env ? fromEnv('secret_env') : config.secret;
  const previous = config.previous_secret_env ? fromEnv('previous_secret_env') : undefined;
  return [current, previous].filter((s): s is string => typeof s === 'string' && s.length > 0);
}
