import { describe, expect, it } from 'vitest';
import type { CoreParts } from '../../src/node/index.js';
import { buildChain, buildProducer, type Chain } from '../../src/node/index.js';
import { decodeStoredBlock } from '../../src/store/index.js';
import { ManualClock } from '../helpers/clock.js';
import { coreParts, closedAfterEach } from '../helpers/node-parts.js';
import { waitFor } from '../helpers/wait.js';

// The block producer built alone (src/node/parts.ts) over a real store in a
// temp dir and the kv execution layer: no socket, no DA, no node around it.

const closers = closedAfterEach();

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * A producer at a 5 ms block time (unless `config` says otherwise), its chain, and the heights committed in order;
 * stopped when the test ends. On the wall clock unless a `clock` is given.
 */
async function producing(config: Partial<CoreParts['config']['node']> = {}, clock?: ManualClock) {
  const built = await coreParts(closers, { config: (c) => Object.assign(c.node, { aggregator: true, block_time: 5, max_pending_blocks: 0 }, config) });
  const parts = clock ? { ...built, clock } : built;
  const chain = await buildChain(parts);
  const producer = buildProducer(parts, chain, null);
  const root = new AbortController();
  closers.push(() => producer.stopped());
  closers.push(() => root.abort(new Error('test over')));
  const heights: bigint[] = [];
  chain.onBlock((block) => heights.push(block.header!.header!.height));
  const fatal: Error[] = [];
  const start = () => producer.start(root.signal, (err) => fatal.push(err));
  return { parts, chain, producer, root, heights, fatal, start };
}

/** Every block the store holds, 1..height, decoded: a gap or a second block at a height fails here. */
async function storedChain(parts: CoreParts, chain: Chain) {
  const blocks = [];
  for (let h = 1n; h <= chain.height; h++) {
    const stored = await parts.store.getBlock(h);
    expect(stored, `block ${h} in the store`).not.toBeNull();
    blocks.push(decodeStoredBlock(stored!));
  }
  return blocks;
}

const consecutive = (n: bigint) => Array.from({ length: Number(n) }, (_, i) => BigInt(i + 1));

