import type { AlertEngine, AlertEngineEvent } from '@governor/alerts';

// The alert engine when several nodes share its state (store.engine: clickhouse): only the node
// holding the leader lease evaluates rules and sends notifications, so none is sent twice. A node
// that becomes the leader builds a fresh engine — it restores the active alerts and the pending
// deliveries from PostgreSQL, where the previous leader left them — and starts it; one that stops
// being the leader stops its engine (deliveries in flight are aborted and resume on the next
// leader). A follower answers reads from the shared tables and rebuilds its view every `refreshMs`.

export interface LeaderAlerts {
  readonly engine: AlertEngine;
  setLeader(leader: boolean): Promise<void>;
}

export interface LeaderAlertsOptions {
  /** Builds an engine over the shared state; a follower's must not resume pending deliveries. */
  create(leader: boolean): Promise<AlertEngine>;
  refreshMs: number;
  onError(error: unknown): void;
}

export async function createLeaderAlerts(options: LeaderAlertsOptions): Promise<LeaderAlerts> {
  const listeners = new Set<(event: AlertEngineEvent) => void>();
  const relay = (event: AlertEngineEvent) => {
    for (const listener of listeners) listener(event);
  };
  let current = await options.create(false);
  let unsubscribe = current.subscribe(relay);
  let leader = false;
  let started = false;
  let stopped = false;
  let transition: Promise<void> = Promise.resolve();

  /** The role the lease gave; a failed change is tried again at the next refresh. */
  let wanted = false;
  const replace = async (becomeLeader: boolean) => {
    if (stopped) return;
    leader = false;
    unsubscribe();
    await current.stop();
    try {
      current = await options.create(becomeLeader);
    } catch (error) {
      // Reads keep working from a follower's engine; leading is tried again at the next refresh.
      current = await options.create(false);
      unsubscribe = current.subscribe(relay);
      throw error;
    }
    unsubscribe = current.subscribe(relay);
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

  const engine: AlertEngine = {
    get rules() {
      return current.rules;
    },
    get receivers() {
      return current.receivers;
    },
    start() {
      started = true;
      if (leader) current.start();
    },
    async stop() {
      stopped = true;
      clearInterval(refresh);
      await transition;
      leader = false;
      await current.stop();
    },
    evaluate: () =>
      leader
        ? current.evaluate()
        : Promise.resolve({
            evaluated: 0,
            evaluatedUntilNs: current.evaluatedUntilNs(),
            behind: false,
            notificationsQueued: 0,
          }),
    // Events come from the control loop, which runs on the leader too.
    recordEvent: (event) => (leader ? current.recordEvent(event) : Promise.resolve()),
    evaluatedUntilNs: () => current.evaluatedUntilNs(),
    activeAlerts: () => current.activeAlerts(),
    history: (query) => current.history(query),
    deliveriesForAlert: (fingerprint, limit) => current.deliveriesForAlert(fingerprint, limit),
    deliveries: (query) => current.deliveries(query),
    deadLetters: (query) => current.deadLetters(query),
    testReceiver: (name) => current.testReceiver(name),
    deliveryStats: () => current.deliveryStats(),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    engine,
    setLeader: (value) => {
      wanted = value;
      return queue(() => (value === leader ? Promise.resolve() : replace(value)));
    },
  };
}
