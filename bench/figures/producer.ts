import { ClassicLevel } from 'classic-level';
import type { Node } from '../../src/node/index.js';
import { writeOps, type StoreOp } from '../../src/store/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { createAggregatorHome, openNode, produceFullBlocks } from '../lib/node.js';
import { row } from '../lib/report.js';
import { interleave, scalePaired } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

const TXS_PER_BLOCK = 1_000;
const TX_BYTES = 100;

/**
 * A batch's ops, copied out of the node's objects: every key and value in one
 * buffer, and where each ends. Keeping the node's own op objects (and the
 * views they hold) for the baseline kept all of them alive through the round:
 * every op the node made survived its scavenges and was promoted, which
 * doubled the node's GC share of the CPU profile (18% against 9.7% without
 * the capture), work a node that drops its ops once written never does. The
 * copy is made inside the timed round: the node pays for it.
 */
class CapturedBatch {
  private readonly bytes: Uint8Array;
  /** For op i: where its key ends (2i) and where its value ends (2i + 1), in `bytes`; a del's value is empty. */
  private readonly ends: Uint32Array;
  private readonly dels: Uint8Array;

  constructor(ops: StoreOp[]) {
    let size = 0;
    for (const op of ops) size += op.key.length + (op.type === 'put' ? op.value.length : 0);
    this.bytes = new Uint8Array(size);
    this.ends = new Uint32Array(2 * ops.length);
    this.dels = new Uint8Array(ops.length);
    let at = 0;
    ops.forEach((op, i) => {
      this.bytes.set(op.key, at);
      at += op.key.length;
      this.ends[2 * i] = at;
      if (op.type === 'put') {
        this.bytes.set(op.value, at);
        at += op.value.length;
      } else this.dels[i] = 1;
      this.ends[2 * i + 1] = at;
    });
  }

  /** The ops again, the same keys and values in the same order (views of the copy). */
  ops(): StoreOp[] {
    const ops: StoreOp[] = [];
    let at = 0;
    for (let i = 0; i < this.dels.length; i++) {
      const key = this.bytes.subarray(at, this.ends[2 * i]);
      at = this.ends[2 * i + 1]!;
      ops.push(this.dels[i] ? { type: 'del', key } : { type: 'put', key, value: this.bytes.subarray(this.ends[2 * i], at) });
    }
    return ops;
  }
}

/**
 * Records every batch the node's store writes (BlockStore.writeBatch, its one
 * write path) from now until `blocks` blocks are committed, in call order:
 * each block's batch, which also deletes the mempool-bucket entries its txs
 * were kept in, and each mempool-bucket entry the group commit writes to keep
 * admitted txs before acknowledging them. Wraps this one store instance's
 * method; the node's code is unchanged.
 */
function captureBatches(node: Node, blocks: number): CapturedBatch[] {
  const batches: CapturedBatch[] = [];
  const store = node.store;
  const writeBatch = store.writeBatch.bind(store);
  let committed = 0;
  // The producer may write one more block while closing: it is not in the round.
  const off = node.chain.onBlock(() => {
    if (++committed === blocks) off();
  });
  store.writeBatch = (ops) => {
    if (committed < blocks) batches.push(new CapturedBatch(ops));
    return writeBatch(ops);
  };
  return batches;
}

/** Runs the real BlockProducer (block_time 1ms) until `blocks` full blocks are committed (see produceFullBlocks). */
async function produceBlocks(home: string, blocks: number, tag: string): Promise<{ blocksPerSecond: number; batches: CapturedBatch[] }> {
  const node = await openNode(home, { 'node.block_time': '1ms' });
  try {
    const batches = captureBatches(node, blocks);
    const blocksPerSecond = await produceFullBlocks(node, blocks, TXS_PER_BLOCK, TX_BYTES, tag);
    return { blocksPerSecond, batches };
  } finally {
    await node.close();
  }
}

/**
 * The floor: the same batches written one after the other, each awaited, as
 * the store writes them (writeOps: a chained batch, the cheapest way
 * classic-level takes a batch); blocks/s over the `blocks` blocks they hold.
 */
async function writeBatches(db: ClassicLevel<Uint8Array, Uint8Array>, captured: CapturedBatch[], blocks: number): Promise<number> {
  // Made before the clock starts, as the node's txs are.
  const batches = captured.map((batch) => batch.ops());
  const start = performance.now();
  for (const ops of batches) await writeOps(db, ops);
  return blocks / ((performance.now() - start) / 1000);
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
  description: 'Producer blocks/s and txs/s (1,000 txs × 100 B, block_time 1ms) vs raw classic-level batches of the same bytes (blocks and the mempool bucket)',
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, blocks } = opts.quick ? { rounds: 3, blocks: 50 } : { rounds: 5, blocks: 200 };
    const home = scope.tempDir('noded-bench-producer-');
    createAggregatorHome(home);
    const db = opts.nodedOnly ? null : await openRawDb(scope);
    // A warm-up run gives the JIT its turn and the first baseline round its data: each
    // baseline round writes what the noded round before it committed.
    let previous = (await produceBlocks(home, blocks, 'warmup')).batches;
    let round = 0;
    const paired = await interleave(
      rounds,
      {
        baseline: () => writeBatches(db!, previous, blocks),
        noded: async () => {
          const { blocksPerSecond, batches } = await produceBlocks(home, blocks, `r${round++}`);
          previous = batches;
          return blocksPerSecond;
        },
      },
      { nodedOnly: opts.nodedOnly },
    );
    const note =
      `Real BlockProducer in a real in-process node (node.block_time 1ms), ${blocks} blocks of ${TXS_PER_BLOCK} txs × ${TX_BYTES} B per round, ` +
      `each block's txs admitted once the block before is handed to the store (tx admission is timed); DA posting kept out (DA at a closed port, max_pending_blocks 0). ` +
      `Baseline: every batch the node's store wrote in the round before, captured from BlockStore.writeBatch in call order (their keys and values copied into one buffer a batch, in the timed round: the node pays for the copy, and none of its objects outlives the write) and written to a separate temp classic-level DB as the store writes them (a chained batch: the array form costs the main thread three times as much for the same ops), each awaited before the next: ` +
      `each block's batch (block, hash index, tx-hash index, state, kv entries, state root, and the deletes of the mempool-bucket entries its txs were kept in) ` +
      `and each mempool-bucket entry the group commit wrote to keep admitted txs durably before acknowledging them (one put of the txs a group commit gathered).`;
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
