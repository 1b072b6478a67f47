import type { AlertInstance } from '../alert-instance.ts';
import { formatLabels, type Labels, pickLabels } from '../labels.ts';
import { msToNs, nsToRfc3339 } from '../time.ts';
import type { Notification, NotificationStatus, NotifiedAlert } from './notification.ts';

// Groups alerts per receiver (Alertmanager's aggregation groups): a new group waits group_wait so
// alerts that start together arrive together; later changes go out at most every group_interval;
// an unchanged group with firing alerts is re-sent every repeat_interval. Each interval elapses in
// event time, or in wall time when that comes first — so a replay pushed at 100× notifies at replay
// speed, and a group still goes out when telemetry stops arriving and the watermark stalls.

export interface ReceiverTimings {
  groupBy: string[];
  groupWaitMs: number;
  groupIntervalMs: number;
  repeatIntervalMs: number;
  sendResolved: boolean;
  maxAlerts: number;
}

/** Persisted form of a group; JSON-safe (event times as decimal ns strings). */
export interface NotificationGroupState {
  id: string;
  receiver: string;
  groupKey: string;
  groupLabels: Labels;
  alerts: Record<string, NotifiedAlert>;
  /** Status last sent per fingerprint. */
  notified: Record<string, NotificationStatus>;
  createdAtNs: string;
  createdAtWallMs: number;
  lastSentAtNs: string | null;
  lastSentAtWallMs: number | null;
  changed: boolean;
}

export interface DueNotification {
  notification: Notification;
  /** Nothing changed since the last one; the receiver is being reminded. */
  repeat: boolean;
}

export interface NotificationDispatcher {
  load(groups: readonly NotificationGroupState[]): void;
  /** Feeds a firing or resolved alert (pending ones are not notified). */
  update(alert: AlertInstance, nowNs: bigint, nowWallMs: number): void;
  /**
   * After loading persisted groups: feeds the firing alerts (a crash may have left one out of its
   * groups) and resolves grouped alerts that no longer fire (one may have resolved unrecorded).
   */
  reconcile(firing: readonly AlertInstance[], nowNs: bigint, nowWallMs: number): void;
  /** Notifications due now; marks them sent. */
  takeDue(nowNs: bigint, nowWallMs: number): DueNotification[];
  /** Groups changed or removed since the last call, for persistence. */
  takeDirty(): { upserts: NotificationGroupState[]; deletes: string[] };
  groups(): NotificationGroupState[];
}

export interface DispatcherOptions {
  receivers: ReadonlyMap<string, ReceiverTimings>;
  externalUrl: string;
}

function elapsed(
  sinceNs: string,
  sinceWallMs: number,
  afterMs: number,
  nowNs: bigint,
  nowWallMs: number,
): boolean {
  return nowNs >= BigInt(sinceNs) + msToNs(afterMs) || nowWallMs >= sinceWallMs + afterMs;
}

export function toNotifiedAlert(alert: AlertInstance, externalUrl: string): NotifiedAlert {
  return {
    fingerprint: alert.fingerprint,
    status: alert.state === 'resolved' ? 'resolved' : 'firing',
    labels: alert.labels,
    annotations: alert.annotations,
    startsAt: nsToRfc3339(alert.startsAtNs ?? alert.activeAtNs),
    endsAt: alert.state === 'resolved' && alert.endsAtNs !== null ? nsToRfc3339(alert.endsAtNs) : null,
    generatorUrl: `${externalUrl}/api/alerts?fingerprint=${alert.fingerprint}`,
    value: alert.value,
  };
}

