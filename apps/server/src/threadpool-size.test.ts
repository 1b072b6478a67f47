import { STORE_CONNECTIONS } from '@governor/store';
import { describe, expect, it } from 'vitest';
import { THREADPOOL_RESERVE, libuvPoolSize, threadpoolWarning } from './threadpool-size.ts';

describe('threadpoolWarning', () => {
  it('warns at libuv’s default and names the fix', () => {
    expect(libuvPoolSize(undefined)).toBe(4);
    const warning = threadpoolWarning(undefined);
    expect(warning).toContain('4 threads');
    expect(warning).toContain(`UV_THREADPOOL_SIZE=${STORE_CONNECTIONS + THREADPOOL_RESERVE}`);
  });

  it('is quiet once every connection has a thread and some spare', () => {
    expect(threadpoolWarning(String(STORE_CONNECTIONS + THREADPOOL_RESERVE))).toBeNull();
    expect(threadpoolWarning(String(STORE_CONNECTIONS))).not.toBeNull();
    expect(threadpoolWarning('garbage')).not.toBeNull();
  });
});
