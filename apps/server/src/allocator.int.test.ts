import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findJemalloc } from './allocator.ts';
import { type GovernorProcess, spawnGovernorProcess } from './bench/spawn-governor-process.ts';

// Governor runs on jemalloc where it is installed (the test setup installs libjemalloc2, as the
// Docker image does), the way `pnpm governor` and the benchmarks start it, and on glibc's malloc
// when the operator asks for it.

const dirs: string[] = [];
let governor: GovernorProcess | null = null;
afterEach(async () => {
  governor?.child.kill('SIGTERM');
  await governor?.exited;
  governor = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'governor-allocator-'));
  dirs.push(dir);
  return dir;
}

describe.runIf(process.platform === 'linux')('the allocator Governor runs on', () => {
  it('is jemalloc where it is installed', async () => {
    expect(findJemalloc()).not.toBeNull();
    governor = await spawnGovernorProcess({ dataDir: dataDir() });
    expect(governor.allocator()).toBe('jemalloc');
  });

  it("is glibc's malloc with GOVERNOR_ALLOCATOR=glibc", async () => {
    expect(findJemalloc({ GOVERNOR_ALLOCATOR: 'glibc' })).toBeNull();
    governor = await spawnGovernorProcess({ dataDir: dataDir(), env: { GOVERNOR_ALLOCATOR: 'glibc' } });
    expect(governor.allocator()).toBe('glibc');
  });
});