export function createNotificationDispatcher(options: DispatcherOptions): NotificationDispatcher {
  const groups = new Map<string, NotificationGroupState>();
  const dirty = new Set<string>();
  const deleted = new Set<string>();

  const markDirty = (id: string) => {
    dirty.add(id);
    deleted.delete(id);
  };
  const remove = (id: string) => {
    groups.delete(id);
    dirty.delete(id);
    deleted.add(id);
  };

  const dueKind = (group: NotificationGroupState, t: ReceiverTimings, nowNs: bigint, nowWallMs: number) => {
    if (group.changed) {
      if (group.lastSentAtNs === null || group.lastSentAtWallMs === null) {
        return elapsed(group.createdAtNs, group.createdAtWallMs, t.groupWaitMs, nowNs, nowWallMs)
          ? 'change'
          : null;
      }
      return elapsed(group.lastSentAtNs, group.lastSentAtWallMs, t.groupIntervalMs, nowNs, nowWallMs)
        ? 'change'
        : null;
    }
    const anyFiring = Object.values(group.alerts).some((a) => a.status === 'firing');
    if (anyFiring && group.lastSentAtNs !== null && group.lastSentAtWallMs !== null) {
      return elapsed(group.lastSentAtNs, group.lastSentAtWallMs, t.repeatIntervalMs, nowNs, nowWallMs)
        ? 'repeat'
        : null;
    }
    return null;
  };

  const dispatcher: NotificationDispatcher = {
    load(states) {
      for (const state of states) groups.set(state.id, structuredClone(state));
    },

    update(alert, nowNs, nowWallMs) {
      if (alert.state === 'pending') return;
      const view = toNotifiedAlert(alert, options.externalUrl);
      for (const receiver of alert.receivers) {
        const timings = options.receivers.get(receiver);
        if (!timings) continue;
        const groupLabels = pickLabels(alert.labels, timings.groupBy);
        const groupKey = `governor/${receiver}:${formatLabels(groupLabels)}`;
        const id = groupKey;
        let group = groups.get(id);
        if (!group) {
          if (view.status === 'resolved') continue; // never told about it; nothing to resolve
          group = {
            id,
            receiver,
            groupKey,
            groupLabels,
            alerts: {},
            notified: {},
            createdAtNs: nowNs.toString(),
            createdAtWallMs: nowWallMs,
            lastSentAtNs: null,
            lastSentAtWallMs: null,
            changed: false,
          };
          groups.set(id, group);
          markDirty(id);
        }
        const known = group.alerts[view.fingerprint];
        if (view.status === 'resolved' && !timings.sendResolved) {
          if (known) {
            delete group.alerts[view.fingerprint];
            delete group.notified[view.fingerprint];
            if (Object.keys(group.alerts).length === 0) remove(id);
            else markDirty(id);
          }
          continue;
        }
        if (view.status === 'resolved' && !known) continue;
        group.alerts[view.fingerprint] = view;
        const unsent = group.notified[view.fingerprint] !== view.status;
        if (unsent) group.changed = true;
        // A value-only refresh is not persisted; the next state change or send carries it.
        if (unsent || known?.status !== view.status) markDirty(id);
      }
    },

    reconcile(firing, nowNs, nowWallMs) {
      for (const alert of firing) dispatcher.update(alert, nowNs, nowWallMs);
      const stillFiring = new Set(firing.map((a) => a.fingerprint));
      for (const group of groups.values()) {
        for (const view of Object.values(group.alerts)) {
          if (view.status !== 'firing' || stillFiring.has(view.fingerprint)) continue;
          group.alerts[view.fingerprint] = { ...view, status: 'resolved', endsAt: nsToRfc3339(nowNs) };
          group.changed = true;
          markDirty(group.id);
        }
      }
    },

    takeDue(nowNs, nowWallMs) {
      const due: DueNotification[] = [];
      for (const group of [...groups.values()]) {
        const timings = options.receivers.get(group.receiver);
        if (!timings) {
          remove(group.id); // receiver removed from the config
          continue;
        }
        const kind = dueKind(group, timings, nowNs, nowWallMs);
        if (kind === null) continue;
        const all = Object.values(group.alerts).sort(
          (a, b) =>
            (a.status === b.status ? 0 : a.status === 'firing' ? -1 : 1) ||
            a.startsAt.localeCompare(b.startsAt) ||
            formatLabels(a.labels).localeCompare(formatLabels(b.labels)),
        );
        const sent = timings.maxAlerts > 0 ? all.slice(0, timings.maxAlerts) : all;
        const firing = all.some((a) => a.status === 'firing');
        due.push({
          repeat: kind === 'repeat',
          notification: {
            receiver: group.receiver,
            groupKey: group.groupKey,
            groupLabels: group.groupLabels,
            status: firing ? 'firing' : 'resolved',
            alerts: sent,
            truncatedAlerts: all.length - sent.length,
            externalUrl: options.externalUrl,
            at: nsToRfc3339(nowNs),
          },
        });
        for (const alert of all) {
          if (alert.status === 'resolved') {
            delete group.alerts[alert.fingerprint];
            delete group.notified[alert.fingerprint];
          } else {
            group.notified[alert.fingerprint] = 'firing';
          }
        }
        group.lastSentAtNs = nowNs.toString();
        group.lastSentAtWallMs = nowWallMs;
        group.changed = false;
        if (Object.keys(group.alerts).length === 0) remove(group.id);
        else markDirty(group.id);
      }
      return due;
    },

    takeDirty() {
      const upserts = [...dirty].flatMap((id) => {
        const g = groups.get(id);
        return g ? [structuredClone(g)] : [];
      });
      const deletes = [...deleted];
      dirty.clear();
      deleted.clear();
      return { upserts, deletes };
    },

    groups: () => [...groups.values()].map((g) => structuredClone(g)),
  };
  return dispatcher;
}
