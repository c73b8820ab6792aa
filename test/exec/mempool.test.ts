import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { Mempool, type MempoolStore } from '../../src/exec/mempool.js';
import { TxBackpressureError } from '../../src/exec/index.js';
import { BlockStore, Bucket, bucketKey, type TxLocation } from '../../src/store/index.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { Ed25519Key, StateSchema, headerHash, txId, type TxId } from '../../src/types/index.js';
import { sampleBlock } from '../helpers/blocks.js';
import { tempHome } from '../helpers/daemon.js';

const tx = (s: string) => new TextEncoder().encode(s);
const digestHex = (t: Uint8Array) => createHash('sha256').update(t).digest('hex');

/** A tx index in memory that counts its lookups; it keeps nothing (the tests below use the real store for that). */
class Index implements MempoolStore {
  calls = 0;
  readonly entries = new Map<string, TxLocation>();
  async getTxIdLocations(ids: TxId[]): Promise<Array<TxLocation | null>> {
    this.calls++;
    return ids.map((id) => this.entries.get(Buffer.from(id, 'latin1').toString('hex')) ?? null);
  }
  async keepMempoolTxs(): Promise<void> {}
  async restoreMempoolTxs(): Promise<Uint8Array[]> {
    return [];
  }
}

describe('Mempool admission', () => {
  it('looks up txs that arrive together in one index read, and a block taken after settled() holds them all', async () => {
    const index = new Index();
    const mempool = new Mempool({ maxTxs: 100, maxTxBytes: 64, retryAfterSeconds: 1 }, index);
    const adds = Array.from({ length: 50 }, (_, i) => mempool.add(tx(`k${i}=v`)));
    await mempool.settled();
    expect(index.calls).toBe(1);
    expect(mempool.take(1000, 1 << 20)).toHaveLength(50);
    await Promise.all(adds);
  });

  it('still refuses the txs of a block being built when the block before it is committed (a pipelined chain)', async () => {
    const index = new Index();
    const mempool = new Mempool({ maxTxs: 100, maxTxBytes: 64, retryAfterSeconds: 1 }, index);
    await mempool.add(tx('a=1'));
    const first = mempool.take(1, 1 << 20);
    await mempool.add(tx('b=1'));
    mempool.take(1, 1 << 20);
    // The first block is committed, its tx indexed; the second is not yet.
    index.entries.set(digestHex(tx('a=1')), { height: 1n, index: 0 });
    mempool.blockCommitted(first);
    await expect(mempool.add(tx('a=1'))).rejects.toThrow('tx already committed in block 1 (index 0)');
    await expect(mempool.add(tx('b=1'))).rejects.toThrow('tx already in mempool');
  });

  it('looks up the txs that arrive while a lookup runs together in the next one, and a block after settled() holds them all', async () => {
    const index = new Index();
    // The index answers only when told: the first lookup is still running while more txs arrive, one task at a time (as POST /tx bodies do).
    const answers: Array<() => void> = [];
    const read = index.getTxIdLocations.bind(index);
    let asked = 0;
    index.getTxIdLocations = (ids) => {
      asked++;
      return new Promise((resolve) => answers.push(() => resolve(read(ids))));
    };
    const mempool = new Mempool({ maxTxs: 100, maxTxBytes: 64, retryAfterSeconds: 1 }, index);
    const adds = [mempool.add(tx('first=1'))];
    await new Promise(setImmediate);
    expect(asked).toBe(1);
    for (let i = 0; i < 5; i++) {
      adds.push(mempool.add(tx(`later${i}=1`)));
      await new Promise(setImmediate);
    }
    expect(asked).toBe(1);
    answers.shift()!();
    await new Promise(setImmediate);
    expect(asked).toBe(2);
    answers.shift()!();
    await mempool.settled();
    expect(mempool.take(1000, 1 << 20)).toHaveLength(6);
    await Promise.all(adds);
  });

  it('refuses a committed tx naming its block, a second copy while the first is looked up, and past maxTxs', async () => {
    const index = new Index();
    index.entries.set(digestHex(tx('old=1')), { height: 7n, index: 2 });
    const mempool = new Mempool({ maxTxs: 2, maxTxBytes: 64, retryAfterSeconds: 1 }, index);
    await expect(mempool.add(tx('old=1'))).rejects.toThrow('tx already committed in block 7 (index 2)');
    const first = mempool.add(tx('a=1'));
    await expect(mempool.add(tx('a=1'))).rejects.toThrow('tx already in mempool');
    const second = mempool.add(tx('b=1'));
    const full = await mempool.add(tx('c=1')).catch((err: unknown) => err);
    expect(full).toBeInstanceOf(TxBackpressureError);
    expect(full).toMatchObject({ message: expect.stringMatching(/^mempool full \(2 txs waiting\)/), httpStatus: 503, retryAfterSeconds: 1 });
    await Promise.all([first, second]);
    expect(mempool.size).toBe(2);
  });

  it('reads the index again when a block with a tx it did not hand out (a forced tx) lands during the lookup', async () => {
    const index = new Index();
    const mempool = new Mempool({ maxTxs: 10, maxTxBytes: 64, retryAfterSeconds: 1 }, index);
    const late = tx('late=1');
    const lookups = index.getTxIdLocations.bind(index);
    // The first read misses the tx; a block holding it commits before the read returns.
    index.getTxIdLocations = async (ids) => {
      const out = await lookups(ids);
      if (index.calls === 1) {
        index.entries.set(digestHex(late), { height: 2n, index: 0 });
        mempool.blockCommitted([late]);
      }
      return out;
    };
    await expect(mempool.add(late)).rejects.toThrow('tx already committed in block 2');
    expect(index.calls).toBe(2);
  });

  it('reads the index once when only a block of txs it handed out lands during the lookup', async () => {
    const index = new Index();
    const mempool = new Mempool({ maxTxs: 10, maxTxBytes: 64, retryAfterSeconds: 1 }, index);
    await mempool.add(tx('a=1'));
    const block = mempool.take(10, 1 << 20);
    const lookups = index.getTxIdLocations.bind(index);
    index.getTxIdLocations = async (ids) => {
      const out = await lookups(ids);
      mempool.blockCommitted(block);
      return out;
    };
    await mempool.add(tx('b=1'));
    expect(index.calls).toBe(2); // a=1's lookup, then b=1's: one each
  });

  it("gives a block's tx ids: of the last take's txs, forced txs before them, or txs it never handed out", async () => {
    const mempool = new Mempool({ maxTxs: 10, maxTxBytes: 64, retryAfterSeconds: 1 }, new Index());
    await Promise.all([mempool.add(tx('a=1')), mempool.add(tx('b=1'))]);
    const taken = mempool.take(10, 1 << 20);
    const forced = tx('forced=1');
    expect(mempool.txIds(taken)).toEqual(taken.map(txId));
    expect(mempool.txIds([forced, ...taken])).toEqual([forced, ...taken].map(txId));
    expect(mempool.txIds([tx('b=1'), forced])).toEqual([tx('b=1'), forced].map(txId));
  });

  it('knows a tx it handed out by its bytes in another object: a refused block decoded again (requeue), a block from a peer', async () => {
    const index = new Index();
    const mempool = new Mempool({ maxTxs: 10, maxTxBytes: 64, retryAfterSeconds: 1 }, index);
    await Promise.all([mempool.add(tx('a=1')), mempool.add(tx('b=1'))]);
    mempool.take(10, 1 << 20);
    mempool.requeue([tx('a=1')]);
    expect(mempool.take(10, 1 << 20)).toEqual([tx('a=1')]);
    index.entries.set(digestHex(tx('b=1')), { height: 3n, index: 0 });
    mempool.blockCommitted([tx('b=1')]);
    // Released: the index answers for it now (held still, it would be refused as waiting in the mempool).
    await expect(mempool.add(tx('b=1'))).rejects.toThrow('tx already committed in block 3 (index 0)');
  });
});

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A real store in a temp dir; `reopen` closes it and opens it again, as a restarted node does. */
async function tempStore() {
  const home = tempHome('noded-mempool-');
  cleanups.push(home.cleanup);
  const path = join(home.dir, 'store');
  let store = await BlockStore.open(path);
  cleanups.push(() => store.close());
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await BlockStore.open(path);
      return store;
    },
  };
}

