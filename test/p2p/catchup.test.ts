import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockSync, CatchUp, serialSink, type EncodedBlockSource, type P2PHost } from '../../src/p2p/index.js';
import { Ed25519Key, headerHash, type Block } from '../../src/types/index.js';
import { Hosts, MemChain, addressOf, makeBlocks, nextBlock, silent, waitFor } from './helpers.js';

/**
 * Two peers A and B hold 500 blocks; C starts empty, peers with both and
 * catches up from them in parallel. F serves forged blocks.
 */
describe('catch-up over /node/<chain_id>/blocks/1.0.0', () => {
  const hosts = new Hosts();
  const proposer = Ed25519Key.generate();
  const blocks = makeBlocks(proposer, 500);
  const hash = (b: Block) => Buffer.from(headerHash(b.header!.header!)).toString('hex');
  const served = new Map<string, Array<[bigint, bigint]>>();

  interface Server {
    host: P2PHost;
    sync: BlockSync;
  }
  let a: Server, b: Server;

  async function server(name: string, source: EncodedBlockSource, head: () => bigint, opts: { maxBytes?: number; peers?: string[] } = {}): Promise<Server> {
    const host = await hosts.start({ peers: opts.peers ?? [] });
    const log: Array<[bigint, bigint]> = [];
    served.set(name, log);
    const sync = new BlockSync(host, {
      source: async (from, to) => {
        log.push([from, to]);
        return source(from, to);
      },
      head,
      logger: silent(),
      headRefreshMs: 0,
      ...(opts.maxBytes ? { maxBytes: opts.maxBytes } : {}),
    });
    await sync.start();
    return { host, sync };
  }

  async function client(peers: P2PHost[]): Promise<{ host: P2PHost; sync: BlockSync; chain: MemChain }> {
    const chain = new MemChain(proposer);
    const host = await hosts.start({ peers: peers.map(addressOf) });
    const sync = new BlockSync(host, { source: chain.encodedSource, head: () => chain.height, logger: silent(), headRefreshMs: 0 });
    await sync.start();
    await waitFor("the client to learn its peers' heads", () => peers.every((p) => sync.peerHeads().has(p.peerId)));
    return { host, sync, chain };
  }

  beforeAll(async () => {
    const full = MemChain.holding(proposer, blocks);
    a = await server('A', full.encodedSource, () => full.height);
    b = await server('B', full.encodedSource, () => full.height);
  });
  afterAll(() => hosts.closeAll());

  it('serves a bounded range and reports heads', async () => {
    const c = await client([a.host]);
    expect(c.sync.peerHeads().get(a.host.peerId)).toBe(500n);
    expect(c.sync.bestKnownHeight()).toBe(500n);
    const got = await c.sync.fetchRange(a.host.peerId, 1n, 1000n);
    expect(got).toHaveLength(256); // count cap
    expect(got.map(hash)).toEqual(blocks.slice(0, 256).map(hash));
    expect(await c.sync.fetchRange(a.host.peerId, 490n, 600n)).toHaveLength(11);
    expect(await c.sync.fetchRange(a.host.peerId, 501n, 600n)).toEqual([]);
    expect(await c.sync.fetchHead(a.host.peerId)).toBe(500n);
  });

  it('serves the stored bytes as they are, and stops at the first height its source skips', async () => {
    const full = MemChain.holding(proposer, blocks);
    // Heights 1-3, then 5: a gap at 4 (and the height the source says is what the server checks).
    const gappy = await server(
      'G',
      async (from, to) => (await full.encodedSource(from, to)).filter((b) => b.height !== 4n),
      () => 10n,
    );
    const c = await client([gappy.host]);
    const got = await c.sync.fetchRange(gappy.host.peerId, 1n, 10n);
    expect(got.map(hash)).toEqual(blocks.slice(0, 3).map(hash));
  });

  it('fetches 500 blocks from two peers in parallel and applies them in order', async () => {
    served.get('A')!.length = 0;
    served.get('B')!.length = 0;
    const c = await client([a.host, b.host]);
    const applied: bigint[] = [];
    const chain = c.chain;
    const sink = serialSink({
      get nextHeight() {
        return chain.nextHeight;
      },
      apply: async (block) => {
        await chain.apply(block);
        applied.push(block.header!.header!.height);
      },
    });
    const result = await new CatchUp(c.sync, sink, { logger: silent(), chunkSize: 50 }).run(c.sync.bestKnownHeight());
    expect(result).toMatchObject({ from: 1n, to: 500n, appliedTo: 500n, blocksApplied: 500, complete: true });
    expect(result.missing).toBeUndefined();
    expect(applied).toEqual(blocks.map((_, i) => BigInt(i + 1)));
    expect(chain.blocks.map(hash)).toEqual(blocks.map(hash));
    // Both peers served part of the range.
    expect(new Set(result.peersUsed)).toEqual(new Set([a.host.peerId, b.host.peerId]));
    expect(served.get('A')!.length).toBeGreaterThan(0);
    expect(served.get('B')!.length).toBeGreaterThan(0);

    // Nothing more to fetch, and heights past every peer's head are reported missing.
    expect((await new CatchUp(c.sync, sink, { logger: silent() }).run(500n)).complete).toBe(true);
    const beyond = await new CatchUp(c.sync, sink, { logger: silent() }).run(600n);
    expect(beyond).toMatchObject({ from: 501n, to: 600n, appliedTo: 500n, blocksApplied: 0, complete: false });
    expect(beyond.missing).toEqual({ from: 501n, to: 600n, reason: 'no connected peer has height 501 (highest peer head: 500)', genesisMismatch: false });
  });

  it('reports the heights no peer has, so the node can fall back to DA', async () => {
    // P holds only 1..100. Its head says so; a peer that claims more (a stale head) answers with nothing.
    const partial = MemChain.holding(proposer, blocks.slice(0, 100));
    const p = await server('P', partial.encodedSource, () => partial.height);
    const c = await client([p.host]);
    const result = await new CatchUp(c.sync, serialSink(c.chain), { logger: silent(), chunkSize: 64 }).run(300n);
    expect(result).toMatchObject({ from: 1n, to: 300n, appliedTo: 100n, blocksApplied: 100, complete: false });
    expect(result.missing).toEqual({ from: 101n, to: 300n, reason: 'no connected peer has height 101 (highest peer head: 100)', genesisMismatch: false });
    expect(c.chain.height).toBe(100n);

    const liar = MemChain.holding(proposer, blocks.slice(0, 150));
    const l = await server('L', liar.encodedSource, () => 400n);
    const d = await client([l.host]);
    const told = await new CatchUp(d.sync, serialSink(d.chain), { logger: silent(), chunkSize: 64 }).run(300n);
    expect(told).toMatchObject({ appliedTo: 150n, complete: false });
    expect(told.missing).toEqual({ from: 151n, to: 300n, reason: `peer ${l.host.peerId} does not have height 151`, genesisMismatch: false });
  });

  it('drops a peer that serves forged blocks and takes the range from an honest one', async () => {
    const forger = Ed25519Key.generate();
    const forgedChain = [...blocks.slice(0, 10)];
    for (let i = 10; i < 40; i++) forgedChain.push(nextBlock(forgedChain.at(-1)!, forger, proposer));
    const bad = MemChain.holding(proposer, forgedChain);
    const f = await server('F', bad.encodedSource, () => bad.height, { maxBytes: 2048 }); // small responses: several requests
    const c = await client([f.host, a.host]);
    const result = await new CatchUp(c.sync, serialSink(c.chain), { logger: silent(), chunkSize: 20 }).run(40n);
    expect(result).toMatchObject({ appliedTo: 40n, complete: true });
    expect(c.chain.blocks.map(hash)).toEqual(blocks.slice(0, 40).map(hash));
    expect(result.peersUsed).toContain(a.host.peerId);
  });
});
