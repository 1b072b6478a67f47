import { createHash } from 'node:crypto';
import type { ControlAction, PolicyConfig } from '@governor/conventions';
import { maxAcceptedEventNs } from '@governor/conventions';
import { createDeliveryQueue } from '../actuators/create-delivery-queue.ts';
import type { FleetObservation } from '../observe-fleet.ts';
import type { ControlEngine, ControlEngineOptions, ControlFailure } from './control-engine.ts';
import { nsToIso, secondsToNs } from '../time.ts';
import { applyRecord } from './apply-record.ts';
import { OPEN_STATES } from './consider-candidate.ts';
import { type RecommendationRecord, createEmptyState } from './control-types.ts';
import { createEngineSettings } from './engine-settings.ts';
import { type PoliciesView, persistOutput, recordDelivery, restoreState } from './persistence.ts';
import { type EvaluateResult, type TickReaders, runTracedTick } from './run-tick.ts';
import { createTickOutput, recordAudit, touchRecord } from './tick-output.ts';
import { toAuditView, toRecommendation } from './to-api.ts';
import { decisionKey } from './memory-key.ts';
import { kindActionOf } from './kind-action.ts';

// The engine's lifecycle: restore after a restart, serialize ticks and human decisions, tick at
// each interval boundary the watermark passes, deliver actions, close. What a tick does is in
// run-tick.ts; verification, guards and persistence in their own modules.

