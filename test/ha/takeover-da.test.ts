import { describe, expect, it } from 'vitest';
import { DaMethod, type PendingSubmission, type SharedSubmissions } from '../../src/da/index.js';
import { BlockIntake, GenesisGuard, buildChain, buildRetriever, buildSubmitter, type CoreParts } from '../../src/node/index.js';
import { decodeStoredBlock } from '../../src/store/index.js';
import { Ed25519Key } from '../../src/types/index.js';
import { ManualClock } from '../helpers/clock.js';
import { headerPostsPerHeight } from '../helpers/da-posts.js';
import { MemoryDa } from '../helpers/memory-da.js';
import { closedAfterEach, coreParts } from '../helpers/node-parts.js';
import { waitFor } from '../helpers/wait.js';

/*
 * DA across an HA takeover (issue 20, item 4): the old leader posted some of
 * its blocks, maybe had a submission in flight, and died; the new leader holds
 * the same blocks (from P2P or etcd) but not what DA holds of them. Its
 * submitter inherits the old leader's submission (DaSubmitter.inheritSubmission,
 * what src/node/node.ts takeOverDa calls) and must post each height exactly once.
 * Two aggregators' parts (real stores, one signer key) on one in-memory DA
 * node with celestia-node's answers; the submitters' waits on a hand-moved clock.
 */

const closers = closedAfterEach();

const DA_BLOCK_MS = 100;
const INCLUSION_WINDOW = 3;
const enc = (s: string) => new TextEncoder().encode(s);
let txs = 0;

/** One HA node's chain and DA submitter over `da` (same genesis and key for every node of a test: `signer`). */
async function haNode(da: MemoryDa, signer: Ed25519Key, shared: SharedSubmissions | null = null) {
  const parts = await coreParts(closers, {
    signer,
    chainId: 'ha-da-1',
    config: (c) => Object.assign(c.da, { block_time: DA_BLOCK_MS, inclusion_window: INCLUSION_WINDOW }),
  });
  const clock = new ManualClock();
  const chain = await buildChain(parts);
  const submitter = buildSubmitter({ ...parts, da, clock }, chain);
  submitter.shared = shared;
  let root = new AbortController();
  const fatal: Error[] = [];
  closers.push(() => submitter.stopped());
  closers.push(() => root.abort(new Error('test over')));
  return {
    parts,
    clock,
    chain,
    submitter,
    fatal,
    produce: async (n: number) => {
      for (let i = 0; i < n; i++) await chain.produce([enc(`k${txs++}=v`)], BigInt(clock.now() + txs) * 1_000_000n, signer);
    },
    start: () => {
      root = new AbortController();
      submitter.start(root.signal, (err) => fatal.push(err));
    },
    /** Takes over DA as src/node/node.ts takeOverDa does: inherits what the old leader may have posted, then submits. */
    lead: async () => {
      await submitter.inheritSubmission();
      root = new AbortController();
      submitter.start(root.signal, (err) => fatal.push(err));
    },
    /** The node dies (or its submitter stops): wherever it is. */
    kill: async () => {
      root.abort(new Error('killed'));
      await submitter.stopped();
    },
    included: (height: bigint) => waitFor(() => parts.store.daIncludedHeight() >= height, `blocks up to ${height} recorded on DA`),
  };
}

type HaNode = Awaited<ReturnType<typeof haNode>>;

/** `to` holds `from`'s blocks up to `height`, as a follower does from P2P: the blocks alone, no DA heights. */
async function follow(from: CoreParts, to: HaNode, height: bigint): Promise<void> {
  for (let h = to.chain.height + 1n; h <= height; h++) await to.chain.apply(decodeStoredBlock((await from.store.getBlock(h))!));
}

/** An old leader (on `da`, a new MemoryDa by default) that made `blocks` blocks and has them on DA. */
async function oldLeaderPosted(blocks: number, opts: { shared?: SharedSubmissions; da?: MemoryDa } = {}) {
  const da = opts.da ?? new MemoryDa();
  const signer = Ed25519Key.generate();
  const old = await haNode(da, signer, opts.shared ?? null);
  await old.produce(blocks);
  old.start();
  await old.included(BigInt(blocks));
  return { da, signer, old };
}

/**
 * The old leader's last act: `n` more blocks in one submission that the DA
 * node takes (into its mempool) but whose answer is lost; it dies in the backoff.
 */
async function lastSubmissionLost(da: MemoryDa, old: HaNode, n: number): Promise<void> {
  await old.kill();
  await old.produce(n);
  const submits = da.count(DaMethod.submit);
  da.failSubmits('answer lost');
  old.start();
  await waitFor(() => da.count(DaMethod.submit) > submits, 'the last submission');
  await old.kill();
}

/** The new leader's search watches DA (a DA block time's sleep) and has posted nothing past `submits`; DA seals a block and the watch goes on. */
async function sealWhileWatched(da: MemoryDa, node: HaNode, submits: number): Promise<void> {
  expect(await node.clock.sleeping()).toBe(DA_BLOCK_MS);
  expect(da.count(DaMethod.submit)).toBe(submits);
  da.seal();
  await node.clock.endNextSleep();
}

/** How many header blobs DA holds of each block height, in height order: [height, count]. */
const postsPerHeight = (da: MemoryDa, parts: CoreParts) => headerPostsPerHeight(da.allBlobs(), parts.namespaces.header);

/** The cluster's record of submissions as etcd keeps it (src/node/ha.ts etcdSubmissions), minus the leader check. */
function sharedRecord(): SharedSubmissions & { recorded: PendingSubmission[] } {
  const recorded: PendingSubmission[] = [];
  return { recorded, record: async (p) => (recorded.push(p), true), last: async () => recorded.at(-1) ?? null };
}

