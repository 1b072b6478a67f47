#!/bin/sh
# `pnpm governor …` and `pnpm start`: Governor's CLI with the memory allocator and libuv pool it is
# measured with (docs/operations.md, "Memory"). jemalloc when the system has it (Debian and Ubuntu:
# `apt-get install libjemalloc2`), else glibc's malloc limited to two arenas. GOVERNOR_ALLOCATOR=glibc
# skips jemalloc; an LD_PRELOAD already set is left as it is.
if [ -z "${LD_PRELOAD:-}" ] && [ "${GOVERNOR_ALLOCATOR:-jemalloc}" != glibc ]; then
  for lib in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 \
    /usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2; do
    if [ -r "$lib" ]; then
      LD_PRELOAD="$lib"
      export LD_PRELOAD
      break
    fi
  done
fi
MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
export MALLOC_ARENA_MAX
exec node -r ./apps/server/threadpool-preload.cjs --import tsx apps/server/src/cli.ts "$@"
