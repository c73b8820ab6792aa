import type { ClassicLevel } from 'classic-level';
import { Bucket, bucketKey, heightBytes, readHeight } from './buckets.js';
import { GroupCommit } from './group-commit.js';
import type { StoreOp } from './store.js';

type Db = ClassicLevel<Uint8Array, Uint8Array>;

/** One entry of the mempool bucket: the txs one group commit kept, those still in no committed block. */
interface Group {
  key: Uint8Array;
  waiting: Set<Uint8Array>;
}

/** Txs as one bucket value: each as its length (4 bytes BE) and its bytes, in order. */
function encodeTxs(txs: Iterable<Uint8Array>): Uint8Array {
  const list = [...txs];
  const out = new Uint8Array(list.reduce((n, tx) => n + 4 + tx.length, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const tx of list) {
    view.setUint32(at, tx.length);
    out.set(tx, at + 4);
    at += 4 + tx.length;
  }
  return out;
}

function decodeTxs(value: Uint8Array): Uint8Array[] {
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const txs: Uint8Array[] = [];
  for (let at = 0; at < value.length;) {
    const length = view.getUint32(at);
    txs.push(value.slice(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return txs;
}

/**
 * The mempool bucket: acknowledged txs no committed block holds yet, so a
 * killed node re-admits them. The txs a group commit writes together are one
 * entry (key: the group's number, 8 bytes BE, so the bucket reads back in
 * arrival order): one LevelDB put per group, not per tx, and a block's commit
 * deletes or rewrites the few entries its txs came from rather than one key
 * per tx. Which entry a tx is in is known for the tx objects kept here, which
 * are the ones the mempool hands to blocks: each group's Set holds them, and
 * the groups are searched oldest first from the one the tx before was in (the
 * mempool hands txs out in the order they were kept), in place of a WeakMap
 * entry a tx (its set and ephemeron work in every GC were 2.7% of the
 * producer figure's CPU profile).
 */
export class MempoolJournal {
  private nextGroup = 0n;
  /** The groups whose txs no committed block holds yet, oldest first (keys in order): kept or re-admitted by this process. */
  private readonly groups = new Set<Group>();
  private readonly writes = new GroupCommit<Uint8Array>((txs) => this.writeGroup(txs));

  constructor(
    private readonly db: Db,
    /** Writes a batch: the store's one write path (BlockStore.writeBatch). */
    private readonly write: (ops: StoreOp[]) => Promise<void>,
  ) {}

  /** Reads where group numbering goes on: after the bucket's last entry. */
  async open(): Promise<void> {
    const [last] = await this.db.keys({ gte: bucketKey(Bucket.mempoolTx), lt: bucketKey(Bucket.mempoolTx + 1), reverse: true, limit: 1 }).all();
    this.nextGroup = last ? readHeight(last, 1) + 1n : 0n;
  }

  /** Keeps txs; resolves once written. Calls made while a write is under way share the next entry (group commit). */
  keep(txs: Uint8Array[]): Promise<void> {
    return this.writes.write(txs);
  }

  private async writeGroup(txs: Uint8Array[]): Promise<void> {
    const key = bucketKey(Bucket.mempoolTx, heightBytes(this.nextGroup++));
    await this.write([{ type: 'put', key, value: encodeTxs(txs) }]);
    this.groups.add({ key, waiting: new Set(txs) });
  }

  /**
   * The kept txs in the order they were kept, but those `isCommitted` says a
   * block holds; entries left with none are deleted, the others rewritten
   * without them. Called once, at start, before any keep().
   */
  async restore(isCommitted: (txs: Uint8Array[]) => Promise<boolean[]>): Promise<Uint8Array[]> {
    const entries = await this.db.iterator({ gte: bucketKey(Bucket.mempoolTx), lt: bucketKey(Bucket.mempoolTx + 1) }).all();
    const kept = entries.map(([key, value]) => ({ key, txs: decodeTxs(value) }));
    const committed = await isCommitted(kept.flatMap((e) => e.txs));
    const ops: StoreOp[] = [];
    const restored: Uint8Array[] = [];
    let i = 0;
    for (const entry of kept) {
      const waiting = entry.txs.filter(() => !committed[i++]);
      if (waiting.length < entry.txs.length) {
        ops.push(waiting.length === 0 ? { type: 'del', key: entry.key } : { type: 'put', key: entry.key, value: encodeTxs(waiting) });
      }
      if (waiting.length === 0) continue;
      this.groups.add({ key: entry.key, waiting: new Set(waiting) });
      restored.push(...waiting);
    }
    if (ops.length > 0) await this.write(ops);
    return restored;
  }

  /**
   * The writes that take a block's txs out of the bucket, for the block's own
   * batch: each entry they came from deleted, or rewritten with the txs it
   * still holds; `done` records them once that batch is written. Call after
   * written(): a tx is known here once its entry is written.
   */
  commitOps(txs: Uint8Array[]): { ops: StoreOp[]; done: () => void } {
    const touched = new Map<Group, Uint8Array[]>();
    const find = this.groupFinder();
    for (const tx of txs) {
      const group = find(tx);
      if (!group) continue;
      const leaving = touched.get(group);
      if (leaving) leaving.push(tx);
      else touched.set(group, [tx]);
    }
    if (touched.size === 0) return { ops: [], done: () => {} };
    const ops: StoreOp[] = [];
    /** Groups the block leaves txs in: what they still hold is recorded once the batch is written. */
    const partial: Array<[Group, Uint8Array[]]> = [];
    /** Groups the block empties: gone once the batch is written. */
    const emptied: Group[] = [];
    for (const [group, leaving] of touched) {
      // Each tx is in its group once: a block that takes as many as wait there takes them all (a block's usual
      // case), and the group is gone with its entry (its txs, committed, are never handed out again).
      if (leaving.length === group.waiting.size) {
        ops.push({ type: 'del', key: group.key });
        emptied.push(group);
        continue;
      }
      const left = new Set(leaving);
      const waiting = [...group.waiting].filter((tx) => !left.has(tx));
      ops.push({ type: 'put', key: group.key, value: encodeTxs(waiting) });
      partial.push([group, leaving]);
    }
    return {
      ops,
      done: () => {
        for (const group of emptied) this.groups.delete(group);
        for (const [group, leaving] of partial) for (const tx of leaving) group.waiting.delete(tx);
      },
    };
  }

  /**
   * Finds the group whose entry holds a tx, for one block's txs: first the
   * group the tx before was in, then each group, oldest first (a block takes
   * the oldest txs, group after group). A tx kept by no group (a forced tx, a
   * synced block's) looks in every group, so once a block's look-ups have
   * probed more groups than the groups hold txs, the rest use a map of every
   * waiting tx, made once: never more work than a map a tx.
   */
  private groupFinder(): (tx: Uint8Array) => Group | null {
    let last: Group | null = null;
    let budget = 0;
    for (const group of this.groups) budget += group.waiting.size;
    let byTx: Map<Uint8Array, Group> | null = null;
    return (tx) => {
      if (last?.waiting.has(tx)) return last;
      if (byTx) return byTx.get(tx) ?? null;
      for (const group of this.groups) {
        if (budget-- <= 0) {
          byTx = new Map();
          for (const g of this.groups) for (const kept of g.waiting) byTx.set(kept, g);
          return byTx.get(tx) ?? null;
        }
        if (group.waiting.has(tx)) return (last = group);
      }
      return null;
    };
  }

  /** Resolves once every keep() asked for so far is written (or failed). */
  written(): Promise<void> {
    return this.writes.written();
  }
}
