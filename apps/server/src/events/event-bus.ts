// In-process publish/subscribe for what GET /api/events streams: control decisions, alerts, … Each
// event gets a sequence id so an EventSource that reconnects with Last-Event-ID misses nothing that
// is still in the replay buffer.

export interface GovernorEvent {
  /** Dotted name, e.g. `recommendation.created`, `control.action`, `alert.firing`. */
  type: string;
  data: unknown;
}

export interface PublishedEvent extends GovernorEvent {
  id: number;
  /** Wall-clock time of publication (RFC 3339). */
  publishedAt: string;
}

export interface EventBus {
  publish(event: GovernorEvent): void;
  /** Returns the unsubscribe function. A listener that throws is dropped, not retried. */
  subscribe(listener: (event: PublishedEvent) => void): () => void;
  /** Buffered events newer than `afterId`, oldest first. */
  replay(afterId: number): PublishedEvent[];
  listenerCount(): number;
}

export interface EventBusOptions {
  bufferSize?: number;
  now?: () => number;
  onListenerError?: (error: unknown) => void;
}

export function createEventBus(options: EventBusOptions = {}): EventBus {
  const bufferSize = options.bufferSize ?? 512;
  const now = options.now ?? Date.now;
  const listeners = new Set<(event: PublishedEvent) => void>();
  const buffer: PublishedEvent[] = [];
  let nextId = 1;
  return {
    publish(event) {
      const published: PublishedEvent = {
        ...event,
        id: nextId++,
        publishedAt: new Date(now()).toISOString(),
      };
      buffer.push(published);
      if (buffer.length > bufferSize) buffer.shift();
      for (const listener of [...listeners]) {
        try {
          listener(published);
        } catch (error) {
          listeners.delete(listener);
          options.onListenerError?.(error);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    replay(afterId) {
      return buffer.filter((e) => e.id > afterId);
    },
    listenerCount: () => listeners.size,
  };
}
