// Binary min-heap of simulation events ordered by (time, priority, insertion order), so that runs
// are deterministic even when many events share a timestamp.

export interface SimEvent<T> {
  timeMs: number;
  priority: number;
  seq: number;
  payload: T;
}

export interface EventQueue<T> {
  push(timeMs: number, payload: T, priority?: number): void;
  pop(): SimEvent<T> | undefined;
  peekTimeMs(): number;
  readonly size: number;
}

export function createEventQueue<T>(): EventQueue<T> {
  const heap: SimEvent<T>[] = [];
  let seq = 0;
  const less = (x: SimEvent<T>, y: SimEvent<T>): boolean =>
    x.timeMs < y.timeMs ||
    (x.timeMs === y.timeMs && (x.priority < y.priority || (x.priority === y.priority && x.seq < y.seq)));

  const siftUp = (index: number): void => {
    let i = index;
    const item = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (!less(item, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = item;
  };
  const siftDown = (index: number): void => {
    let i = index;
    const n = heap.length;
    const item = heap[i]!;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && less(heap[right]!, heap[left]!) ? right : left;
      if (!less(heap[child]!, item)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = item;
  };

  return {
    push(timeMs, payload, priority = 0) {
      heap.push({ timeMs, priority, seq: seq++, payload });
      siftUp(heap.length - 1);
    },
    pop() {
      if (heap.length === 0) return undefined;
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        siftDown(0);
      }
      return top;
    },
    peekTimeMs() {
      return heap.length > 0 ? heap[0]!.timeMs : Number.POSITIVE_INFINITY;
    },
    get size() {
      return heap.length;
    },
  };
}
