import type { ControlEngine, ControlFailure } from '@governor/control';

// The control loop when several nodes share its state (store.engine: clickhouse): only the node
// holding the leader lease ticks, applies and takes decisions; the others answer reads from the
// shared repository and refuse changes with `not_leader`. A node that becomes the leader builds a
// fresh engine, which restores open recommendations, cooldowns and policies from PostgreSQL — what
// the previous leader last committed — and starts its ticker; one that stops being the leader
// closes its engine (queued deliveries drain for up to a second) before answering as a follower.
// A follower's engine is rebuilt every `refreshMs`, so the policies and desired replicas it shows
// follow the leader's within that time.

export interface LeaderControl {
  readonly engine: ControlEngine;
  isLeader(): boolean;
  /** Lease changes, in order (each waits for the previous one's engine to close or open). */
  setLeader(leader: boolean): Promise<void>;
  close(): Promise<void>;
}

export interface LeaderControlOptions {
  /**
   * Builds an engine over the shared state (not started); a leader's resends the applied actions
   * whose delivery the previous leader did not record (under the same idempotency key).
   */
  create(leader: boolean): Promise<ControlEngine>;
  /** How often a follower rebuilds its view of the shared state. */
  refreshMs: number;
  onError(error: unknown): void;
}

const notLeader = (what: string): ControlFailure => ({
  ok: false,
  code: 'not_leader',
  message: `this node does not run the control loop (another node holds the leader lease): ${what} only on the leader`,
});

export async function createLeaderControl(options: LeaderControlOptions): Promise<LeaderControl> {
  let current = await options.create(false);
  let leader = false;
  let started = false;
  let closed = false;
  let transition: Promise<void> = Promise.resolve();

  /** The role the lease gave; a failed change is tried again at the next refresh. */
  let wanted = false;
  const replace = async (becomeLeader: boolean) => {
    if (closed) return;
    const old = current;
    leader = false;
    await old.close();
    try {
      current = await options.create(becomeLeader);
    } catch (error) {
      // Reads keep working from a follower's engine; leading is tried again at the next refresh.
      current = await options.create(false);
      throw error;
    }
    leader = becomeLeader;
    if (leader && started) current.start();
  };
  const queue = (fn: () => Promise<void>) => {
    transition = transition.then(fn).catch(options.onError);
    return transition;
  };
  const refresh = setInterval(() => {
    if (!leader) void queue(() => (leader ? Promise.resolve() : replace(wanted)));
  }, options.refreshMs);
  refresh.unref();

  const engine: ControlEngine = {
    evaluate: (opts) =>
      leader || opts?.dryRun ? current.evaluate(opts) : Promise.resolve(notLeader('a control tick runs')),
    listRecommendations: (filter) => current.listRecommendations(filter),
    getRecommendation: (id) => current.getRecommendation(id),
    approve: (id, actor, note) =>
      leader ? current.approve(id, actor, note) : Promise.resolve(notLeader('a recommendation is approved')),
    reject: (id, actor, note) =>
      leader ? current.reject(id, actor, note) : Promise.resolve(notLeader('a recommendation is rejected')),
    apply: (id, actor, note) =>
      leader ? current.apply(id, actor, note) : Promise.resolve(notLeader('a recommendation is applied')),
    listAudit: (filter) => current.listAudit(filter),
    getPolicies: () => current.getPolicies(),
    async setPolicies(policies, actor) {
      if (!leader) throw new NotLeaderError();
      return current.setPolicies(policies, actor);
    },
    desiredReplicas: () => current.desiredReplicas(),
    tickToWatermark: () => (leader ? current.tickToWatermark() : Promise.resolve(0)),
    start() {
      started = true;
      if (leader) current.start();
    },
    pendingDeliveries: () => current.pendingDeliveries(),
    drainDeliveries: (timeoutMs) => current.drainDeliveries(timeoutMs),
    async close() {
      closed = true;
      clearInterval(refresh);
      await transition;
      leader = false;
      await current.close();
    },
  };
  return {
    engine,
    isLeader: () => leader,
    setLeader: (value) => {
      wanted = value;
      return queue(() => (value === leader ? Promise.resolve() : replace(value)));
    },
    close: () => engine.close(),
  };
}

/** A change asked of a follower (the API answers 503 GOV_ERR_CONTROL_NOT_LEADER). */
export class NotLeaderError extends Error {
  override readonly name = 'NotLeaderError';
  readonly code = 'GOV_ERR_CONTROL_NOT_LEADER';
  readonly retryAfterS = 5;
  constructor() {
    super(
      'this node does not run the control loop (another node holds the leader lease): policies change only on the leader',
    );
  }
}
