/**
 * GetBlock's JSON answers by block height, as the bytes sent, least recently
 * used first out once they exceed `maxBytes`.
 *
 * A committed block never changes, but its DA heights do (when the block is
 * included on DA): the owner evicts a height whenever its DA heights are
 * written. An answer read from the store while such a write was under way may
 * hold the old DA heights, so `set` drops an answer read before the last
 * eviction.
 */
export class BlockJsonCache {
  private readonly entries = new Map<bigint, Uint8Array>();
  private bytes = 0;
  private evictions = 0;
  /** The height at the back of `entries` (the most recently used), if any. */
  private newest: bigint | undefined;

  constructor(private readonly maxBytes: number) {}

  get(height: bigint): Uint8Array | undefined {
    const json = this.entries.get(height);
    if (json !== undefined && height !== this.newest) {
      // Map order is the recency order: move it to the back (a delete and a set cost more than the rest
      // of a cached answer, so not when it is there already, as for clients polling one height).
      this.entries.delete(height);
      this.entries.set(height, json);
      this.newest = height;
    }
    return json;
  }

  /** Taken before reading a block from the store, and handed to `set` with what was read. */
  readStamp(): number {
    return this.evictions;
  }

  set(height: bigint, json: Uint8Array, readStamp: number): void {
    if (readStamp !== this.evictions || json.length > this.maxBytes) return;
    this.remove(height);
    this.entries.set(height, json);
    this.newest = height;
    this.bytes += json.length;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.length;
    }
  }

  /** Drops a height's answer, and any answer being read meanwhile. */
  evict(height: bigint): void {
    this.evictions++;
    this.remove(height);
  }

  private remove(height: bigint): void {
    const json = this.entries.get(height);
    if (json === undefined) return;
    this.entries.delete(height);
    this.bytes -= json.length;
  }
}
