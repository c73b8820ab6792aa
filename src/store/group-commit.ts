/** The writes gathered for one batch, and its callers' shared answer. */
interface Batch<Op> {
  ops: Op[];
  done: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Group commit: writes that arrive while a batch is being written go out
 * together in the next one, so concurrent callers share one write instead of
 * queueing a write each. Each caller's promise resolves once the batch holding
 * its writes is written (or rejects with its error).
 */
export class GroupCommit<Op> {
  /** The batch gathering writes, not yet started. */
  private next: Batch<Op> | null = null;
  private draining: Promise<void> | null = null;
  /** Settles once the batch of the latest write() is written or failed. */
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly writeBatch: (ops: Op[]) => Promise<void>) {}

  write(ops: Op[]): Promise<void> {
    if (!this.next) {
      let resolve = () => {};
      let reject: (err: Error) => void = () => {};
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.next = { ops: [], done, resolve, reject };
      this.last = done.catch(() => undefined);
      this.draining ??= this.drain();
    }
    for (const op of ops) this.next.ops.push(op);
    return this.next.done;
  }

  /** Resolves once every write asked for so far is written or failed (not those asked for meanwhile). */
  written(): Promise<void> {
    return this.last;
  }

  private async drain(): Promise<void> {
    // The first batch waits a microtask, so the writes asked for in the same turn go with it.
    await Promise.resolve();
    for (let batch = this.next; batch; batch = this.next) {
      this.next = null;
      try {
        await this.writeBatch(batch.ops);
        batch.resolve();
      } catch (err) {
        batch.reject(err as Error);
      }
    }
    this.draining = null;
  }
}
