import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockGossip, BlockSync, proposerHeaderValidator, serialSink, type P2PHost } from '../../src/p2p/index.js';
import { Ed25519Key, headerHash, type Block } from '../../src/types/index.js';
import { createNodeMetrics, type NodeMetrics } from '../../src/metrics/index.js';
import { Hosts, MemChain, addressOf, captureLogger, makeBlocks, nextBlock, waitFor, type CapturedLogger } from './helpers.js';

/**
 * Line topology A – B – C (C peers only with B, B with A), plus a forger F
 * connected to B only. A is the aggregator and publishes; B and C are full
 * nodes whose sinks validate like Chain.apply.
 */
describe('block gossip', () => {
  const hosts = new Hosts();
  const proposer = Ed25519Key.generate();
  const forgerKey = Ed25519Key.generate();
  const blocks = makeBlocks(proposer, 4);
  const hash = (b: Block) => Buffer.from(headerHash(b.header!.header!)).toString('hex');

  interface Peer {
    host: P2PHost;
    gossip: BlockGossip;
    chain: MemChain;
    sync: BlockSync;
    log: CapturedLogger;
    metrics: NodeMetrics;
  }
  let a: Peer, b: Peer, c: Peer, f: Peer;
  const gaps: Array<[bigint, bigint]> = [];

  async function peer(peers: string[], opts: { validate?: boolean } = {}): Promise<Peer> {
    const log = captureLogger();
    const chain = new MemChain(proposer);
    const metrics = createNodeMetrics();
    const host = await hosts.start({ peers, logger: log.logger });
    const sync = new BlockSync(host, { source: chain.encodedSource, head: () => chain.height, logger: log.logger, headRefreshMs: 0 });
    await sync.start();
    const gossip = new BlockGossip(host, {
      sink: serialSink(chain),
      source: chain.source,
      // The forger's own node lets anything through.
      validateHeader: opts.validate === false ? () => undefined : proposerHeaderValidator(proposer.address),
      logger: log.logger,
      onPeerHeight: (p, h) => sync.noteHead(p, h),
      onGap: (from, to) => gaps.push([from, to]),
      metrics,
    });
    gossip.start();
    return { host, gossip, chain, sync, log, metrics };
  }

  beforeAll(async () => {
    a = await peer([]);
    b = await peer([addressOf(a.host)]);
    c = await peer([addressOf(b.host)]);
    f = await peer([addressOf(b.host)], { validate: false });
    // Gossipsub grafts its mesh on the heartbeat (1 s): wait until each link carries the topics.
    await waitFor('the gossip mesh A–B–C (+F–B)', () => {
      const mesh = (p: Peer) => p.gossip.meshPeers();
      return (
        mesh(a).includes(b.host.peerId) &&
        mesh(b).includes(a.host.peerId) &&
        mesh(b).includes(c.host.peerId) &&
        mesh(c).includes(b.host.peerId) &&
        mesh(f).includes(b.host.peerId)
      );
    });
    expect(c.host.isConnected(a.host.peerId)).toBe(false);
  });
  afterAll(() => hosts.closeAll());

  it('delivers a valid block from A to B, and B re-gossips it to C', async () => {
    for (const block of blocks.slice(0, 3)) await a.gossip.publishBlock(block);
    await waitFor('B to apply 3 blocks', () => b.chain.height === 3n);
    await waitFor('C to apply 3 blocks through B', () => c.chain.height === 3n);
    expect(c.chain.blocks.map(hash)).toEqual(blocks.slice(0, 3).map(hash));
    // C heard of them only through B (it has no connection to A), and knows B's head from it.
    expect(c.host.isConnected(a.host.peerId)).toBe(false);
    expect(c.sync.peerHeads().get(b.host.peerId)).toBe(3n);
    const count = async (p: Peer, name: 'gossipPublished' | 'gossipReceived', topic: string) =>
      (await p.metrics[name].get()).values.find((v) => v.labels.topic === topic)?.value;
    expect(await count(a, 'gossipPublished', 'header')).toBe(3);
    expect(await count(a, 'gossipPublished', 'data')).toBe(3);
    expect(await count(c, 'gossipReceived', 'header')).toBe(3);
  });

  it('rejects a forged block: it never reaches a sink, is not forwarded, and the sender is penalised', async () => {
    const forged = nextBlock(blocks[2]!, forgerKey, proposer); // claims the proposer's address, signed by another key
    const scoreBefore = b.gossip.peerScore(f.host.peerId);
    await f.gossip.publishBlock(forged);
    await waitFor("B to reject the forger's header", () => b.log.has('rejected gossiped header'));
    await waitFor("the forger's score at B to fall", () => b.gossip.peerScore(f.host.peerId) < Math.min(0, scoreBefore));

    // Garbage on the header topic is rejected too.
    await f.host.node.services.pubsub.publish(b.gossip.headerTopic, new Uint8Array([1, 2, 3, 250, 251]));
    await waitFor('B to reject the garbage', () => b.log.lines.filter((l) => l.msg === 'rejected gossiped header').length >= 2);
    const rejected = (await b.metrics.gossipRejected.get()).values.find((v) => v.labels.topic === 'header');
    expect(rejected?.value).toBe(2);

    // The genuine block 4 still goes through, so both full nodes got past the forger's attempt.
    await a.gossip.publishBlock(blocks[3]!);
    await waitFor('B and C to apply the genuine block 4', () => b.chain.height === 4n && c.chain.height === 4n);
    for (const node of [b, c]) {
      expect(node.chain.attempts.map(hash)).not.toContain(hash(forged));
      expect(node.chain.blocks.map(hash)).toEqual(blocks.map(hash));
    }
    // B did not forward the forgery: C never saw it to reject it.
    expect(c.log.has('rejected gossiped header')).toBe(false);
    expect(c.gossip.pendingHeights()).toEqual([]);
  });

  it('holds a block that arrives ahead of the chain and applies it once the gap is filled', async () => {
    const more = [...blocks];
    for (let i = 0; i < 2; i++) more.push(nextBlock(more.at(-1)!, proposer));
    const [b5, b6] = more.slice(4);
    await a.gossip.publishBlock(b6!); // height 6 first: held, and the gap 5..5 reported
    await waitFor('B to hold height 6 and report the gap', () => b.gossip.pendingHeights().includes(6n) && gaps.some(([from, to]) => from === 5n && to === 5n));
    expect(b.chain.height).toBe(4n);
    await a.gossip.publishBlock(b5!);
    await waitFor('B and C to apply 5 and 6', () => b.chain.height === 6n && c.chain.height === 6n);
    expect(b.gossip.pendingHeights()).toEqual([]);
  });
});
