import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { Node } from '../../src/node/index.js';
import { waitFor } from '../helpers/daemon.js';
import { portZeroHome } from '../helpers/node-parts.js';

// A real node in this process on port 0 everywhere: the producer started and
// stopped while the node runs on (what a follower become leader, and back, needs).

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startedNode(aggregator: boolean): Promise<{ node: Node; fatal: Error[] }> {
  const { home, config } = portZeroHome('parts-node-1', { 'node.block_time': '50ms', 'da.block_time': '50ms' }, aggregator);
  cleanups.push(home.cleanup);
  const node = await Node.init({ home: home.dir, config, logger: silentLogger(), version: 'test' });
  cleanups.push(() => node.close());
  const fatal: Error[] = [];
  node.start((err) => fatal.push(err));
  return { node, fatal };
}

describe('Node', () => {
  it('stops and starts producing while it runs: DA goes on, no height twice, none skipped; close() twice resolves', async () => {
    const { node, fatal } = await startedNode(true);
    const heights: bigint[] = [];
    node.chain.onBlock((block) => heights.push(block.header!.header!.height));
    await waitFor(() => node.chain.height >= 2n, 'two blocks');
    await node.stopProducing();
    const atStop = node.chain.height;
    // The rest of the node runs on: the submitter takes every block made to DA.
    await waitFor(() => node.store.daIncludedHeight() >= atStop, 'every block on DA');
    expect(node.chain.height).toBe(atStop);
    // Production stopped on purpose is no stall.
    expect(node.health().checks.producing).toBeUndefined();
    node.startProducing();
    node.startProducing();
    await waitFor(() => node.chain.height >= atStop + 2n, 'two more blocks');
    await node.stopProducing();
    const last = node.chain.height;
    for (let h = 1n; h <= last; h++) expect(await node.store.getBlock(h), `block ${h}`).not.toBeNull();
    await Promise.all([node.close(), node.close()]);
    node.startProducing(); // closing: nothing starts
    expect(node.chain.height).toBe(last);
    expect(fatal).toEqual([]);
    expect(heights).toEqual(Array.from({ length: heights.length }, (_, i) => heights[0]! + BigInt(i)));
    expect(heights.at(-1)).toBe(last);
  });

  it('a full node has no producer to start, and says so', async () => {
    const { node } = await startedNode(false);
    expect(() => node.startProducing()).toThrow('this node does not produce blocks: only an aggregator (node.aggregator) has a block producer');
  });
});
