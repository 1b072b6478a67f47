import type { ActuatorConfig, PoolConfig } from '@governor/conventions';
import { KubeConfig } from '@kubernetes/client-node';
import { createMemoryRollbackStore, type RollbackStore } from '../state/rollback-store.ts';
import type { QueuedActuator } from './create-delivery-queue.ts';
import { createHttpActuator } from './create-http-actuator.ts';
import { createKubernetesActuator } from './kubernetes/create-kubernetes-actuator.ts';

/**
 * Builds the configured actuators; a `secret_env` that is unset is an error, not an unsigned webhook.
 * A kubernetes actuator takes its credentials from `loadKubeConfig` (by default the client's
 * `loadFromDefault`: KUBECONFIG, else ~/.kube/config, else the pod's service account) and keeps the
 * values its rollbacks restore in `rollbackStore` (a running Governor passes the DuckDB one).
 */
export function createActuatorsFromConfig(
  configs: readonly ActuatorConfig[],
  env: NodeJS.ProcessEnv = process.env,
  pools: readonly PoolConfig[] = [],
  loadKubeConfig: () => KubeConfig = loadDefaultKubeConfig,
  rollbackStore: RollbackStore = createMemoryRollbackStore(),
): QueuedActuator[] {
  return configs.map((config) => ({
    actuator:
      config.type === 'kubernetes'
        ? createKubernetesActuator({ config, pools, kubeConfig: loadKubeConfig(), rollbackStore })
        : createHttpActuator({ config, secrets: resolveSecrets(config, env) }),
    maxAttempts: config.max_attempts,
    backoffMs: config.backoff_ms,
  }));
}

function loadDefaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
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
