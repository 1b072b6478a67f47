// Prints how many threads libuv's pool has, measured rather than read from the environment: each
// open of a FIFO for reading holds a pool thread until a writer comes, so FIFOs are opened one by
// one until a stat() no longer completes. Used by threadpool-size.int.test.ts (Linux).
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'governor-threadpool-'));
const fifos = [];
let held = 0;
for (; held < 256; held++) {
  const fifo = join(dir, `f${held}`);
  execFileSync('mkfifo', [fifo]);
  fifos.push(fifo);
  open(fifo, 'r').then(
    (h) => h.close(),
    () => undefined,
  );
  const free = await Promise.race([
    stat(dir).then(() => true),
    new Promise((resolve) => setTimeout(() => resolve(false), 500)),
  ]);
  if (!free) break;
}
// `held` FIFOs plus the stat that did not complete: every thread is busy.
process.stdout.write(`${held + 1}\n`);
for (const fifo of fifos) {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // That open had not started yet.
  }
}
setTimeout(() => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}, 200);
