import { DEFAULT_START_EPOCH_MS } from '../engine/sim-time.ts';
import { MODEL_70B, MODEL_8B } from '../fleet/fleet-spec.ts';
import { buildReplayWorkload } from './build-replay-workload.ts';
import type { TraceTask } from './build-replay-workload.ts';
import { getColumnIndex, parseCsv, readDataFile } from './read-data-file.ts';
import type { Workload, WorkloadOptions } from './workload-types.ts';

/** Parses Azure's naive `2023-11-16 18:17:03.9799600` as UTC, keeping sub-millisecond digits. */
export function parseAzureTimestampMs(text: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`azure trace: bad TIMESTAMP "${text}"`);
  const [, y, mo, d, h, mi, s, frac] = match;
  const wholeMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  return wholeMs + (frac ? Number(`0.${frac}`) * 1000 : 0);
}

function loadAzure(kind: 'conv' | 'code', options: WorkloadOptions): Workload {
  const fileName = `azure_llm_2023_${kind}.csv`;
  const { header, rows } = parseCsv(readDataFile(options.dataDir, fileName));
  const iTime = getColumnIndex(header, 'TIMESTAMP', fileName);
  const iIn = getColumnIndex(header, 'ContextTokens', fileName);
  const iOut = getColumnIndex(header, 'GeneratedTokens', fileName);
  const times = rows.map((r) => parseAzureTimestampMs(r[iTime]!));
  const firstMs = times[0] ?? 0;
  const traceTasks: TraceTask[] = rows.map((r, i) => ({
    offsetMs: times[i]! - firstMs,
    steps: [
      {
        inputTokens: Math.max(1, Number(r[iIn])),
        outputTokens: Math.max(1, Number(r[iOut])),
        thinkMs: 0,
        atOffsetMs: 0,
      },
    ],
  }));
  return buildReplayWorkload(
    {
      name: `azure-${kind}`,
      description: `Azure LLM inference trace 2023 (${kind === 'conv' ? 'conversation' : 'code'}), replayed at its own timestamps`,
      startEpochMs: Math.floor(firstMs),
      traceTasks,
      modelMix:
        kind === 'conv'
          ? [
              [MODEL_8B, 0.85],
              [MODEL_70B, 0.15],
            ]
          : [
              [MODEL_8B, 0.8],
              [MODEL_70B, 0.2],
            ],
    },
    options,
  );
}

interface MooncakeRow {
  timestamp: number;
  input_length: number;
  output_length: number;
  hash_ids: number[];
}

function loadMooncake(kind: 'conversation' | 'synthetic', options: WorkloadOptions): Workload {
  const fileName = `mooncake_fast25_${kind}.jsonl`;
  const lines = readDataFile(options.dataDir, fileName)
    .split('\n')
    .filter((line) => line.trim().length > 0);
  const traceTasks: TraceTask[] = lines.map((line, index) => {
    let row: MooncakeRow;
    try {
      row = JSON.parse(line) as MooncakeRow;
    } catch {
      throw new Error(`${fileName}: line ${index + 1} is not JSON`);
    }
    return {
      offsetMs: row.timestamp,
      steps: [
        {
          inputTokens: Math.max(1, row.input_length),
          outputTokens: Math.max(1, row.output_length),
          thinkMs: 0,
          atOffsetMs: 0,
          prefix: { head: row.hash_ids ?? [], rangeBase: 0, rangeCount: 0 },
        },
      ],
    };
  });
  traceTasks.sort((a, b) => a.offsetMs - b.offsetMs);
  return buildReplayWorkload(
    {
      name: `mooncake-${kind}`,
      description: `Mooncake FAST'25 ${kind} trace with prefix-block hashes${kind === 'synthetic' ? ' (synthetic Poisson arrivals)' : ''}`,
      startEpochMs: DEFAULT_START_EPOCH_MS,
      traceTasks,
      modelMix: [
        [MODEL_8B, 0.85],
        [MODEL_70B, 0.15],
      ],
    },
    options,
  );
}

/**
 * BurstGPT rows with 0 request tokens are requests that failed at the source (17 of 400 in
 * BurstGPT_1); they carry no lengths to replay and are skipped. ChatGPT maps to the 8B model,
 * GPT-4 to the 70B one. Session ids (BurstGPT_3) become conversation tasks replayed open-loop at
 * their timestamps. The slices start at night (~0.01 req/s), hence a default time scale of 0.003.
 */
function loadBurstGpt(variant: 1 | 3, options: WorkloadOptions): Workload {
  const fileName = variant === 1 ? 'burstgpt_1_first400.csv' : 'burstgpt_3_first400.csv';
  const { header, rows } = parseCsv(readDataFile(options.dataDir, fileName));
  const iTime = getColumnIndex(header, 'Timestamp', fileName);
  const iModel = getColumnIndex(header, 'Model', fileName);
  const iIn = getColumnIndex(header, 'Request tokens', fileName);
  const iOut = getColumnIndex(header, 'Response tokens', fileName);
  const iSession = variant === 3 ? getColumnIndex(header, 'Session ID', fileName) : -1;
  const usable = rows.filter((r) => Number(r[iIn]) > 0 && Number(r[iOut]) > 0);
  const firstS = Math.min(...usable.map((r) => Number(r[iTime])));
  const bySession = new Map<string, TraceTask>();
  const traceTasks: TraceTask[] = [];
  for (const r of usable) {
    const offsetMs = (Number(r[iTime]) - firstS) * 1000;
    const model = r[iModel] === 'GPT-4' ? MODEL_70B : MODEL_8B;
    const session = iSession >= 0 ? (r[iSession] ?? '') : '';
    const step = { inputTokens: Number(r[iIn]), outputTokens: Number(r[iOut]), thinkMs: 0 };
    const existing = session ? bySession.get(session) : undefined;
    if (existing) {
      existing.steps.push({ ...step, atOffsetMs: offsetMs - existing.offsetMs });
      continue;
    }
    const task: TraceTask = { offsetMs, model, steps: [{ ...step, atOffsetMs: 0 }] };
    if (session) {
      task.conversationId = `burstgpt3-${session}`;
      bySession.set(session, task);
    }
    traceTasks.push(task);
  }
  traceTasks.sort((a, b) => a.offsetMs - b.offsetMs);
  return buildReplayWorkload(
    {
      name: `burstgpt-${variant}`,
      description: `BurstGPT_${variant} first 400 rows (time scaled; sessions as conversation tasks)`,
      startEpochMs: DEFAULT_START_EPOCH_MS,
      traceTasks,
      modelMix: [[MODEL_8B, 1]],
      defaultTimeScale: 0.003,
    },
    options,
  );
}

export function loadAzureConv(options: WorkloadOptions): Workload {
  return loadAzure('conv', options);
}
export function loadAzureCode(options: WorkloadOptions): Workload {
  return loadAzure('code', options);
}
export function loadMooncakeConversation(options: WorkloadOptions): Workload {
  return loadMooncake('conversation', options);
}
export function loadMooncakeSynthetic(options: WorkloadOptions): Workload {
  return loadMooncake('synthetic', options);
}
export function loadBurstGpt1(options: WorkloadOptions): Workload {
  return loadBurstGpt(1, options);
}
export function loadBurstGpt3(options: WorkloadOptions): Workload {
  return loadBurstGpt(3, options);
}