export async function createControlEngine(options: ControlEngineOptions): Promise<ControlEngine> {
  const { config, signals, repository } = options;
  const control = config.control;
  const now = options.now ?? Date.now;
  const settings = createEngineSettings(config, options.tuning, now);
  const emit = options.onEvent ?? (() => {});
  const reportError = options.onError ?? (() => {});
  const configHash = createHash('sha256').update(JSON.stringify(config.policies)).digest('hex');
  const readers: TickReaders = {
    signals,
    readReadyReplicas: options.readReadyReplicas,
    readPrefillSpeed: options.readPrefillSpeed,
    readEngineWork: options.readEngineWork,
    readRequestArrivals: options.readRequestArrivals,
  };

  const state = createEmptyState();
  let lastObservation: FleetObservation | null = null;
  let chain: Promise<unknown> = Promise.resolve();
  let ticker: NodeJS.Timeout | null = null;
  let polling: Promise<number> | null = null;
  let closed = false;
  // Audit writes of delivery outcomes; close waits for them so none lands on a closed store.
  const recordings = new Set<Promise<void>>();

  const serialize = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn);
    chain = run.catch(() => undefined);
    return run;
  };

  const deliveries = createDeliveryQueue({
    actuators: options.actuators ?? [],
    sleep: options.deliverySleep,
    onOutcome: (outcome, action) => {
      const recording = recordDelivery(repository, nowNs(), now, emit, reportError, outcome, action).finally(
        () => recordings.delete(recording),
      );
      recordings.add(recording);
    },
  });

  /** No tick runs past the server clock + ingest.max_future_skew, the bound intake holds events to. */
  const maxTickNs = (): bigint => maxAcceptedEventNs(config.ingest, BigInt(Math.trunc(now())) * 1_000_000n);

  let policySource: PoliciesView = await restoreState(
    repository,
    state,
    config.policies,
    configHash,
    maxTickNs(),
  );
  let policies: PolicyConfig[] = policySource.policies;

  // A leader that took over from one that died: actions it had recorded as applied but whose
  // delivery outcome never reached the audit log are sent again under their own id, which
  // receivers take as the idempotency key — an action is applied once, whichever node sends it.
  if (options.resumeDeliveries) {
    for (const rec of state.open.values()) {
      if (rec.state !== 'applied' || rec.actionId === null || rec.appliedNs === null) continue;
      const audit = await repository.listAudit({ recommendationId: rec.id, limit: 1000 });
      const settled = audit.some(
        (e) =>
          e.actionId === rec.actionId && (e.decision === 'delivered' || e.decision === 'delivery_failed'),
      );
      if (settled) continue;
      deliveries.enqueue({
        ...kindActionOf(rec),
        id: rec.actionId,
        recommendationId: rec.id,
        type: 'apply',
        target: rec.target,
        at: nsToIso(rec.appliedNs),
      } as ControlAction);
    }
  }

  async function tick(atNs: bigint, dryRun: boolean): Promise<EvaluateResult> {
    const previousObservation = lastObservation;
    const sinks = {
      repository,
      emit,
      deliver: (action: ControlAction) => deliveries.enqueue(action),
      observed: (obs: FleetObservation) => {
        lastObservation = obs;
      },
    };
    const { result, observation } = await runTracedTick(
      settings,
      readers,
      sinks,
      state,
      policies,
      atNs,
      dryRun,
    );
    if (dryRun) lastObservation = previousObservation ?? observation;
    return result;
  }

  async function resolveAt(atNs: bigint | undefined): Promise<bigint> {
    if (atNs !== undefined) return atNs;
    const watermark = await signals.watermarkNs();
    return watermark ?? BigInt(now()) * 1_000_000n;
  }

  /** Event time of human decisions and deliveries: the last tick's, else the wall clock. */
  function nowNs(): bigint {
    return state.lastTickNs ?? BigInt(now()) * 1_000_000n;
  }

  async function findOpen(id: string): Promise<RecommendationRecord | ControlFailure> {
    const rec = state.open.get(id);
    if (rec) return rec;
    const stored = await repository.getRecommendation(id);
    if (!stored) return { ok: false, code: 'not_found', message: `no recommendation ${id}` };
    return { ok: false, code: 'invalid_transition', message: `recommendation ${id} is ${stored.state}` };
  }

  async function runTicksToWatermark(): Promise<number> {
    const watermark = await signals.watermarkNs();
    if (watermark === null) return 0;
    const interval = secondsToNs(control.interval_s);
    let next = state.lastTickNs === null ? (watermark / interval) * interval : state.lastTickNs + interval;
    // Far behind (a restart after a long pause): skip to the newest boundary rather than replaying.
    if (watermark - next > 10n * interval) next = (watermark / interval) * interval;
    let ticks = 0;
    const boundNs = maxTickNs();
    while (next <= watermark && next <= boundNs && !closed) {
      const at = next;
      await serialize(() => tick(at, false));
      ticks += 1;
      next += interval;
    }
    return ticks;
  }

  function tickToWatermark(): Promise<number> {
    polling ??= runTicksToWatermark().finally(() => {
      polling = null;
    });
    return polling;
  }

  return {
    async evaluate(opts = {}) {
      if (!control.enabled)
        return {
          ok: false,
          code: 'disabled',
          message: 'the control loop is disabled (control.enabled: false)',
        };
      const atNs = await resolveAt(opts.atNs);
      return serialize(async () => {
        if (atNs > maxTickNs()) {
          return {
            ok: false as const,
            code: 'time_ahead' as const,
            message: `at ${nsToIso(atNs)} is past the server clock + ingest.max_future_skew (${nsToIso(maxTickNs())}); a tick cannot run ahead of real time`,
          };
        }
        if (!opts.dryRun && state.lastTickNs !== null && atNs < state.lastTickNs) {
          return {
            ok: false as const,
            code: 'time_reversed' as const,
            message: `at ${nsToIso(atNs)} is before the last tick ${nsToIso(state.lastTickNs)}; evaluate earlier times with dryRun: true`,
          };
        }
        return { ok: true as const, result: await tick(atNs, opts.dryRun === true) };
      });
    },

    async listRecommendations(filter) {
      const rows = await repository.listRecommendations({
        states: filter.states,
        limit: filter.limit ?? 100,
      });
      return rows.map(toRecommendation);
    },

    async getRecommendation(id) {
      const rec = await repository.getRecommendation(id);
      return rec ? toRecommendation(rec) : null;
    },

    approve(id, actor, note) {
      return serialize(async () => {
        const found = await findOpen(id);
        if ('ok' in found) return found;
        if (found.state !== 'proposed') {
          return {
            ok: false as const,
            code: 'invalid_transition' as const,
            message: `recommendation ${id} is ${found.state}, not proposed`,
          };
        }
        const out = createTickOutput();
        const atNs = nowNs();
        found.state = 'approved';
        found.updatedNs = atNs;
        touchRecord(out, found);
        recordAudit(
          out,
          now,
          atNs,
          { decision: 'approved', details: {} },
          `user:${actor}`,
          found,
          note ?? 'approved; applies at the next tick',
          'approved',
        );
        await persistOutput(repository, out, emit);
        return { ok: true as const, recommendation: toRecommendation(found) };
      });
    },

    reject(id, actor, note) {
      return serialize(async () => {
        const found = await findOpen(id);
        if ('ok' in found) return found;
        if (!OPEN_STATES.includes(found.state)) {
          return {
            ok: false as const,
            code: 'invalid_transition' as const,
            message: `recommendation ${id} is ${found.state}`,
          };
        }
        const out = createTickOutput();
        const atNs = nowNs();
        found.state = 'rejected';
        found.updatedNs = atNs;
        state.open.delete(found.id);
        state.rejected.set(decisionKey(found.kind, found.targetKey, found.direction), atNs);
        touchRecord(out, found);
        recordAudit(
          out,
          now,
          atNs,
          { decision: 'rejected', details: {} },
          `user:${actor}`,
          found,
          note ??
            'rejected; this change on this target is not proposed again until the recommendation TTL passes',
          'rejected',
        );
        await persistOutput(repository, out, emit);
        return { ok: true as const, recommendation: toRecommendation(found) };
      });
    },

    apply(id, actor, note) {
      return serialize(async () => {
        const found = await findOpen(id);
        if ('ok' in found) return found;
        if (!OPEN_STATES.includes(found.state)) {
          return {
            ok: false as const,
            code: 'invalid_transition' as const,
            message: `recommendation ${id} is ${found.state}; it can be applied once, from proposed or approved`,
          };
        }
        const out = createTickOutput();
        const action = applyRecord(
          settings,
          state,
          out,
          lastObservation,
          found,
          nowNs(),
          `user:${actor}`,
          'applied',
          note ?? 'applied by hand',
        );
        state.outbox.push(action);
        await persistOutput(repository, out, emit);
        deliveries.enqueue(action);
        return { ok: true as const, recommendation: toRecommendation(found), action };
      });
    },

    async listAudit(filter) {
      const rows = await repository.listAudit({
        recommendationId: filter.recommendationId,
        limit: filter.limit ?? 200,
      });
      return rows.map(toAuditView);
    },

    getPolicies() {
      return structuredClone(policySource);
    },

    setPolicies(next, actor) {
      return serialize(async () => {
        const updatedAtMs = now();
        await repository.savePolicies({ configHash, policies: next, updatedBy: actor, updatedAtMs });
        policies = next;
        policySource = {
          policies: next,
          source: 'api',
          updatedBy: actor,
          updatedAt: new Date(updatedAtMs).toISOString(),
        };
        const out = createTickOutput();
        recordAudit(
          out,
          now,
          nowNs(),
          { decision: 'policies_updated', details: { policies: next.map((p) => p.name) } },
          `user:${actor}`,
          null,
          `${next.length} polic${next.length === 1 ? 'y' : 'ies'} set through the API`,
          'updated',
        );
        await persistOutput(repository, out, emit);
        return structuredClone(policySource);
      });
    },

    desiredReplicas() {
      const out: Record<string, number> = {};
      for (const p of lastObservation?.pools ?? []) if (p.replicas !== null) out[p.pool] = p.replicas;
      for (const [pool, n] of Object.entries(state.actuated.replicas)) out[pool] = n;
      return out;
    },

    tickToWatermark,

    start() {
      if (ticker || !control.enabled || control.tick !== 'watermark') return;
      ticker = setInterval(() => {
        tickToWatermark().catch(reportError);
      }, options.tickPollMs ?? 1000);
      ticker.unref();
    },

    pendingDeliveries: () => deliveries.pending(),
    drainDeliveries: (timeoutMs) => deliveries.drain(timeoutMs),

    async close() {
      closed = true;
      if (ticker) clearInterval(ticker);
      ticker = null;
      await polling;
      await chain;
      await deliveries.drain(1000);
      await deliveries.close();
      await Promise.all(recordings);
    },
  };
}
