import type { Clock } from '../../src/util/index.js';

interface Sleeper {
  until: number;
  ms: number;
  resolve: () => void;
}

/**
 * A clock the test moves by hand: `now()` stands still and every `sleep` waits
 * until the test advances past its end, so a component's waits (retry backoff,
 * a poll, a search watching DA) take no wall time and happen in a known order.
 */
export class ManualClock implements Clock {
  private time: number;
  private readonly sleepers: Sleeper[] = [];
  private readonly watchers: Array<() => void> = [];

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sleeper: Sleeper = {
        until: this.time + ms,
        ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers.splice(this.sleepers.indexOf(sleeper), 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(sleeper);
      for (const watcher of this.watchers.splice(0)) watcher();
    });
  }

  /** The lengths of the sleeps now pending, in the order they began. */
  pending(): number[] {
    return this.sleepers.map((s) => s.ms);
  }

  /** Resolves once a sleep is pending (at once if one is), with its length. */
  async sleeping(): Promise<number> {
    while (this.sleepers.length === 0) await new Promise<void>((resolve) => this.watchers.push(resolve));
    return this.sleepers[0]!.ms;
  }

  /** Moves the time on by `ms`, ending every sleep that is due by then. */
  advance(ms: number): void {
    this.time += ms;
    for (const sleeper of this.sleepers.filter((s) => s.until <= this.time)) {
      this.sleepers.splice(this.sleepers.indexOf(sleeper), 1);
      sleeper.resolve();
    }
  }

  /** Waits for the next sleep and moves the time to its end: the component's wait is over. Returns its length. */
  async endNextSleep(): Promise<number> {
    await this.sleeping();
    const next = this.sleepers.reduce((a, b) => (b.until < a.until ? b : a));
    this.advance(next.until - this.time);
    return next.ms;
  }
}
