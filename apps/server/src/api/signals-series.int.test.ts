import { type IncomingMessage, type Server, createServer } from 'node:http';
import { createDefaultFleet, runSimulation } from '@governor/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from '../otlp/start-test-governor.ts';

// A chart of /api/signals/series watched while the data arrives: the simulator sends the real shapes
// of a fleet over OTLP and, every 30 s of simulated time (after flushing its telemetry), calls a
// lockstep endpoint; there this test reads the series the way a console chart does, with `to` past
// the watermark (a recommendation's chart runs 10 minutes past it). A step that ends after the
// watermark is still filling — its tasks are not counted yet while its cost already is — and would
// show success per dollar dropping to 0 at the right edge. The points must end at the last whole
// step before the watermark and read what they read once all the data is in.

const fleet = createDefaultFleet();
const START_MS = Date.UTC(2026, 0, 1);
const RUN_MS = 5 * 60_000;
const STEP_MS = 60_000;
const SIGNALS = ['successPerDollar', 'ttftMs.p95', 'e2eMs.p95', 'replicas'] as const;

interface SeriesBody {
  watermark: string | null;
  step: string;
  series: { key: { pool?: string }; points: { t: string; v: number | null }[] }[];
}

interface Reading {
  tickAtMs: number;
  signal: string;
  body: SeriesBody;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('GET /api/signals/series while the data arrives', () => {
  let t: TestGovernor;
  let lockstep: Server;
  const readings: Reading[] = [];
  const failures: unknown[] = [];

  const readSeries = async (signal: string, toMs: number): Promise<SeriesBody> => {
    const response = await fetch(
      `${t.url}/api/signals/series?signal=${signal}&by=pool&step=1m&from=${iso(START_MS)}&to=${iso(toMs)}`,
    );
    expect(response.status).toBe(200);
    return (await response.json()) as SeriesBody;
  };

  beforeAll(async () => {
    t = await startTestGovernor({
      control: { enabled: false },
      pricing: { gpu_hour_usd: Object.fromEntries(fleet.pools.map((p) => [p.gpuType, p.gpuHourUsd])) },
      pools: fleet.pools.map((p) => ({ name: p.name })),
      slo: { ttft_ms: 2000, e2e_ms: 60_000 },
    });
    // The lockstep endpoint: the simulator has flushed everything up to `at` when it calls.
    lockstep = createServer((request: IncomingMessage, response) => {
      let text = '';
      request.on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', async () => {
        try {
          const tickAtMs = Date.parse((JSON.parse(text) as { at: string }).at);
          for (const signal of SIGNALS) {
            readings.push({ tickAtMs, signal, body: await readSeries(signal, tickAtMs + 10 * 60_000) });
          }
        } catch (error) {
          failures.push(error);
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"actions":[]}');
      });
    });
    await new Promise<void>((done) => lockstep.listen(0, '127.0.0.1', done));
    const address = lockstep.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await runSimulation({
      workload: 'synthetic-mix',
      durationMs: RUN_MS,
      drainMs: 0,
      speed: 'max',
      seed: 5,
      target: t.url,
      lockstep: `http://127.0.0.1:${port}`,
      controlIntervalMs: 30_000,
      startEpochMs: START_MS,
      log: () => {},
    });
  });
  afterAll(async () => {
    await new Promise<void>((done) => (lockstep ? lockstep.close(() => done()) : done()));
    await t?.close();
  });

  it('ends every series at the last whole step before the watermark', async () => {
    expect(failures).toEqual([]);
    expect(readings.length).toBeGreaterThanOrEqual(8 * SIGNALS.length);
    for (const { tickAtMs, signal, body } of readings) {
      if (body.watermark === null) continue;
      const watermarkMs = Date.parse(body.watermark);
      expect(watermarkMs).toBeLessThanOrEqual(tickAtMs);
      const lastWholeEndMs = START_MS + Math.floor((watermarkMs - START_MS) / STEP_MS) * STEP_MS;
      for (const series of body.series) {
        const times = series.points.map((p) => Date.parse(p.t));
        expect(times.at(-1), `${signal} ${series.key.pool} at ${iso(tickAtMs)}`).toBe(lastWholeEndMs);
        expect(times.every((ms, i) => ms === START_MS + (i + 1) * STEP_MS)).toBe(true);
      }
    }
  });

  it('shows at the right edge what the step reads once all the data is in', async () => {
    const final = new Map<string, number | null>();
    for (const signal of SIGNALS) {
      for (const series of (await readSeries(signal, START_MS + RUN_MS)).series) {
        for (const p of series.points) final.set(`${signal} ${series.key.pool} ${p.t}`, p.v);
      }
    }
    let newestPoints = 0;
    for (const { tickAtMs, signal, body } of readings) {
      for (const series of body.series) {
        const newest = series.points.at(-1);
        if (!newest) continue;
        const id = `${signal} ${series.key.pool} ${newest.t}`;
        const settled = final.get(id);
        expect(settled, id).not.toBeUndefined();
        newestPoints += 1;
        const what = `${id} read at ${iso(tickAtMs)}`;
        if (signal === 'successPerDollar') {
          // Every pool completes tasks every minute: the newest step is never an empty 0. It may
          // still read a little high: a conversation (no declared step count) is counted at its
          // latest step until its next one arrives — 5–15 % here, within 30 s of the step's end.
          expect(newest.v, what).toBeGreaterThan(0);
          expect(newest.v! / settled!, what).toBeGreaterThanOrEqual(1);
          expect(newest.v! / settled!, what).toBeLessThan(1.2);
        } else {
          expect(newest.v, what).toBe(settled);
        }
      }
    }
    expect(newestPoints).toBeGreaterThan(0);
  });
});
