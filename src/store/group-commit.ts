/** One caller's writes waiting for the next batch. */
interface Waiting<Op> {
  ops: Op[];
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Group commit: writes that arrive while a batch is being written go out
 * together in the next one, so concurrent callers share one LevelDB write
 * instead of queueing a write each. Each caller's promise resolves once the
 * batch holding its writes is written (or rejects with its error).
 */
export class GroupCommit<Op> {
  private waiting: Array<Waiting<Op>> = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly writeBatch: (ops: Op[]) => Promise<void>) {}

  write(ops: Op[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ops, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** Resolves once every write asked for so far is written or failed. */
  async flushed(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    // The first batch waits a microtask, so the writes of requests handled in the same turn go with it.
    await Promise.resolve();
    while (this.waiting.length > 0) {
      const group = this.waiting;
      this.waiting = [];
      try {
        await this.writeBatch(group.flatMap((w) => w.ops));
        for (const w of group) w.resolve();
      } catch (err) {
        for (const w of group) w.reject(err as Error);
      }
    }
    this.writing = null;
  }
}
