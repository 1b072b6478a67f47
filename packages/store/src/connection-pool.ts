import { readDeadlineLeft } from './read-deadline-scope.ts';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

// A few connections of one instance; a DuckDB connection runs one query at a time. A pool may be
// bounded: callers beyond `maxWaiting` are refused at once (ReadersBusyError), and a call that has
// not finished by its deadline — waiting included — is cancelled with `connection.interrupt()`
// (DuckDB has no statement timeout) and fails with ReadDeadlineError. So one heavy read cannot
// hold the readers, or pile up callers behind it, for longer than the deadline.

/** A read ran past its deadline and was cancelled (or, for a read of the rollups, gave up waiting for them). */
export class ReadDeadlineError extends Error {
  override readonly name = 'ReadDeadlineError';
  readonly code = 'GOV_ERR_READ_TIMEOUT';
  readonly retryAfterS = 1;
  constructor(
    readonly deadlineMs: number,
    message = `the read ran longer than ${deadlineMs} ms and was cancelled; narrow its time range, group by fewer dimensions or retry later`,
  ) {
    super(message);
  }
}

/** Every reader is busy and the queue in front of them is full. */
export class ReadersBusyError extends Error {
  override readonly name = 'ReadersBusyError';
  readonly code = 'GOV_ERR_READ_BUSY';
  readonly retryAfterS = 1;
  constructor(readonly waiting: number) {
    super(`every reader is busy and ${waiting} reads are waiting; retry after 1 s`);
  }
}

export interface ConnectionPool {
  /** Runs `fn` on a free connection; `deadlineMs` overrides the pool's deadline for this call. */
  use<T>(fn: (connection: DuckDBConnection) => Promise<T>, options?: { deadlineMs?: number }): Promise<T>;
  /** Cancels the statements running now (their calls fail); later calls run normally. */
  interruptAll(): void;
  /**
   * Shutdown: interrupts every call in progress and fails it with `reason` (whatever error the
   * interrupted statement raised), and every later call too, so a slow read cannot hold the exit.
   */
  close(reason: Error): void;
  /**
   * Shutdown of a pool that writes: later calls fail with `reason`, calls waiting for a connection
   * too, and the calls running now finish (not interrupted: a write in progress is kept). Resolves
   * once none runs, so no transaction of this pool is open when the database is checkpointed.
   */
  drain(reason: Error): Promise<void>;
  closeAll(): void;
}

export interface ConnectionPoolOptions {
  /** Calls allowed to wait for a connection; more are refused with ReadersBusyError. Default unbounded. */
  maxWaiting?: number;
  /** Default deadline of a call, waiting included; none when absent. */
  deadlineMs?: number;
}

interface Waiter {
  resolve: (c: DuckDBConnection) => void;
  reject: (error: Error) => void;
}

export async function createConnectionPool(
  instance: DuckDBInstance,
  size: number,
  options: ConnectionPoolOptions = {},
): Promise<ConnectionPool> {
  const idle: DuckDBConnection[] = [];
  const all: DuckDBConnection[] = [];
  for (let i = 0; i < size; i++) {
    const c = await instance.connect();
    idle.push(c);
    all.push(c);
  }
  const waiters: Waiter[] = [];
  let closedWith: Error | null = null;
  let drained: (() => void) | null = null;
  let draining: Promise<void> | null = null;
  const release = (c: DuckDBConnection) => {
    const next = waiters.shift();
    if (next) next.resolve(c);
    else idle.push(c);
    if (drained && idle.length === all.length) drained();
  };
  /** A free connection, or a place in the queue (`waiter`, to leave it when the deadline passes). */
  const acquire = (): { connection: Promise<DuckDBConnection>; waiter: Waiter | null } => {
    const free = idle.pop();
    if (free) return { connection: Promise.resolve(free), waiter: null };
    if (options.maxWaiting !== undefined && waiters.length >= options.maxWaiting)
      return { connection: Promise.reject(new ReadersBusyError(waiters.length)), waiter: null };
    let waiter!: Waiter;
    const connection = new Promise<DuckDBConnection>((resolve, reject) => {
      waiter = { resolve, reject };
    });
    waiters.push(waiter);
    return { connection, waiter };
  };

  const interruptBusy = () => {
    for (const c of all) if (!idle.includes(c)) c.interrupt();
  };

  const useOpen = async <T>(
    fn: (connection: DuckDBConnection) => Promise<T>,
    callOptions?: { deadlineMs?: number },
  ): Promise<T> => {
    let deadlineMs = callOptions?.deadlineMs ?? options.deadlineMs;
    // Inside one read with a deadline of its own (withReadDeadline), a call gets what is left of it.
    const read = deadlineMs === undefined ? null : readDeadlineLeft();
    if (read && deadlineMs !== undefined && read.leftMs < deadlineMs) {
      if (read.leftMs <= 0) throw new ReadDeadlineError(read.totalMs);
      deadlineMs = read.leftMs;
    }
    if (deadlineMs === undefined) {
      const connection = await acquire().connection;
      try {
        return await fn(connection);
      } finally {
        release(connection);
      }
    }
    // The error names the whole read's deadline, not the part of it left for this call.
    const reportedMs = read && deadlineMs === read.leftMs ? read.totalMs : deadlineMs;
    const pending = acquire();
    let connection: DuckDBConnection | null = null;
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      if (connection) connection.interrupt();
      else {
        const i = pending.waiter ? waiters.indexOf(pending.waiter) : -1;
        if (i >= 0) waiters.splice(i, 1)[0]!.reject(new ReadDeadlineError(reportedMs));
      }
    }, deadlineMs);
    try {
      connection = await pending.connection;
      if (expired) throw new ReadDeadlineError(reportedMs);
      return await fn(connection);
    } catch (error) {
      if (expired && !(error instanceof ReadDeadlineError) && /interrupt/i.test((error as Error).message))
        throw new ReadDeadlineError(reportedMs);
      throw error;
    } finally {
      clearTimeout(timer);
      if (connection) release(connection);
    }
  };

  return {
    async use(fn, callOptions) {
      if (closedWith) throw closedWith;
      try {
        return await useOpen(fn, callOptions);
      } catch (error) {
        throw closedWith ?? error;
      }
    },
    interruptAll: interruptBusy,
    close(reason) {
      closedWith ??= reason;
      for (const w of waiters.splice(0)) w.reject(reason);
      interruptBusy();
    },
    drain(reason) {
      closedWith ??= reason;
      for (const w of waiters.splice(0)) w.reject(reason);
      if (idle.length === all.length) return Promise.resolve();
      draining ??= new Promise<void>((resolve) => {
        drained = resolve;
      });
      return draining;
    },
    closeAll() {
      for (const c of all) c.closeSync();
    },
  };
}
