import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { BlockStore, MetadataKey, decodeStoredBlock, emptyState } from '../../src/store/index.js';
import { BlockSchema, Ed25519Key, StateSchema, headerHash } from '../../src/types/index.js';
import { Mempool, TxAlreadyKnownError } from '../../src/exec/index.js';
import { storeOpenRemedy } from '../../src/store/open-error.js';
import { sampleBlock } from '../helpers/blocks.js';
import { tempHome } from '../helpers/daemon.js';

const signer = Ed25519Key.generate();
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openTemp() {
  const home = tempHome();
  cleanups.push(home.cleanup);
  const store = await BlockStore.open(join(home.dir, 'store'));
  cleanups.push(() => store.close());
  return { store, dir: home.dir };
}

const makeBlock = (height: bigint) => sampleBlock(height, signer);

describe('BlockStore', () => {
  it("indexes each committed tx by sha256 in the block's batch; the mempool refuses it then, naming the block", async () => {
    const { store } = await openTemp();
    const mempool = new Mempool({ maxTxs: 10, maxTxBytes: 1024, retryAfterSeconds: 1 }, store);
    const tx = new TextEncoder().encode('k1=v');
    await mempool.add(tx);
    expect(mempool.take(10, 1024)).toEqual([tx]);
    // Taken for the block being built, not yet indexed: still refused.
    await expect(mempool.add(tx)).rejects.toThrow('tx already in mempool');
    const b = makeBlock(1n);
    await store.commitBlock(b, headerHash(b.header!.header!), create(StateSchema, { lastBlockHeight: 1n }));
    mempool.blockCommitted(b.data!.txs);
    expect(await store.getTxLocation(createHash('sha256').update(tx).digest())).toEqual({ height: 1n, index: 0 });
    expect(await store.getTxLocation(new Uint8Array(32))).toBeNull();
    const refused = await mempool.add(tx).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TxAlreadyKnownError);
    expect(refused).toMatchObject({ message: 'tx already committed in block 1 (index 0)', httpStatus: 409 });
    expect([mempool.size, mempool.bytes]).toEqual([0, 0]);
  });

  it('commits a block with its state and finds it by height and by hash', async () => {
    const { store } = await openTemp();
    expect(store.height()).toBe(0n);
    const b = makeBlock(1n);
    const hash = headerHash(b.header!.header!);
    await store.commitBlock(b, hash, create(StateSchema, { ...emptyState('c', 1n), lastBlockHeight: 1n }));
    expect(store.height()).toBe(1n);
    const stored = (await store.getBlock(1n))!;
    expect(toBinary(BlockSchema, decodeStoredBlock(stored))).toEqual(toBinary(BlockSchema, b));
    expect(await store.getHeightByHash(hash)).toBe(1n);
    expect(await store.getBlock(2n)).toBeNull();
    expect((await store.getState())!.lastBlockHeight).toBe(1n);
  });

  it('records DA heights per block', async () => {
    const { store } = await openTemp();
    const b = makeBlock(1n);
    await store.commitBlock(b, headerHash(b.header!.header!), create(StateSchema, { lastBlockHeight: 1n }));
    await store.setDaHeights(1n, 10n, 11n);
    const stored = (await store.getBlock(1n))!;
    expect([stored.headerDaHeight, stored.dataDaHeight]).toEqual([10n, 11n]);
  });

  it('reads a range of blocks in one pass, and tells listeners of every DA-height write', async () => {
    const { store } = await openTemp();
    for (const h of [1n, 2n, 3n]) {
      const b = makeBlock(h);
      await store.commitBlock(b, headerHash(b.header!.header!), create(StateSchema, { lastBlockHeight: h }));
    }
    const read: Array<{ height: bigint; bytes: Uint8Array }> = [];
    for await (const batch of store.blocksInRange(2n, 5n)) read.push(...batch);
    expect(read.map((b) => b.height)).toEqual([2n, 3n]);
    expect(Buffer.compare(read[0]!.bytes, (await store.getBlock(2n))!.bytes)).toBe(0);
    const written: bigint[] = [];
    const off = store.onDaHeightsWritten((h) => written.push(h));
    await store.markDaIncluded(1n, 2n, 5n, 5n);
    await store.setDaHeights(3n, 6n, 6n);
    off();
    await store.setDaHeights(3n, 7n, 7n);
    expect(written).toEqual([1n, 2n, 3n]);
  });

  it("an aggregator's DA blob signatures go in the DA heights' batch; a clear takes those another node's inclusions left", async () => {
    const { store } = await openTemp();
    const sig = (h: number) => new Uint8Array(128).fill(h);
    await store.writeBatch([1, 2, 3, 4].map((h) => store.daSignaturesOp(BigInt(h), sig(h))));
    const batches: number[] = [];
    const writeBatch = store.writeBatch.bind(store);
    store.writeBatch = (ops) => (batches.push(ops.length), writeBatch(ops));
    await store.markDaIncluded(1n, 2n, 5n, 5n);
    expect(batches).toEqual([4]);
    expect((await store.getDaSignatures([1n, 2n, 3n, 4n])).map((s) => s?.[0])).toEqual([undefined, undefined, 3, 4]);
    await store.clearDaSignatures(3n);
    expect((await store.getDaSignatures([3n, 4n])).map((s) => s?.[0])).toEqual([undefined, 4]);
  });

  it('resumes at the last committed height after reopening', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    const path = join(home.dir, 'store');
    const first = await BlockStore.open(path);
    for (const h of [1n, 2n, 3n]) {
      const b = makeBlock(h);
      await first.commitBlock(b, headerHash(b.header!.header!), create(StateSchema, { lastBlockHeight: h }));
    }
    await first.close();
    await first.close();
    const again = await BlockStore.open(path);
    cleanups.push(() => again.close());
    expect(again.height()).toBe(3n);
  });

  it("finds every committed tx after reopening, whatever the tx filter's snapshot covers (an older one, a damaged one)", async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    const path = join(home.dir, 'store');
    const sha256 = (tx: string) => createHash('sha256').update(tx).digest();
    const commit = async (store: BlockStore, h: bigint) => {
      const b = makeBlock(h);
      await store.commitBlock(b, headerHash(b.header!.header!), create(StateSchema, { lastBlockHeight: h }));
    };
    const expectFound = async (store: BlockStore) => {
      expect(await store.getTxLocations([sha256('k1=v'), sha256('k2=v'), sha256('k3=v')])).toEqual([{ height: 1n, index: 0 }, { height: 2n, index: 0 }, null]);
    };
    let store = await BlockStore.open(path);
    await commit(store, 1n);
    await store.close();
    store = await BlockStore.open(path);
    // The snapshot covering block 1 only: as after a crash that left block 2 out of the last one.
    const older = (await store.getMetadata(MetadataKey.txFilter))!;
    await commit(store, 2n);
    await expectFound(store);
    await store.close();
    for (const snapshot of [older, new Uint8Array([0, 0, 0, 0, 0, 0, 0, 9, 1, 2, 3])]) {
      store = await BlockStore.open(path);
      await store.setMetadata(MetadataKey.txFilter, snapshot);
      await store.close();
      store = await BlockStore.open(path);
      cleanups.push(() => store.close());
      await expectFound(store);
      await store.close();
    }
  });

  it('names the process holding the lock', async () => {
    const { dir } = await openTemp();
    writeFileSync(join(dir, 'node.pid'), `${process.pid}\n`);
    await expect(BlockStore.open(join(dir, 'store'))).rejects.toThrow(`already in use by process ${process.pid}`);
    // A stale pid file (its process gone) is not blamed.
    writeFileSync(join(dir, 'node.pid'), '2147483646\n');
    await expect(BlockStore.open(join(dir, 'store'))).rejects.toThrow(/already in use by another process/);
  });
});

describe('a store that cannot be opened', () => {
  it('names the file in the way of data/ and what to do', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    writeFileSync(join(home.dir, 'data'), 'not a directory');
    const err = await BlockStore.open(join(home.dir, 'data', 'store')).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/ENOTDIR.*a file stands where a directory must be .*move that file away/);
  });

  // Root (as the tests run) is never refused by the file system, so the permission remedies are checked directly.
  it('gives a remedy for permissions, a read-only file system and a full disk', () => {
    expect(storeOpenRemedy('/srv/node/data/store', { code: 'EACCES' })).toMatch(
      /cannot write \/srv\/node\/data\/store: make it the owner \(chown -R \d+:\d+ \/srv\/node\/data\/store\)/,
    );
    expect(storeOpenRemedy('/s', { code: 'EPERM' })).toMatch(/chown -R/);
    expect(storeOpenRemedy('/s', { code: 'EROFS' })).toMatch(/read-only; give the node a writable --home/);
    expect(storeOpenRemedy('/s', { code: 'ENOSPC' })).toMatch(/disk is full/);
    expect(storeOpenRemedy('/s', { code: 'EIO' })).toBeUndefined();
  });
});
