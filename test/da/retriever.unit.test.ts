import { describe, expect, it } from 'vitest';
import { DaMethod, blockBlobs, type DaNamespaces } from '../../src/da/index.js';
import { BlockIntake, GenesisGuard, buildChain, buildRetriever } from '../../src/node/index.js';
import { Ed25519Key, type Block } from '../../src/types/index.js';
import { ManualClock } from '../helpers/clock.js';
import { MemoryDa } from '../helpers/memory-da.js';
import { coreParts, closedAfterEach } from '../helpers/node-parts.js';
import { waitFor } from '../helpers/wait.js';

// A full node's DA retriever built alone (src/node/parts.ts, buildRetriever)
// over a real store in a temp dir, an in-memory DA node with celestia-node's
// answers (test/helpers/memory-da.ts) and a clock moved by hand: its polls and
// backoffs end when the test says, so nothing waits on the wall clock.

const closers = closedAfterEach();

const enc = (s: string) => new TextEncoder().encode(s);
const signer = Ed25519Key.generate();
/** Block times just after the manual clock's start: within the minute a header may be ahead of the clock. */
const T0 = 1_700_000_001_000_000_000n;
const DA_BLOCK_MS = 100;
/** The retriever's poll once caught up: half the DA block time (src/node/parts.ts, daPollMs). */
const POLL_MS = DA_BLOCK_MS / 2;

/** `n` blocks of one kv tx each, made by an aggregator of the same genesis. */
async function aggregatorBlocks(n: number): Promise<Block[]> {
  const chain = await buildChain(await coreParts(closers, { signer }));
  const blocks: Block[] = [];
  for (let h = 1; h <= n; h++) blocks.push(await chain.produce([enc(`k${h}=v${h}`)], T0 + BigInt(h), signer));
  return blocks;
}

/** A full node following `da`, built as buildComponents builds it; `namespaces` replaces the chain's. */
async function follower(da: MemoryDa, opts: { startDaHeight?: bigint; namespaces?: DaNamespaces } = {}) {
  const parts = await coreParts(closers, { signer, config: (c) => Object.assign(c.da, { block_time: DA_BLOCK_MS }) });
  if (opts.startDaHeight !== undefined) parts.genesis.daStartHeight = opts.startDaHeight;
  const clock = new ManualClock();
  const chain = await buildChain(parts);
  const guard = new GenesisGuard(parts.genesis, parts.genesisFile, parts.logger);
  const intake = new BlockIntake(chain, parts.store, null, guard, null);
  const retriever = await buildRetriever({ ...parts, da, clock, ...(opts.namespaces ? { namespaces: opts.namespaces } : {}) }, chain, intake, guard);
  const root = new AbortController();
  const fatal: Error[] = [];
  closers.push(() => retriever.stopped());
  closers.push(() => root.abort(new Error('test over')));
  const start = () => retriever.start(root.signal, (err) => fatal.push(err));
  /** Posts a block as the aggregator does (header envelope and signed data) in a new DA block; returns its DA height. */
  const post = (block: Block) => da.seal(blockBlobs(block, parts.namespaces, signer));
  const synced = (height: bigint) => waitFor(() => chain.height >= height, `the full node at height ${height}`);
  return { parts, clock, chain, retriever, fatal, start, post, synced };
}

describe('DaRetriever (socket-free)', () => {
  it('follows DA height by height, applies each block with the DA height that holds it, and polls once caught up', async () => {
    const da = new MemoryDa();
    const [b1, b2, b3] = await aggregatorBlocks(3);
    const f = await follower(da);
    const at1 = f.post(b1!);
    da.seal(); // a DA block without the chain's blobs
    const at2 = f.post(b2!);
    f.start();
    await f.synced(2n);
    // Caught up: it waits a poll, then asks for the head again (and never for a height DA has not made).
    expect(await f.clock.sleeping()).toBe(POLL_MS);
    const at3 = f.post(b3!);
    await f.clock.endNextSleep();
    await f.synced(3n);
    const daHeights = await Promise.all([1n, 2n, 3n].map(async (h) => (await f.parts.store.getBlock(h))!.headerDaHeight));
    expect(daHeights).toEqual([at1, at2, at3]);
    await waitFor(() => f.retriever.scannedHeight() === da.head, 'every DA height read');
    expect(f.retriever.activity.lastError).toBeNull();
    expect(f.fatal).toEqual([]);
  });

  it('a start height above the DA head (a height from the future) is waited for, asking only for the head', async () => {
    const da = new MemoryDa();
    const [b1] = await aggregatorBlocks(1);
    const f = await follower(da, { startDaHeight: 4n });
    f.start();
    while (da.head < 3n) {
      expect(await f.clock.sleeping()).toBe(POLL_MS);
      da.seal();
      await f.clock.endNextSleep();
    }
    // blob.GetAll of a height above the head would answer "given height is from the future": it was never asked.
    expect(da.count(DaMethod.getAll)).toBe(0);
    expect(f.retriever.activity.lastError).toBeNull();
    await f.clock.sleeping();
    f.post(b1!);
    await f.clock.endNextSleep();
    await f.synced(1n);
    expect((await f.parts.store.getBlock(1n))!.headerDaHeight).toBe(4n);
  });

  it('a DA node still syncing the head it announced is retried after a backoff, and no height is skipped', async () => {
    const da = new MemoryDa();
    const [b1, b2] = await aggregatorBlocks(2);
    const f = await follower(da);
    f.post(b1!);
    f.start();
    await f.synced(1n);
    // The DA node announces a head its own header store has not reached (header.GetByHeight: "syncing in progress").
    da.storeLag = 2;
    da.seal();
    f.post(b2!);
    await f.clock.endNextSleep(); // the poll: it asks for the head, then reads the heights above
    const backoff = await f.clock.sleeping();
    expect(backoff).toBeGreaterThan(POLL_MS);
    expect(f.retriever.activity.lastError).toMatchObject({ reason: 'other' });
    expect(f.retriever.activity.lastError!.message).toMatch(/^header: syncing in progress: localHeadHeight: \d+, requestedHeight: \d+$/);
    expect(f.chain.height).toBe(1n);
    da.storeLag = 0;
    await f.clock.endNextSleep();
    await f.synced(2n);
    expect(f.retriever.activity).toMatchObject({ lastError: null, failingSince: 0 });
  });

  it('a namespace the DA node cannot read is reported with its reason and retried with a growing backoff', async () => {
    const da = new MemoryDa();
    const version1 = new Uint8Array(29).fill(7);
    version1[0] = 1; // celestia-node decodes namespaces of version 0 and 255 only
    const f = await follower(da, { namespaces: { header: version1, data: version1 } });
    f.start();
    const first = await f.clock.endNextSleep();
    const { lastError } = f.retriever.activity;
    expect(lastError).toMatchObject({ reason: 'other' });
    expect(lastError!.message).toBe("unmarshaling params for 'blob.GetAll' (param: *[]share.Namespace): unsupported namespace version 1");
    expect(await f.clock.sleeping()).toBeGreaterThan(first);
    expect(f.retriever.scannedHeight()).toBe(0n);
    expect(f.fatal).toEqual([]);
  });
});
