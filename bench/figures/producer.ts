import { toBinary } from '@bufbuild/protobuf';
import { ClassicLevel } from 'classic-level';
import type { Node } from '../../src/node/index.js';
import { Bucket, bucketKey, heightBytes, heightKey, type StoreOp } from '../../src/store/index.js';
import { BlockSchema, StateSchema, type Block, type State } from '../../src/types/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { createAggregatorHome, openNode, produceFullBlocks } from '../lib/node.js';
import { row } from '../lib/report.js';
import { interleave, scalePaired } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

const TXS_PER_BLOCK = 1_000;
const TX_BYTES = 100;

/** One BlockStore.commitBlock call's arguments. */
interface Commit {
  block: Block;
  hash: Uint8Array;
  state: State;
  extraOps: StoreOp[];
  blockBytes?: Uint8Array;
}

/**
 * Records what the node commits, so the baseline can write the very same data.
 * Wraps this one store instance's method; the node's code is unchanged.
 */
function captureCommits(node: Node): Commit[] {
  const commits: Commit[] = [];
  const store = node.store;
  const commit = store.commitBlock.bind(store);
  store.commitBlock = (block, hash, state, extraOps = [], blockBytes) => {
    commits.push({ block, hash, state, extraOps, blockBytes });
    return commit(block, hash, state, extraOps, blockBytes);
  };
  return commits;
}

/** The batch BlockStore.commitBlock writes for a commit: same keys, same encodings (src/store/store.ts). */
function batchOf(c: Commit): StoreOp[] {
  const height = c.block.header!.header!.height;
  return [
    { type: 'put', key: heightKey(Bucket.block, height), value: c.blockBytes ?? toBinary(BlockSchema, c.block) },
    { type: 'put', key: bucketKey(Bucket.heightByHash, c.hash), value: heightBytes(height) },
    { type: 'put', key: bucketKey(Bucket.state), value: toBinary(StateSchema, c.state) },
    ...c.extraOps,
  ];
}

/** Runs the real BlockProducer (block_time 1ms) until `blocks` full blocks are committed (see produceFullBlocks). */
async function produceBlocks(home: string, blocks: number, tag: string): Promise<{ blocksPerSecond: number; commits: Commit[] }> {
  const node = await openNode(home, { 'node.block_time': '1ms' });
  try {
    const commits = captureCommits(node);
    const blocksPerSecond = await produceFullBlocks(node, blocks, TXS_PER_BLOCK, TX_BYTES, tag);
    return { blocksPerSecond, commits: commits.slice(0, blocks) };
  } finally {
    await node.close();
  }
}

/** The floor: the same batches written one after the other, each awaited, as the store does. */
async function writeBatches(db: ClassicLevel<Uint8Array, Uint8Array>, batches: StoreOp[][]): Promise<number> {
  const start = performance.now();
  for (const ops of batches) await db.batch(ops);
  return batches.length / ((performance.now() - start) / 1000);
}

async function openRawDb(scope: Scope): Promise<ClassicLevel<Uint8Array, Uint8Array>> {
  // The store's own options, so only the node's work differs.
  const db = new ClassicLevel<Uint8Array, Uint8Array>(scope.tempDir('noded-bench-rawdb-'), { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  scope.defer(() => db.close());
  return db;
}

export const producer: Bench = {
  name: 'producer',
  description: 'Producer blocks/s and txs/s (1,000 txs × 100 B, block_time 1ms) vs raw classic-level batches of the same bytes',
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, blocks } = opts.quick ? { rounds: 3, blocks: 50 } : { rounds: 5, blocks: 200 };
    const home = scope.tempDir('noded-bench-producer-');
    createAggregatorHome(home);
    const db = opts.nodedOnly ? null : await openRawDb(scope);
    // A warm-up run gives the JIT its turn and the first baseline round its data: each
    // baseline round writes what the noded round before it committed.
    // Encoding is skipped without a baseline, so a profile of --noded-only shows noded's work alone.
    const batchesOf = (commits: Commit[]) => (db ? commits.map(batchOf) : []);
    let previous = batchesOf((await produceBlocks(home, blocks, 'warmup')).commits);
    let round = 0;
    const paired = await interleave(
      rounds,
      {
        baseline: () => writeBatches(db!, previous),
        noded: async () => {
          const { blocksPerSecond, commits } = await produceBlocks(home, blocks, `r${round++}`);
          previous = batchesOf(commits);
          return blocksPerSecond;
        },
      },
      { nodedOnly: opts.nodedOnly },
    );
    const note =
      `Real BlockProducer in a real in-process node (node.block_time 1ms), ${blocks} blocks of ${TXS_PER_BLOCK} txs × ${TX_BYTES} B per round, ` +
      `mempool refilled by chain.onBlock (tx admission is timed); DA posting kept out (DA at a closed port, max_pending_blocks 0). Baseline: the same batches the store committed (block, hash index, state, kv entries, ` +
      `state root — captured from BlockStore.commitBlock) written to a separate temp classic-level DB, one awaited batch per block.`;
    return [
      row('Producer blocks/s', 'blocks/s', paired, { ratioAtLeast: 0.7 }, note),
      row(
        'Producer txs/s',
        'txs/s',
        scalePaired(paired, TXS_PER_BLOCK),
        { ratioAtLeast: 0.7 },
        'blocks/s × 1,000 txs per block (every block checked to hold 1,000).',
      ),
    ];
  },
};
