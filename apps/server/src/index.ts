export { buildApp } from './build-app.ts';
export type { AppOptions } from './build-app.ts';
export { startGovernor } from './start-governor.ts';
export type { RunningGovernor, StartOptions } from './start-governor.ts';
export { loadConfig, ConfigError } from './load-config.ts';
export { ERROR_CODES, GovernorError } from './errors.ts';
