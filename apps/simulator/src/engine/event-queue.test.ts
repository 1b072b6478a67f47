import { describe, expect, it } from 'vitest';
import { createRng } from './random.ts';
import { createEventQueue } from './event-queue.ts';

describe('event queue', () => {
  it('pops by time, then priority, then insertion order', () => {
    const queue = createEventQueue<string>();
    queue.push(5, 'late');
    queue.push(1, 'b', 2);
    queue.push(1, 'a', 1);
    queue.push(1, 'c', 2);
    queue.push(0.5, 'first');
    const order: string[] = [];
    for (let e = queue.pop(); e; e = queue.pop()) order.push(e.payload);
    expect(order).toEqual(['first', 'a', 'b', 'c', 'late']);
  });

  it('returns random insertions in sorted order', () => {
    const rng = createRng(7, 'heap');
    const queue = createEventQueue<number>();
    const times = Array.from({ length: 5000 }, () => rng.uniform(0, 1000));
    for (const t of times) queue.push(t, t);
    const popped: number[] = [];
    while (queue.size > 0) popped.push(queue.pop()!.timeMs);
    expect(popped).toEqual([...times].sort((x, y) => x - y));
  });
});
