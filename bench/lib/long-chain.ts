import { copyFileSync, linkSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { ClassicLevel } from 'classic-level';
import { readHome } from '../../src/home/index.js';
import { StateSchema, buildEncodedBlock, encodedDataHash, headerHash, timestampFromNanos } from '../../src/types/index.js';
import { createAggregatorHome, openNode } from './node.js';
import type { Scope } from './scope.js';

/**
 * The DA height every block of a long chain is recorded at: its blocks count as
 * on DA, as those of a chain that has run for a while are (nothing is pending,
 * and a full node resumes reading DA from height 1).
 */
const LONG_CHAIN_DA_HEIGHT = 1n;

export interface LongChain {
  /** An aggregator home holding the chain (closed; copy it with linkCopy before opening it elsewhere). */
  home: string;
  blocks: number;
  /** How fast it was built. */
  blocksPerSecond: number;
  /** Mean size of a block as stored (its protobuf bytes). */
  encodedBytesPerBlock: number;
}

/**
 * A chain of `blocks` empty blocks in a new aggregator home, built fast: block
 * 1 by the node's own chain (genesis, execution, the kv state root), every
 * later one built and signed here as Chain.produce builds it, executed by the
 * node's executor and committed with its writes through the store's commitBlock, one write in flight while the next block is
 * built (Chain.produce awaits each write: 3× slower). Blocks are 1 µs apart
 * from the genesis time, so a million of them end a second after it, before
 * any block a node makes from the wall clock. In `home` when given (a new
 * dir), else in a temp dir of the scope.
 */
export async function buildLongChain(scope: Scope, blocks: number, home = scope.tempDir(`noded-bench-long-${blocks}-`)): Promise<LongChain> {
  createAggregatorHome(home);
  const { signer } = readHome(home);
  const node = await openNode(home);
  try {
    const start = performance.now();
    const genesisTime = node.chain.lastBlockTime;
    const daHeightsOp = (height: bigint) => node.store.daHeightsOp(height, LONG_CHAIN_DA_HEIGHT, LONG_CHAIN_DA_HEIGHT);
    await node.chain.produce([], genesisTime + 1_000n, signer, [daHeightsOp(1n)]);
    let state = node.chain.currentState;
    let lastDataHash = node.chain.lastDataHash;
    let encodedBytes = (await node.store.getBlock(1n))!.bytes.length;
    let writing: Promise<void> = Promise.resolve();
    for (let height = 2n; height <= BigInt(blocks); height++) {
      const time = genesisTime + height * 1_000n;
      const encoded = buildEncodedBlock({
        chainId: state.chainId,
        height,
        time,
        txs: [],
        lastHeaderHash: state.lastHeaderHash,
        lastDataHash,
        appHash: state.appHash,
        signer,
      });
      const hash = headerHash(encoded.block.header!.header!);
      // The kv machine executes the empty block (its root stays as it is) and writes what it writes with each block.
      const { storeOps = [] } = await node.executor.executeTxs([], height, time, state.appHash);
      state = create(StateSchema, { ...state, lastBlockHeight: height, lastBlockTime: timestampFromNanos(time), lastHeaderHash: hash });
      lastDataHash = encodedDataHash(encoded.data);
      encodedBytes += encoded.bytes.length;
      await writing;
      writing = node.store.commitBlock(encoded.block, hash, state, [...storeOps, daHeightsOp(height)], encoded.bytes);
    }
    await writing;
    const blocksPerSecond = blocks / ((performance.now() - start) / 1000);
    await node.close();
    await compactStore(readHome(home).paths.storeDir);
    return { home, blocks, blocksPerSecond, encodedBytesPerBlock: encodedBytes / blocks };
  } finally {
    await node.close();
  }
}

/**
 * Compacts a closed store's LevelDB through every level. Blocks committed as
 * fast as this leave levels behind that LevelDB compacts only when the store
 * next opens: every node started on a copy would redo that work (seconds of CPU
 * and of table reads for a large chain) while it is measured, which a node that
 * has run at its block time does along the way.
 */
async function compactStore(dir: string): Promise<void> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  try {
    // Every key of the store starts with its bucket byte: [0x00, 0xff] covers them all.
    await db.compactRange(Uint8Array.of(0x00), Uint8Array.of(0xff));
  } finally {
    await db.close();
  }
}

/**
 * Copies the home `from` into a new temp dir, hard-linking LevelDB's table
 * files (.ldb, never changed once written, only deleted) and copying the rest:
 * a million-block store copied in moments, the original left as it was.
 */
export function linkCopy(scope: Scope, from: string, prefix: string): string {
  const to = scope.tempDir(prefix);
  const copy = (src: string, dst: string): void => {
    for (const entry of readdirSync(src, { withFileTypes: true })) {
      const [s, d] = [join(src, entry.name), join(dst, entry.name)];
      if (entry.isDirectory()) {
        mkdirSync(d, { recursive: true });
        copy(s, d);
      } else if (entry.name.endsWith('.ldb')) linkSync(s, d);
      else copyFileSync(s, d);
    }
  };
  copy(from, to);
  return to;
}

/** Bytes a directory takes on disk (allocated blocks, as du counts them). */
export function diskBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? diskBytes(path) : statSync(path).blocks * 512;
  }
  return total;
}