describe('BlockProducer', () => {
  it('starts, stops and starts again while its node runs: every height once, none skipped, every tx in one block', async () => {
    const { parts, chain, producer, heights, fatal, start } = await producing();
    const sent: string[] = [];
    const send = async () => {
      const tx = `k${sent.length}=v`;
      sent.push(tx);
      await parts.executor.submitTx(enc(tx));
    };

    start();
    start(); // a second start while it runs does nothing
    expect(producer.running).toBe(true);
    await send();
    await waitFor(() => chain.height >= 3n, 'three blocks');
    await producer.stop();
    expect(producer.running).toBe(false);
    const atStop = chain.height;
    // Stopped: txs wait, and the chain stays where stop() left it until production starts again.
    await send();
    await send();
    expect(chain.height).toBe(atStop);
    expect(heights).toEqual(consecutive(atStop));

    start();
    await waitFor(() => chain.height >= atStop + 3n, 'three more blocks after the restart');
    // A stop not waited for, then a start at once: the new loop waits for the old one's last block.
    const stopping = producer.stop();
    start();
    await stopping;
    expect(producer.running).toBe(true);
    await send();
    await waitFor(() => parts.mempool.size === 0 && chain.height >= atStop + 6n, 'the last tx in a block');
    await producer.stop();

    expect(fatal).toEqual([]);
    expect(heights).toEqual(consecutive(chain.height));
    const blocks = await storedChain(parts, chain);
    expect(blocks.map((b) => b.header!.header!.height)).toEqual(consecutive(chain.height));
    expect(blocks.flatMap((b) => b.data!.txs.map(dec)).sort()).toEqual([...sent].sort());
  });

  it("stops for good when the node's signal aborts: a later start does nothing", async () => {
    const { chain, producer, root, fatal, start } = await producing();
    start();
    await waitFor(() => chain.height >= 2n, 'two blocks');
    root.abort(new Error('node shutting down'));
    await producer.stopped();
    const atAbort = chain.height;
    start();
    expect(producer.running).toBe(false);
    await producer.stopped();
    expect(chain.height).toBe(atAbort);
    expect(fatal).toEqual([]);
  });

  it('pauses at node.max_pending_blocks blocks not on DA, and says why', async () => {
    const { chain, producer, start } = await producing({ max_pending_blocks: 2 });
    start();
    // Nothing submits to DA here: the third block never comes.
    await waitFor(() => producer.pausedReason, 'production to pause at the cap');
    // It may pause while block 2's batch is still being written (a block under way counts toward the cap).
    await waitFor(() => chain.height === 2n, 'block 2 committed');
    expect(producer.pendingCapReason()).toBe('production paused: 2 blocks pending DA inclusion (cap 2)');
    await producer.stop();
    expect(chain.height).toBe(2n);
  });

  it('counts a block whose commit is still under way toward the cap: it never builds past it', async () => {
    const { parts, chain, producer, start } = await producing({ max_pending_blocks: 1 });
    // Hold every store commit: block 1 is built and its batch waits, as a slow disk would make it.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const commitBlock = parts.store.commitBlock.bind(parts.store);
    let commits = 0;
    parts.store.commitBlock = async (...args) => {
      commits++;
      await gate;
      return commitBlock(...args);
    };
    start();
    try {
      await waitFor(() => producer.pausedReason, 'production to pause with block 1 still being written');
      expect(commits).toBe(1);
    } finally {
      release();
    }
    await producer.stop();
    expect(chain.height).toBe(1n);
  });

  it('a stop before any start, or twice, resolves', async () => {
    const { chain, producer } = await producing();
    await producer.stop();
    await producer.stop();
    expect(chain.height).toBe(0n);
  });

  describe('on a clock the test moves', () => {
    /** Lets the producer's wait for its next block end: the clock moves to the end of the sleep it is in. */
    const nextTick = (clock: ManualClock) => clock.endNextSleep();

    it('makes a block each block time, stamped with the clock, and none between', async () => {
      const clock = new ManualClock();
      const { chain, producer, fatal, start } = await producing({ block_time: 1_000 }, clock);
      const times: bigint[] = [];
      chain.onBlock((block) => times.push(block.header!.header!.time));
      start();
      expect(await clock.sleeping()).toBe(1_000);
      expect(producer.startedAt).toBe(clock.now());
      for (let h = 1n; h <= 3n; h++) {
        expect(chain.height).toBe(h - 1n);
        await nextTick(clock);
        await waitFor(() => chain.height === h, `block ${h} after one block time`);
        expect(times.at(-1)).toBe(BigInt(clock.now()) * 1_000_000n);
        expect(chain.lastCommitAt).toBe(clock.now());
        // Its next wait is a whole block time, and nothing more is made until it ends.
        expect(await clock.sleeping()).toBe(1_000);
        expect(chain.height).toBe(h);
      }
      await producer.stop();
      expect(fatal).toEqual([]);
    });

    it('in lazy mode makes a block only when txs wait, or once the lazy block interval has passed', async () => {
      const clock = new ManualClock();
      const { parts, chain, producer, start } = await producing({ block_time: 1_000, lazy_mode: true, lazy_block_interval: 5_000 }, clock);
      start();
      // No txs: block times pass and no block is made.
      for (let i = 0; i < 3; i++) {
        await nextTick(clock);
        expect(await clock.sleeping()).toBe(1_000);
      }
      expect(chain.height).toBe(0n);
      // A tx waits: the next block time makes a block of it.
      await parts.executor.submitTx(enc('lazy=1'));
      await nextTick(clock);
      await waitFor(() => chain.height === 1n, 'a block for the waiting tx');
      const madeAt = clock.now();
      // Idle again: an empty block comes once 5 s have passed since the last one, not before.
      while (clock.now() - madeAt < 5_000) {
        await clock.sleeping();
        expect(chain.height).toBe(1n);
        await nextTick(clock);
      }
      await waitFor(() => chain.height === 2n, 'an empty block after the lazy block interval');
      expect(clock.now() - madeAt).toBe(5_000);
      await producer.stop();
    });
  });
});
