import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { STORE_CONNECTIONS } from '@governor/store';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, THREADPOOL_PRELOAD } from './bench/spawn-governor-process.ts';
import { THREADPOOL_RESERVE } from './threadpool-size.ts';

// The pool a Governor process really gets, counted by blocking its threads (count-threadpool.mjs).

const COUNT = fileURLToPath(new URL('./count-threadpool.mjs', import.meta.url));
const run = promisify(execFile);

async function poolSize(nodeArgs: string[], env: Record<string, string | undefined> = {}) {
  const environment = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete environment[k];
  const { stdout } = await run(process.execPath, [...nodeArgs, COUNT], { cwd: REPO_ROOT, env: environment });
  return Number(stdout.trim());
}

describe.runIf(process.platform === 'linux')('libuv thread pool of a Governor process', () => {
  it('has a thread for every store connection and some to spare with the preload', async () => {
    const unset = { UV_THREADPOOL_SIZE: undefined };
    // Without it, libuv's default: fewer threads than the store has connections.
    expect(await poolSize(['--import', 'tsx'], unset)).toBeLessThan(STORE_CONNECTIONS);
    expect(await poolSize(['-r', THREADPOOL_PRELOAD, '--import', 'tsx'], unset)).toBeGreaterThanOrEqual(
      STORE_CONNECTIONS + THREADPOOL_RESERVE,
    );
  });

  it('keeps a larger size the operator set', async () => {
    expect(await poolSize(['-r', THREADPOOL_PRELOAD], { UV_THREADPOOL_SIZE: '40' })).toBe(40);
  });
});