const LIMITS = { maxTxs: 100, maxTxBytes: 64, retryAfterSeconds: 1 };
const text = (t: Uint8Array) => Buffer.from(t).toString();
/** The mempool bucket's entries (one per group commit), each as its txs' text. */
async function keptEntries(store: BlockStore): Promise<string[][]> {
  const entries: string[][] = [];
  for await (const keys of store.bucketKeys(Bucket.mempoolTx)) {
    for (const key of keys) {
      const value = Buffer.from((await store.getRaw(bucketKey(Bucket.mempoolTx, key)))!);
      const txs: string[] = [];
      for (let at = 0; at < value.length; at += 4 + value.readUInt32BE(at)) txs.push(value.subarray(at + 4, at + 4 + value.readUInt32BE(at)).toString());
      entries.push(txs);
    }
  }
  return entries;
}

/** A promise and its resolve, to hold a write until the test lets it go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('GroupCommit (classic-level)', () => {
  it('writes what arrives during a write in one next batch, and each caller resolves once its batch is written', async () => {
    const home = tempHome('noded-group-');
    cleanups.push(home.cleanup);
    const db = new ClassicLevel<string, string>(join(home.dir, 'db'));
    await db.open();
    cleanups.push(() => db.close());
    const batches: string[][] = [];
    const first = gate();
    const group = new GroupCommit<{ type: 'put'; key: string; value: string }>(async (ops) => {
      batches.push(ops.map((op) => op.key));
      if (batches.length === 1) await first.opened;
      await db.batch(ops);
    });
    const put = (key: string) => group.write([{ type: 'put', key, value: key }]);
    const done: string[] = [];
    const a = put('a').then(() => done.push('a'));
    await new Promise(setImmediate); // the first batch is under way (held)
    const rest = ['b', 'c', 'd'].map((k) => put(k).then(() => done.push(k)));
    await new Promise(setImmediate);
    expect(done, 'nobody is answered before their batch is written').toEqual([]);
    expect(await db.get('a')).toBeUndefined();
    first.open();
    await Promise.all([a, ...rest]);
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
    expect(await db.getMany(['a', 'b', 'c', 'd'])).toEqual(['a', 'b', 'c', 'd']);
  });

  it('rejects every caller of a failed batch, and the next batch goes on', async () => {
    let calls = 0;
    const group = new GroupCommit<number>(async () => {
      if (++calls === 1) throw new Error('disk full');
    });
    const failed = [group.write([1]), group.write([2])];
    for (const f of failed) await expect(f).rejects.toThrow('disk full');
    await expect(group.write([3])).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});

describe('Mempool durability (real store)', () => {
  it('acknowledges a tx only once the store keeps it; a block taking it meanwhile commits after that write, and takes it out', async () => {
    const { store } = await tempStore();
    // Hold the store's LevelDB writes of the mempool bucket (one put per group) until the test lets them go.
    const held = gate();
    const db = (store as unknown as { db: ClassicLevel<Uint8Array, Uint8Array> }).db;
    const put = db.put.bind(db);
    db.put = async (key: Uint8Array, value: Uint8Array) => {
      await held.opened;
      return put(key, value);
    };
    const mempool = new Mempool(LIMITS, store);
    let acked = false;
    const add = mempool.add(tx('a=1')).then(() => (acked = true));
    await mempool.settled();
    const taken = mempool.take(10, 1 << 20);
    expect(taken.map(text)).toEqual(['a=1']);
    const block = sampleBlock(1n, Ed25519Key.generate(), taken);
    let committed = false;
    const commit = store.commitBlock(block, headerHash(block.header!.header!), create(StateSchema, { lastBlockHeight: 1n })).then(() => (committed = true));
    await new Promise(setImmediate);
    expect([acked, committed, store.height()], 'neither the answer nor the block before the tx is kept').toEqual([false, false, 0n]);
    held.open();
    await Promise.all([add, commit]);
    expect(await keptEntries(store), "the block's batch took it out").toEqual([]);
  });

  it('shares one store write among txs that arrive together', async () => {
    const { store } = await tempStore();
    const kept: number[] = [];
    const keep = store.keepMempoolTxs.bind(store);
    store.keepMempoolTxs = (txs) => {
      kept.push(txs.length);
      return keep(txs);
    };
    const mempool = new Mempool(LIMITS, store);
    await Promise.all(Array.from({ length: 30 }, (_, i) => mempool.add(tx(`k${i}=v`))));
    expect(kept).toEqual([30]);
  });

  it('re-admits kept txs after a restart in arrival order, without those a committed block took', async () => {
    const s = await tempStore();
    const mempool = new Mempool(LIMITS, s.store);
    await Promise.all(['a=1', 'b=1', 'c=1'].map((t) => mempool.add(tx(t))));
    await mempool.add(tx('d=1'));
    expect(await keptEntries(s.store), 'one entry per group commit').toEqual([['a=1', 'b=1', 'c=1'], ['d=1']]);
    // A block takes the first two and commits; the node is then killed before taking the others.
    const taken = mempool.take(2, 1 << 20);
    const block = sampleBlock(1n, Ed25519Key.generate(), taken);
    await s.store.commitBlock(block, headerHash(block.header!.header!), create(StateSchema, { lastBlockHeight: 1n }));
    expect(await keptEntries(s.store), "the block's batch took its txs out").toEqual([['c=1'], ['d=1']]);
    const restarted = new Mempool(LIMITS, await s.reopen());
    expect(await restarted.restore()).toBe(2);
    expect(restarted.peek(10).map(text)).toEqual(['c=1', 'd=1']);
    // Taken and committed now: the next restart finds nothing.
    await restarted.add(tx('e=1'));
    expect(restarted.take(10, 1 << 20).map(text)).toEqual(['c=1', 'd=1', 'e=1']);
    await expect(restarted.add(tx('c=1')), 'a re-admitted tx is held once').rejects.toThrow('tx already in mempool');
  });

  it("takes a block's txs out of their entries in any order, past txs no entry holds (another copy of a kept tx's bytes)", async () => {
    const s = await tempStore();
    const kept = ['a=1', 'b=1', 'c=1', 'd=1', 'e=1', 'f=1'].map(tx);
    await s.store.keepMempoolTxs(kept.slice(0, 3));
    await s.store.keepMempoolTxs(kept.slice(3, 4));
    await s.store.keepMempoolTxs(kept.slice(4));
    // Enough txs from no entry that the search through the groups gives way to a map of every kept tx.
    const foreign = Array.from({ length: 8 }, (_, i) => tx(i === 0 ? 'c=1' : `x${i}=1`));
    const first = sampleBlock(1n, Ed25519Key.generate(), [kept[5]!, ...foreign, kept[0]!, kept[3]!, kept[1]!]);
    await s.store.commitBlock(first, headerHash(first.header!.header!), create(StateSchema, { lastBlockHeight: 1n }));
    expect(await keptEntries(s.store)).toEqual([['c=1'], ['e=1']]);
    const second = sampleBlock(2n, Ed25519Key.generate(), [kept[4]!, kept[2]!]);
    await s.store.commitBlock(second, headerHash(second.header!.header!), create(StateSchema, { lastBlockHeight: 2n }));
    expect(await keptEntries(s.store)).toEqual([]);
  });

  it('drops from the store a kept tx a committed block holds (a store written by a node that left it there)', async () => {
    const s = await tempStore();
    const block = sampleBlock(1n, Ed25519Key.generate(), [tx('old=1')]);
    await s.store.commitBlock(block, headerHash(block.header!.header!), create(StateSchema, { lastBlockHeight: 1n }));
    await s.store.keepMempoolTxs([tx('old=1'), tx('new=1')]);
    const mempool = new Mempool(LIMITS, await s.reopen());
    expect(await mempool.restore()).toBe(1);
    expect(mempool.peek(10).map(text)).toEqual(['new=1']);
    expect(await keptEntries(s.store)).toEqual([['new=1']]);
  });
});
