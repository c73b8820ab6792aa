import { NodeUnreachableError } from '../client/index.js';
import { readLogTail } from './log-tail.js';
import type { DashboardSource, NodeSnapshot } from './source.js';

/** Why the latest reading failed, and since when readings have been failing. */
export interface FeedProblem {
  message: string;
  /** Unix ms of the first failed reading in this run of failures. */
  since: number;
}

export interface FeedState {
  /** The last good reading, kept (and shown as stale) while readings fail. */
  snapshot: NodeSnapshot | null;
  /** Unix ms `snapshot` was read. */
  readAt: number;
  problem: FeedProblem | null;
  /** The tail of the node's log file (`start --dashboard`); null when there is no file to tail. */
  log: string[] | null;
}

export interface FeedOptions {
  intervalMs: number;
  /** A reading that takes longer fails with "did not answer"; the next one starts on time. */
  timeoutMs: number;
  logFile?: string;
}

/** Log lines kept: more than the tallest screen shows. */
const LOG_LINES = 200;

class ReadingTimeout extends Error {}

/** The operator's words for a failed reading: where, what, and that the dashboard keeps trying. */
export function describeFailure(err: unknown, target: string): string {
  if (err instanceof NodeUnreachableError) return `no node at ${err.address} — retrying`;
  if (err instanceof ReadingTimeout) return `${target} did not answer in ${err.message} — retrying`;
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `${target} did not answer in time — retrying`;
  return `${target}: ${(err as Error).message ?? String(err)} — retrying`;
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadingTimeout(`${(ms / 1000).toFixed(1)}s`)), ms);
  });
  promise.catch(() => {}); // a reading that lost the race may still fail later: nobody waits for it
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Reads the source every interval, one reading at a time, and tells subscribers
 * each new state. A failed reading never throws: it becomes `problem`, and the
 * next reading that succeeds clears it.
 */
export class DashboardFeed {
  private current: FeedState = { snapshot: null, readAt: 0, problem: null, log: null };
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(
    readonly source: DashboardSource,
    private readonly opts: FeedOptions,
  ) {}

  get state(): FeedState {
    return this.current;
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** One reading of the source (and the log tail); resolves when subscribers have been told. */
  async refresh(): Promise<void> {
    const next = { ...this.current };
    try {
      next.snapshot = await withDeadline(this.source.snapshot(), this.opts.timeoutMs);
      next.readAt = Date.now();
      next.problem = null;
    } catch (err) {
      next.problem = { message: describeFailure(err, this.source.target), since: this.current.problem?.since ?? Date.now() };
    }
    if (this.opts.logFile) {
      try {
        next.log = await readLogTail(this.opts.logFile, LOG_LINES);
      } catch (err) {
        next.log = [`cannot read ${this.opts.logFile}: ${(err as Error).message}`];
      }
    }
    this.current = next;
    for (const listener of this.listeners) listener();
  }

  /** Reads now and then every interval until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    const tick = async () => {
      await this.refresh();
      // refresh() keeps a failed read as the feed's problem and never rejects: the tick is fire-and-forget.
      if (this.running) this.timer = setTimeout(() => void tick(), this.opts.intervalMs);
    };
    void tick();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
