import { DEFAULT_START_EPOCH_MS } from '../engine/sim-time.ts';
import { createRng } from '../engine/random.ts';
import { MODEL_70B, MODEL_8B } from '../fleet/fleet-spec.ts';
import { createSessionPrefixer } from './prefix-ids.ts';
import { getColumnIndex, parseCsv, readDataFile } from './read-data-file.ts';
import type { Workload, WorkloadOptions, WorkloadStep, WorkloadTask } from './workload-types.ts';

/** A think time longer than this means the human left; the session's next turns form a new task. */
const EPISODE_BREAK_MS = 300_000;
/** Long human absences are capped so a one-hour run still sees sessions resume. */
const MAX_EPISODE_GAP_MS = 1_800_000;
/** Llama-3.1's context window; longer Claude contexts are truncated to fit. */
const MAX_CONTEXT_TOKENS = 131_072;
const MAX_OUTPUT_TOKENS = 8_192;

interface SessionRow {
  turn: number;
  thinkMs: number;
  tSessionMs: number;
  input: number;
  output: number;
  model: string;
}

/**
 * Claude Code agent sessions, replayed closed-loop: each turn is issued its recorded think time after
 * the previous turn finished (there is no global clock across sessions). A session is split into
 * episodes at pauses over 5 minutes; each episode is one task, chained to the next. Sessions start
 * spread over the first half of the run; a rate multiplier adds copies of sessions. Opus maps to the
 * 70B model, Sonnet to the 8B one. Prefix blocks follow the growing context of each session.
 */
export function loadAgenticCoding(options: WorkloadOptions): Workload {
  const fileName = 'claude_code_agentic_sessions.csv';
  const { header, rows } = parseCsv(readDataFile(options.dataDir, fileName));
  const col = (name: string) => getColumnIndex(header, name, fileName);
  const [iSession, iTurn, iT, iThink, iIn, iOut, iModel] = [
    col('session_id'),
    col('turn_index'),
    col('t_session_s'),
    col('think_time_s'),
    col('input_tokens'),
    col('output_tokens'),
    col('model_id'),
  ];
  const sessions = new Map<string, SessionRow[]>();
  for (const r of rows) {
    const id = r[iSession]!;
    const list = sessions.get(id) ?? [];
    const think = r[iThink] === '' ? Number.NaN : Number(r[iThink]) * 1000;
    list.push({
      turn: Number(r[iTurn]),
      thinkMs: think,
      tSessionMs: Number(r[iT]) * 1000,
      input: Number(r[iIn]),
      output: Number(r[iOut]),
      model: r[iModel] ?? '',
    });
    sessions.set(id, list);
  }
  const rng = createRng(options.seed, 'workload:agentic-coding');
  const multiplier = options.rateMultiplier ?? 1;
  const sessionIds = [...sessions.keys()].sort();
  const copies: Array<{ id: string; rows: SessionRow[] }> = [];
  for (const id of sessionIds) {
    const count = Math.floor(multiplier) + (rng.chance(multiplier - Math.floor(multiplier)) ? 1 : 0);
    for (let c = 0; c < count; c++) {
      copies.push({
        id: c === 0 ? id : `${id}-c${c}`,
        rows: sessions.get(id)!.sort((a, b) => a.turn - b.turn),
      });
    }
  }
  const spreadMs = (options.durationMs / 2) * (options.timeScale ?? 1);
  const tasks: WorkloadTask[] = copies.map((session, index) => {
    const startMs = ((index + rng.next()) / Math.max(1, copies.length)) * spreadMs;
    return buildSessionTasks(session.id, session.rows, index, startMs);
  });
  tasks.sort((a, b) => a.startMs - b.startMs);
  return {
    name: 'agentic-coding',
    description:
      'Claude Code agent sessions (closed-loop turns with recorded think times, split into episodes)',
    startEpochMs: options.startEpochMs ?? DEFAULT_START_EPOCH_MS,
    tasks,
  };
}

function buildSessionTasks(
  sessionId: string,
  rows: SessionRow[],
  sessionIndex: number,
  startMs: number,
): WorkloadTask {
  const prefixer = createSessionPrefixer(10_000 + sessionIndex);
  const episodes: Array<{ gapMs: number; steps: WorkloadStep[]; model: string }> = [];
  let previous: SessionRow | undefined;
  for (const row of rows) {
    const thinkMs = Number.isFinite(row.thinkMs) ? row.thinkMs : previous ? 1000 : 0;
    const output = Math.max(1, Math.min(row.output, MAX_OUTPUT_TOKENS));
    const input = Math.max(1, Math.min(row.input, MAX_CONTEXT_TOKENS - output - 1));
    const step: WorkloadStep = { inputTokens: input, outputTokens: output, thinkMs, prefix: prefixer(input) };
    const current = episodes[episodes.length - 1];
    if (!current || thinkMs > EPISODE_BREAK_MS) {
      step.thinkMs = 0;
      episodes.push({
        gapMs: Math.min(thinkMs, MAX_EPISODE_GAP_MS),
        steps: [step],
        model: row.model.includes('sonnet') ? MODEL_8B : MODEL_70B,
      });
    } else {
      current.steps.push(step);
    }
    previous = row;
  }
  let next: WorkloadTask | undefined;
  for (let e = episodes.length - 1; e >= 0; e--) {
    const episode = episodes[e]!;
    const task: WorkloadTask = {
      id: `cc-${sessionId.slice(0, 12)}-e${e}`,
      startMs: e === 0 ? startMs : episode.gapMs,
      type: 'coding-agent',
      tenant: 'dev-agents',
      priority: 1,
      model: episode.model,
      steps: episode.steps,
      openLoop: false,
      conversationId: `cc-${sessionId}`,
    };
    if (next) task.next = next;
    next = task;
  }
  return next!;
}
