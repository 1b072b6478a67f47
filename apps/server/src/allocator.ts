import { existsSync, readFileSync } from 'node:fs';

// Which malloc the process runs on. jemalloc, preloaded by scripts/run-governor.sh when the system
// has it, took 20 % less CPU per row from the writer's group commits and held ack p99 lower than
// glibc's malloc (docs/operations.md, "Memory"); the benchmarks' server gets it the same way.

/** Where Debian, Ubuntu and other distributions install jemalloc (scripts/run-governor.sh: same list). */
export const JEMALLOC_PATHS = [
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
  '/usr/local/lib/libjemalloc.so.2',
] as const;

/** The jemalloc library to preload, unless GOVERNOR_ALLOCATOR=glibc or none is installed. */
export function findJemalloc(env: NodeJS.ProcessEnv = process.env): string | null {
  if (process.platform !== 'linux' || env.GOVERNOR_ALLOCATOR === 'glibc') return null;
  return JEMALLOC_PATHS.find((path) => existsSync(path)) ?? null;
}

/** The allocator this process runs on: jemalloc when its library is mapped, else the platform's. */
export function runningAllocator(): 'jemalloc' | 'glibc' | 'system' {
  if (process.platform !== 'linux') return 'system';
  try {
    return readFileSync('/proc/self/maps', 'latin1').includes('libjemalloc') ? 'jemalloc' : 'glibc';
  } catch {
    return 'glibc';
  }
}
