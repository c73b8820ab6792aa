import { describe, expect, it } from 'vitest';
import { CommitWaiters } from '../../src/node/commit-waiters.js';
import type { BlockListener } from '../../src/node/chain.js';
import { Ed25519Key, headerHash, txHash, txId, type Block } from '../../src/types/index.js';
import { sampleBlock } from '../helpers/blocks.js';

const signer = Ed25519Key.generate();
const tx = (text: string) => new TextEncoder().encode(text);

/** CommitWaiters on a chain the test commits blocks to by hand. */
function waiters(): { commits: CommitWaiters; commit: (block: Block) => void } {
  const listeners: BlockListener[] = [];
  const commits = new CommitWaiters({
    onBlock: (listener) => {
      listeners.push(listener);
      return () => {};
    },
  });
  return { commits, commit: (block) => listeners.forEach((l) => l(block, headerHash(block.header!.header!), block.data!.txs.map(txId))) };
}

describe('CommitWaiters', () => {
  it('answers each waiter with its tx’s height and index once a block holding it is committed', async () => {
    const { commits, commit } = waiters();
    const [a, b] = [tx('a=1'), tx('b=2')];
    const first = commits.wait(txHash(a), 10_000);
    const again = commits.wait(txHash(a), 10_000);
    const second = commits.wait(txHash(b), 10_000);
    commit(sampleBlock(7n, signer, [tx('other=0'), a]));
    await expect(first.landed).resolves.toEqual({ height: 7n, index: 1 });
    await expect(again.landed).resolves.toEqual({ height: 7n, index: 1 });
    commit(sampleBlock(8n, signer, [b]));
    await expect(second.landed).resolves.toEqual({ height: 8n, index: 0 });
  });

  it('leaves a cancelled waiter unanswered and answers the other waiter of the same tx', async () => {
    const { commits, commit } = waiters();
    const a = tx('a=1');
    const cancelled = commits.wait(txHash(a), 10_000);
    const kept = commits.wait(txHash(a), 10_000);
    cancelled.cancel();
    let answered = false;
    void cancelled.landed.then(() => (answered = true));
    commit(sampleBlock(3n, signer, [a]));
    await expect(kept.landed).resolves.toEqual({ height: 3n, index: 0 });
    expect(answered).toBe(false);
  });

  it('gives up on a tx not committed by its deadline, saying which tx and how long it waited', async () => {
    const { commits, commit } = waiters();
    const a = tx('a=1');
    const waited = commits.wait(txHash(a), 50);
    // No deadline of the test's: the wait itself rejects, within its timeout and one sweep.
    await expect(waited.landed).rejects.toThrow(`tx ${txHash(a).toString('hex').toUpperCase()} not committed within 50 ms`);
    // A block holding it afterwards answers nobody and throws nothing.
    commit(sampleBlock(4n, signer, [a]));
  });
});
