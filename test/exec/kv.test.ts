import { afterEach, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { ExecTxResult } from 'cosmjs-types/tendermint/abci/types';
import { BlockStore } from '../../src/store/index.js';
import { Ed25519Key, StateSchema, buildBlock, headerHash } from '../../src/types/index.js';
import { KvExecutor, Mempool, TxRejectedError } from '../../src/exec/index.js';
import { tempHome } from '../helpers/daemon.js';

const enc = (s: string) => new TextEncoder().encode(s);
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function kv(maxTxs = 100) {
  const home = tempHome();
  cleanups.push(home.cleanup);
  const store = await BlockStore.open(join(home.dir, 'store'));
  cleanups.push(() => store.close());
  const mempool = new Mempool({ maxTxs, maxTxBytes: 1024, retryAfterSeconds: 1 }, store);
  const exec = new KvExecutor(store, mempool);
  await exec.load();
  /** Executes and commits a block, as the node does, so the kv writes land in the store. */
  const apply = async (height: bigint, txs: string[], prevRoot: Uint8Array) => {
    const bytes = txs.map(enc);
    const result = await exec.executeTxs(bytes, height, height, prevRoot);
    const block = buildBlock({
      chainId: 'c',
      height,
      time: height,
      txs: bytes,
      lastHeaderHash: new Uint8Array(32),
      lastDataHash: new Uint8Array(32),
      appHash: prevRoot,
      signer,
    });
    await store.commitBlock(block, headerHash(block.header!.header!), create(StateSchema, { lastBlockHeight: height }), result.storeOps);
    return result.stateRoot;
  };
  return { store, mempool, exec, apply };
}

const signer = Ed25519Key.generate();

describe('KvExecutor', () => {
  it('gives the same state root for the same state, whatever the history', async () => {
    const a = await kv();
    const b = await kv();
    const genesis = await a.exec.initChain();
    expect(await b.exec.initChain()).toEqual(genesis);
    const ra = await a.apply(1n, ['x=1', 'y=2'], genesis);
    const rb1 = await b.apply(1n, ['y=0', 'x=9'], genesis);
    const rb2 = await b.apply(2n, ['x=1', 'y=2'], rb1);
    expect(Buffer.from(rb2)).toEqual(Buffer.from(ra));
    expect(Buffer.from(ra)).not.toEqual(Buffer.from(genesis));
    expect(Buffer.from((await b.exec.get('x'))!).toString()).toBe('1');
    // A fresh executor over the same store picks up the committed root.
    const reloaded = new KvExecutor(b.store, b.mempool);
    await reloaded.load();
    expect(Buffer.from(reloaded.stateRoot())).toEqual(Buffer.from(ra));
  });

  it('keeps the state root of a given set of entries (sha256 of the sum mod 2^256 of sha256(len ‖ key ‖ value))', async () => {
    const { exec, apply } = await kv();
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    const genesis = await exec.initChain();
    expect(hex(genesis)).toBe('66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925');
    const first = Array.from({ length: 200 }, (_, i) => `key-${i}=value-${i * 7}`);
    const root1 = await apply(1n, first, genesis);
    expect(hex(root1)).toBe('8eff63b7790662ba88377e43fc8a621442e8cdde1301957e54d53aa646ebd38f');
    // Overwrites take the old entries out of the sum (borrows and carries across limbs included).
    const second = [
      ...Array.from({ length: 100 }, (_, i) => `key-${i * 2}=changed-${i}`),
      ...Array.from({ length: 50 }, (_, i) => `new-${i}=${'v'.repeat(i)}`),
    ];
    expect(hex(await apply(2n, second, root1))).toBe('13cee737997f53fa7ff29cd0fa8ed15334b1d93e17dab3932d227980f12f3e42');
  });

  /** The root of a state of these entries, built on a fresh store in one block. */
  async function rootOf(entries: string[]): Promise<Buffer> {
    const fresh = await kv();
    return Buffer.from(await fresh.apply(1n, entries, await fresh.exec.initChain()));
  }

  /** A new executor over `store`, loaded, and whether it scanned the state's keys to load. */
  async function reload(store: BlockStore, mempool: Mempool) {
    const scan = vi.spyOn(store, 'bucketKeys');
    const reloaded = new KvExecutor(store, mempool);
    await reloaded.load();
    const scanned = scan.mock.calls.length > 0;
    scan.mockRestore();
    return { reloaded, scanned };
  }

  /**
   * Restarts an executor over `store` and has it write `tx` on `prevRoot` at
   * `height`: it scans the state's keys to load when `scans`, and the root it
   * gives is that of `entries`. The block's store writes.
   */
  async function writeAfterRestart(store: BlockStore, mempool: Mempool, scans: boolean, tx: string, height: bigint, prevRoot: Uint8Array, entries: string[]) {
    const { reloaded, scanned } = await reload(store, mempool);
    expect(scanned).toBe(scans);
    const result = await reloaded.executeTxs([enc(tx)], height, height, prevRoot);
    expect(Buffer.from(result.stateRoot)).toEqual(await rootOf(entries));
    return result.storeOps!;
  }

  it('takes old values out of the sum after a restart, from the key filter saved with the state: no scan of the keys', async () => {
    const { store, mempool, exec, apply } = await kv();
    const root1 = await apply(1n, ['x=1', 'y=2'], await exec.initChain());
    await writeAfterRestart(store, mempool, false, 'x=3', 2n, root1, ['x=3', 'y=2']);
  });

  it('adds the keys of the blocks after the saved key filter from their txs', async () => {
    const { store, mempool, exec, apply } = await kv();
    const root1 = await apply(1n, ['x=1'], await exec.initChain());
    // Saved with block 1 only (its three slices; the next is due hundreds of blocks on): z is in no saved filter.
    const root2 = await apply(2n, ['z=1', 'novalue'], root1);
    const root3 = await apply(3n, ['x=2'], root2);
    await writeAfterRestart(store, mempool, false, 'z=2', 4n, root3, ['x=2', 'z=2']);
  });

  it('scans the state for its keys when the saved key filter is unusable, and saves it at once: the next start does not scan', async () => {
    const { store, mempool, exec, apply } = await kv();
    const root1 = await apply(1n, ['x=1', 'y=2'], await exec.initChain());
    const header = (await store.getMetadata('kv_key_filter'))!;
    const slice = (await store.getMetadata('kv_key_filter/0/0'))!;
    const unusable: Array<[string, Uint8Array]> = [
      ['kv_key_filter', new Uint8Array([1, 2, 3])], // not a header
      ['kv_key_filter', Buffer.concat([new Uint8Array(4), header.subarray(4)])], // another format (a filter saved whole began with its height)
      ['kv_key_filter/0/0', slice.subarray(0, 100)], // a slice cut short
    ];
    for (const [key, value] of unusable) {
      await store.setMetadata(key, value);
      await writeAfterRestart(store, mempool, true, 'x=3', 2n, root1, ['x=3', 'y=2']);
      await writeAfterRestart(store, mempool, false, 'x=3', 2n, root1, ['x=3', 'y=2']);
      await store.setMetadata('kv_key_filter', header);
      await store.setMetadata('kv_key_filter/0/0', slice);
    }
    // Saved past the store's last block (which a batch never writes): not trusted either.
    const past = Buffer.from(slice);
    past.writeBigUInt64BE(9n, 0);
    await store.setMetadata('kv_key_filter/0/0', past);
    expect((await reload(store, mempool)).scanned).toBe(true);
  });

  it('scans rather than reads more than 2,000 blocks written since the saved key filter (blocks this executor did not execute)', async () => {
    const { store, mempool, exec, apply } = await kv();
    const root1 = await apply(1n, ['x=1'], await exec.initChain());
    for (let height = 2n; height <= 2_002n; height++) {
      const block = buildBlock({
        chainId: 'c',
        height,
        time: height,
        txs: [],
        lastHeaderHash: new Uint8Array(32),
        lastDataHash: new Uint8Array(32),
        appHash: root1,
        signer,
      });
      await store.commitBlock(block, headerHash(block.header!.header!), create(StateSchema, { lastBlockHeight: height }));
    }
    await writeAfterRestart(store, mempool, true, 'x=2', 2_003n, root1, ['x=2']);
  });

  it('refuses to build on a state root that is not its own', async () => {
    const { exec } = await kv();
    await expect(exec.executeTxs([enc('x=1')], 1n, 1n, new Uint8Array(32))).rejects.toThrow(/state root mismatch at height 1/);
  });

  it('rejects a tx that is not key=value with 400', async () => {
    const { exec } = await kv();
    for (const bad of ['novalue', '=v', '']) {
      try {
        await exec.submitTx(enc(bad));
        expect.unreachable(`${bad} accepted`);
      } catch (err) {
        expect(err).toBeInstanceOf(TxRejectedError);
        expect((err as TxRejectedError).httpStatus).toBe(400);
      }
    }
  });

  it('caps the mempool with a 503 that says what to do, and refuses duplicates', async () => {
    const { exec, mempool } = await kv(2);
    await exec.submitTx(enc('a=1'));
    await expect(exec.submitTx(enc('a=1'))).rejects.toThrow(/already in mempool/);
    await exec.submitTx(enc('b=1'));
    try {
      await exec.submitTx(enc('c=1'));
      expect.unreachable();
    } catch (err) {
      expect((err as TxRejectedError).httpStatus).toBe(503);
      expect((err as Error).message).toMatch(/mempool full \(2 txs waiting\)/);
    }
    expect(await exec.getTxs()).toEqual([enc('a=1'), enc('b=1')]);
    expect(mempool.size).toBe(0);
  });

  it("answers blockResults with the wire bytes of cosmjs-types' own ExecTxResults (built without loading it)", async () => {
    const { exec } = await kv();
    const results = await exec.blockResults(1n, [enc('x=1'), enc('novalue')]);
    const expected = [ExecTxResult.fromPartial({}), ExecTxResult.fromPartial({ code: 1, log: 'tx must be key=value with a non-empty key' })];
    expect(results.txResults).toEqual(expected);
    expect(results.txResults.map((r) => ExecTxResult.encode(r).finish())).toEqual(expected.map((r) => ExecTxResult.encode(r).finish()));
  });
});
