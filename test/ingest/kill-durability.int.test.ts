import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type GovernorProcess,
  spawnGovernorProcess,
} from '../../apps/server/src/bench/spawn-governor-process.ts';
import { startIngestLoad, storedSpanIds, waitFor } from './ingest-client.ts';

// THE durability test (issue #2): Governor answers 200 only after the rows are committed, so a
// SIGKILL in the middle of a stream from several clients loses nothing that was acknowledged.
// Checkpoints run every second so the kill can land in any phase (append, flush, checkpoint with
// commits going to the ingest stage, moving the stage back).

let dataDir: string;
let servers: GovernorProcess[] = [];

afterEach(async () => {
  for (const s of servers) {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await s.exited;
  }
  servers = [];
  rmSync(dataDir, { recursive: true, force: true });
});

describe('governor start under SIGKILL', () => {
  it('keeps every acknowledged span', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'governor-kill-'));
    const config = join(dataDir, 'governor.yaml');
    writeFileSync(config, 'server:\n  checkpoint_interval_s: 1\n');
    const first = await spawnGovernorProcess({ dataDir, args: ['--config', config] });
    servers.push(first);
    const load = startIngestLoad(first.url, { clients: 6, spansPerBatch: 100 });
    // Past a checkpoint cycle or two, with batches in flight from every client.
    await waitFor(() => load.ackedBatches() >= 80, '80 acknowledged batches');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await load.stop();
    const acked = load.acked();
    expect(acked.size).toBeGreaterThanOrEqual(80 * 100);
    expect(load.failures()).toBeGreaterThan(0);

    const second = await spawnGovernorProcess({ dataDir, args: ['--config', config] });
    servers.push(second);
    const stored = await storedSpanIds(second.url);
    const missing = [...acked].filter((id) => !stored.has(id));
    expect(missing).toEqual([]);
  });

  it('starts again after a SIGKILL right after its first start, before any checkpoint of its own', async () => {
    // The start's catalog changes (migrations, the stage's bookkeeping) must not be left to WAL
    // replay: DuckDB 1.5.6 fails replaying some of them and the data dir would never start again.
    dataDir = mkdtempSync(join(tmpdir(), 'governor-kill-'));
    const first = await spawnGovernorProcess({ dataDir });
    servers.push(first);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const second = await spawnGovernorProcess({ dataDir });
    servers.push(second);
    expect((await fetch(`${second.url}/api/health`)).status).toBe(200);
  });
});