const once = (from: number, to: number): Array<[number, number]> => Array.from({ length: to - from + 1 }, (_, i) => [from + i, 1]);

describe('DA across an HA takeover', () => {
  it("the old leader's last submission lost its answer and lands after the takeover: the new leader finds it, then posts its own, each height once", async () => {
    const { da, signer, old } = await oldLeaderPosted(3);
    await lastSubmissionLost(da, old, 2);

    const next = await haNode(da, signer);
    await follow(old.parts, next, 5n);
    expect(next.parts.store.daIncludedHeight()).toBe(0n);
    await next.lead();
    // Blocks 1-3 are found at once; the search watches DA for 4-5 rather than posting them.
    await sealWhileWatched(da, next, 2);
    await next.included(5n);
    await next.produce(2);
    await next.included(7n);
    expect(postsPerHeight(da, next.parts)).toEqual(once(1, 7));
    expect(next.fatal).toEqual([]);
  });

  /** A record etcd cannot give (unreachable, or a value another program wrote). */
  const unreadable: SharedSubmissions = { record: async () => true, last: () => Promise.reject(new Error('etcd did not answer')) };

  it.each([
    ['nothing recorded', null],
    ['the record unreadable', unreadable],
  ])('with %s, blocks the old leader fenced but never posted are posted once the inclusion window has passed, exactly once', async (_, shared) => {
    const { da, signer, old } = await oldLeaderPosted(2);
    await old.kill();
    // Fenced and gossiped after the old leader's last submission; it died before posting them.
    await old.produce(2);

    const next = await haNode(da, signer, shared);
    await follow(old.parts, next, 4n);
    await next.lead();
    for (let i = 0; i < INCLUSION_WINDOW; i++) {
      await sealWhileWatched(da, next, 1);
    }
    await next.included(4n);
    expect(postsPerHeight(da, next.parts)).toEqual(once(1, 4));
    expect(da.count(DaMethod.submit)).toBe(2);
  });

  it("a follower that followed DA searches only from its last block found there, not from DA's start", async () => {
    // A DA network running long before the chain: a search from its start would read every height.
    const { da, signer, old } = await oldLeaderPosted(3, { da: new MemoryDa(undefined, 500) });

    // The follower's DA retriever, as src/node/parts.ts builds it for an HA node standing by.
    const next = await haNode(da, signer);
    await follow(old.parts, next, 3n);
    const guard = new GenesisGuard(next.parts.genesis, next.parts.genesisFile, next.parts.logger);
    const intake = new BlockIntake(next.chain, next.parts.store, null, guard);
    const retriever = await buildRetriever({ ...next.parts, da }, next.chain, intake, guard);
    const following = new AbortController();
    closers.push(() => retriever.stopped());
    closers.push(() => following.abort(new Error('test over')));
    // From the DA height of the chain's start (the genesis says 0: the retriever starts at 1) it reads its way up.
    retriever.start(following.signal, (err) => next.fatal.push(err));
    await next.included(3n);
    following.abort(new Error('leading'));
    await retriever.stopped();

    await lastSubmissionLost(da, old, 2);
    await follow(old.parts, next, 5n);

    const readsBefore = da.count(DaMethod.getAll);
    await next.lead();
    await sealWhileWatched(da, next, 2);
    await next.included(5n);
    expect(postsPerHeight(da, next.parts)).toEqual(once(1, 5));
    // It read from the DA height of block 3 to the head, a few heights: not the 500 below.
    expect(da.count(DaMethod.getAll) - readsBefore).toBeLessThan(10);
    expect(next.fatal).toEqual([]);
  });

  it("with the old leader's submissions recorded, blocks above its last one are posted at once; that one is found first", async () => {
    const shared = sharedRecord();
    const { da, signer, old } = await oldLeaderPosted(2, { shared });
    await lastSubmissionLost(da, old, 1);
    expect(shared.recorded.at(-1)).toMatchObject({ fromHeight: '3', toHeight: '3' });
    // Fenced and gossiped, never sent.
    await old.produce(2);

    const next = await haNode(da, signer, shared);
    await follow(old.parts, next, 5n);
    await next.lead();
    // Block 3 may still land: watched for, not posted.
    await sealWhileWatched(da, next, 2);
    // Found: 4-5 were never sent, so they go out without waiting out the window.
    await next.included(5n);
    expect(postsPerHeight(da, next.parts)).toEqual(once(1, 5));
    expect(shared.recorded.at(-1)).toMatchObject({ fromHeight: '4', toHeight: '5' });
  });

  it('with the last recorded submission known on DA, a new leader posts the rest at once', async () => {
    const shared = sharedRecord();
    const { da, signer, old } = await oldLeaderPosted(2, { shared });
    await old.kill();
    await old.produce(2);

    const next = await haNode(da, signer, shared);
    await follow(old.parts, next, 4n);
    // The follower's DA retriever found blocks 1-2 (as a full node records them).
    for (const h of [1n, 2n]) {
      const stored = (await old.parts.store.getBlock(h))!;
      await next.parts.store.setDaHeights(h, stored.headerDaHeight, stored.dataDaHeight);
    }
    await next.submitter.inheritSubmission();
    expect(next.parts.cache.get().pending ?? null).toBeNull();
    next.start();
    await next.included(4n);
    // One submission, and no wait on DA before it.
    expect(da.count(DaMethod.submit)).toBe(2);
    expect(next.clock.pending()).toEqual([]);
    expect(postsPerHeight(da, next.parts)).toEqual(once(1, 4));
  });
});
