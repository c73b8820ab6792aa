import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { toBinary } from '@bufbuild/protobuf';
import type { GossipsubMessage } from '@libp2p/gossipsub';
import { initHome } from '../../src/home/index.js';
import { silentLogger } from '../../src/log/index.js';
import type { Node } from '../../src/node/index.js';
import { P2PHost, headerTopic } from '../../src/p2p/index.js';
import { DataSchema, Ed25519Key, SignedHeaderSchema } from '../../src/types/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { createAggregatorHome, makeTxs, openNode, startProducing, txFeeder, withDeadline } from '../lib/node.js';
import { row } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

const TXS_PER_BLOCK = 10;
const TX_BYTES = 100;
const BLOCK_MS = 20;
const BLOCK_TIME = `${BLOCK_MS}ms`;
/** Blocks before measuring: the mesh forms and the JIT warms up. */
const WARMUP_BLOCKS = 20;

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** An aggregator and a full node peered with it, in this process; the full node's DA is a closed port. */
async function peeredNodes(scope: Scope): Promise<{ agg: Node; full: Node }> {
  const aggHome = scope.tempDir('noded-bench-gossip-agg-');
  const fullHome = scope.tempDir('noded-bench-gossip-full-');
  createAggregatorHome(aggHome);
  initHome({ home: fullHome, chainId: 'bench-1', aggregator: false, force: true });
  copyFileSync(join(aggHome, 'config', 'genesis.json'), join(fullHome, 'config', 'genesis.json'));
  const agg = await openNode(aggHome, { 'node.block_time': BLOCK_TIME });
  scope.defer(() => agg.close());
  const full = await openNode(fullHome, { 'node.aggregator': false, 'p2p.peers': agg.c.p2p.netInfo().listen_addresses[0]! });
  scope.defer(() => full.close());
  return { agg, full };
}

/**
 * Milliseconds from the aggregator's commit of each block to the full node's
 * commit of it, and the gossiped bytes of the last block (header + data).
 */
async function nodeLatencies(scope: Scope, blocks: number): Promise<{ latencies: number[]; blockBytes: number }> {
  const { agg, full } = await peeredNodes(scope);
  const committedAt = new Map<bigint, number>();
  const latencies: number[] = [];
  let blockBytes = 0;
  agg.chain.onBlock((block) => committedAt.set(block.header!.header!.height, performance.now()));
  const done = new Promise<void>((resolve) => {
    full.chain.onBlock((block) => {
      const height = block.header!.header!.height;
      const at = committedAt.get(height);
      if (at !== undefined && height > WARMUP_BLOCKS) latencies.push(performance.now() - at);
      if (latencies.length >= blocks) {
        blockBytes = toBinary(SignedHeaderSchema, block.header!).length + toBinary(DataSchema, block.data!).length;
        resolve();
      }
    });
  });
  // Each block carries txs, so gossip moves real block bytes.
  let batch = 0;
  const feeder = txFeeder(agg);
  const feed = setInterval(() => feeder.feed(makeTxs(TXS_PER_BLOCK, TX_BYTES, `g${batch++}`)), BLOCK_MS);
  scope.defer(() => clearInterval(feed));
  const fatal = Promise.race([startProducing(agg), startProducing(full), feeder.failed]);
  await withDeadline(Promise.race([done, fatal]), 120_000 + blocks * 200, `${blocks} blocks gossiped to the full node`);
  return { latencies: latencies.slice(0, blocks), blockBytes };
}

/** The floor: two bare libp2p hosts, one publishing a block-sized gossipsub message every block time, the other receiving. */
async function rawLatencies(scope: Scope, blocks: number, message: Uint8Array): Promise<number[]> {
  const logger = silentLogger();
  const receiver = await P2PHost.create({ seed: Ed25519Key.generate().seed, listen: '/ip4/127.0.0.1/tcp/0', peers: [], chainId: 'bench-raw', logger });
  scope.defer(() => receiver.close());
  const sender = await P2PHost.create({
    seed: Ed25519Key.generate().seed,
    listen: '/ip4/127.0.0.1/tcp/0',
    peers: [receiver.listenAddresses()[0]!],
    chainId: 'bench-raw',
    logger,
  });
  scope.defer(() => sender.close());
  const topic = headerTopic('bench-raw');
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  const rx = receiver.node.services.pubsub;
  rx.subscribe(topic);
  sender.node.services.pubsub.subscribe(topic);
  const done = new Promise<void>((resolve) => {
    rx.addEventListener('gossipsub:message', (evt: CustomEvent<GossipsubMessage>) => {
      const { msg, msgId, propagationSource } = evt.detail;
      rx.reportMessageValidationResult(msgId, propagationSource.toString(), 'accept' as never);
      const seq = new DataView(msg.data.buffer, msg.data.byteOffset).getUint32(0);
      const at = sentAt.get(seq);
      if (at !== undefined && seq > WARMUP_BLOCKS) latencies.push(performance.now() - at);
      if (latencies.length >= blocks) resolve();
    });
  });
  await withDeadline(
    (async () => {
      while (!sender.node.services.pubsub.getSubscribers(topic).some((p) => p.toString() === receiver.peerId)) await new Promise((r) => setTimeout(r, 20));
    })(),
    30_000,
    'the raw hosts to see each other on the topic',
  );
  let seq = 0;
  const tick = setInterval(() => {
    const bytes = Uint8Array.from(message);
    new DataView(bytes.buffer).setUint32(0, ++seq);
    sentAt.set(seq, performance.now());
    void sender.node.services.pubsub.publish(topic, bytes);
  }, BLOCK_MS);
  scope.defer(() => clearInterval(tick));
  await withDeadline(done, 120_000 + blocks * 200, `${blocks} raw gossip messages`);
  clearInterval(tick);
  return latencies.slice(0, blocks);
}

export const gossip: Bench = {
  name: 'gossip',
  description: 'Gossip latency, aggregator commit → full node commit, p50 and p99, vs raw gossipsub between two bare hosts',
  async run(opts: BenchOptions, scope: Scope) {
    const blocks = opts.quick ? 200 : 1000;
    const { latencies: noded, blockBytes } = await nodeLatencies(scope, blocks);
    const raw = opts.nodedOnly ? [] : await rawLatencies(scope, blocks, new Uint8Array(blockBytes));
    const figure = (q: number) => ({ noded: sample([quantile(noded, q)]), baseline: sample(raw.length ? [quantile(raw, q)] : [NaN]) });
    const note =
      `${blocks} blocks of ${TXS_PER_BLOCK} txs × ${TX_BYTES} B at block_time ${BLOCK_TIME} (after ${WARMUP_BLOCKS} warm-up blocks): an aggregator and a full node peered over loopback TCP, both in this process, ` +
      `time from the aggregator's commit to the full node's commit (gossip, validation, execution, store). Baseline: two bare libp2p hosts (same transport, noise, yamux, gossipsub), one message of the block's size (header + data) every block time, publish → arrival.`;
    return [
      row('Gossip latency p50', 'ms', figure(0.5), { nodedAtMost: 20 }, note),
      row('Gossip latency p99', 'ms', figure(0.99), { nodedAtMost: 100 }, 'As above, the 99th percentile.'),
    ];
  },
};
