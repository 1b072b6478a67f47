/** FIFO queue with O(1) push, shift and unshift (a replica's waiting queue can grow to thousands). */
export interface Deque<T> {
  push(item: T): void;
  unshift(item: T): void;
  shift(): T | undefined;
  peek(): T | undefined;
  readonly length: number;
  toArray(): T[];
}

export function createDeque<T>(): Deque<T> {
  let items: (T | undefined)[] = [];
  let head = 0;
  const compact = () => {
    if (head > 1024 && head * 2 > items.length) {
      items = items.slice(head);
      head = 0;
    }
  };
  return {
    push(item) {
      items.push(item);
    },
    unshift(item) {
      if (head > 0) {
        head -= 1;
        items[head] = item;
      } else {
        items.unshift(item);
      }
    },
    shift() {
      if (head >= items.length) return undefined;
      const item = items[head];
      items[head] = undefined;
      head += 1;
      compact();
      return item;
    },
    peek() {
      return head < items.length ? items[head] : undefined;
    },
    get length() {
      return items.length - head;
    },
    toArray() {
      return items.slice(head) as T[];
    },
  };
}
