import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalDa } from '../../src/da/index.js';
import { FenceRejectedError, createEtcdClient, etcdSettingsOf, haKeys } from '../../src/ha/index.js';
import { silentLogger } from '../../src/log/index.js';
import { BlockIntake, GenesisGuard, Node, buildChain, type Closers } from '../../src/node/index.js';
import { buildHaCoordinator, etcdSubmissions } from '../../src/node/ha.js';
import { Ed25519Key, txHash } from '../../src/types/index.js';
import { headerPostsPerHeight } from '../helpers/da-posts.js';
import { EtcdServer } from '../helpers/etcd.js';
import { coreParts, portZeroHome } from '../helpers/node-parts.js';
import { waitFor } from '../helpers/wait.js';

/*
 * Two HA aggregators in this process (Node, as `noded start` runs it, every
 * listener on 127.0.0.1:0) on a real etcd and one built-in DA server: what a
 * follower answers for a tx it forwards, and what the takeover keeps (issue 20,
 * items 4 and 5). The leader is stopped by the test once the follower holds
 * what it checks, never on a timer.
 */

let etcd: EtcdServer;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  etcd = await EtcdServer.start();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await etcd?.remove();
});

const enc = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();

/** Two HA nodes of one chain (one genesis, one signer key), the first started first so that it leads. */
async function cluster(chainId: string): Promise<{ leader: Node; follower: Node; da: LocalDa }> {
  const da = await LocalDa.start({
    dir: join(portZeroHome(`${chainId}-da`).home.dir, 'da'),
    listen: '127.0.0.1:0',
    blockTimeMs: 100,
    maxBlobSize: 1_974_272,
    logger: silentLogger(),
  });
  cleanups.push(() => da.close());
  const flags = {
    'node.aggregator': true,
    'da.local': false,
    'da.address': da.address,
    'ha.enabled': true,
    'ha.etcd_endpoints': etcd.endpoint,
    'ha.key_prefix': `/noded-test/${chainId}`,
    'ha.lease_ttl': '4s',
  };
  const start = async (peers: string[], from?: string) => {
    const { home, config } = portZeroHome(chainId, { ...flags, ...(peers.length ? { 'p2p.peers': peers.join(',') } : {}) });
    cleanups.push(home.cleanup);
    if (from) for (const file of ['genesis.json', 'signer.json']) copyFileSync(join(from, 'config', file), join(home.dir, 'config', file));
    const node = await Node.init({ home: home.dir, config, logger: silentLogger(), version: 'test' });
    cleanups.push(() => node.close());
    node.start((err) => {
      throw err;
    });
    return { node, home: home.dir };
  };
  const first = await start([]);
  await waitFor(() => first.node.haInfo()?.role === 'leader', 'the first node to lead');
  const second = await start(first.node.c.p2p.netInfo().listen_addresses.slice(0, 1), first.home);
  await waitFor(() => second.node.haInfo()?.leader === first.node.haInfo()!.node_id, 'the second node to see the first lead');
  return { leader: first.node, follower: second.node, da };
}

const rpcUrl = (node: Node) => `http://${node.listeners.rpc.address.host}:${node.listeners.rpc.address.port}`;
const statusUrl = (node: Node) => `http://${node.listeners.status.address.host}:${node.listeners.status.address.port}`;

async function jsonRpc(node: Node, method: string, params: Record<string, unknown>) {
  const res = await fetch(statusUrl(node), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: Record<string, unknown> & { height?: string; code?: number; hash?: string }; error?: unknown };
}

/** How many header blobs the DA server holds of each block height: [height, count], in height order. */
async function postsPerHeight(node: Node): Promise<Array<[number, number]>> {
  const { da, namespaces } = node.c;
  const blobs = [];
  for (let h = 1n, head = await da.networkHead(); h <= head; h++) blobs.push(...(await da.getAll(h, [namespaces.header])));
  return headerPostsPerHeight(blobs, namespaces.header);
}

describe('two HA nodes in one process on a real etcd', () => {
  it('a follower answers wait=commit and broadcast_tx_commit once it holds the block; after a takeover those txs stay where they were, and DA holds every height once', async () => {
    const { leader, follower } = await cluster('ha-inproc-1');

    // POST /tx?wait=commit on the follower: forwarded to the leader, answered once the follower's own chain holds it.
    const tx = enc('answered=at-commit');
    const res = await fetch(`${rpcUrl(follower)}/tx?wait=commit`, { method: 'POST', body: tx });
    const body = (await res.json()) as { tx_hash: string; height: number; index: number };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(await follower.store.getTxLocation(txHash(tx))).toEqual({ height: BigInt(body.height), index: body.index });
    expect(await leader.store.getTxLocation(txHash(tx))).toEqual({ height: BigInt(body.height), index: body.index });

    // broadcast_tx_commit on the follower: the same, with the tx's result from the follower's own execution.
    const committedTx = enc('answered=by-broadcast-commit');
    const commit = await jsonRpc(follower, 'broadcast_tx_commit', { tx: Buffer.from(committedTx).toString('base64') });
    expect(commit.error).toBeUndefined();
    const commitHeight = BigInt(commit.result!.height!);
    // tx_result is the follower's own execution's (code 0 is left out, as CometBFT's JSON does).
    expect(commit.result).toMatchObject({ hash: hex(txHash(committedTx)), tx_result: {} });
    expect((await follower.store.getTxLocation(txHash(committedTx)))?.height).toBe(commitHeight);

    // broadcast_tx_sync on the follower: the leader's acknowledgement (the kv app gives no CheckTx data).
    const synced = enc('answered=by-broadcast-sync');
    const sync = await jsonRpc(follower, 'broadcast_tx_sync', { tx: Buffer.from(synced).toString('base64') });
    expect(sync.result).toMatchObject({ code: 0, hash: hex(txHash(synced)) });
    // A tx the leader refuses comes back refused, in the leader's words.
    const refused = await jsonRpc(follower, 'broadcast_tx_sync', { tx: Buffer.from('no equals sign').toString('base64') });
    expect(JSON.stringify(refused.error)).toContain('the HA leader');

    // While it stands by, the follower follows DA: it knows which of its blocks DA holds.
    await waitFor(() => follower.store.daIncludedHeight() >= commitHeight, 'the follower to find the committed blocks on DA');

    // The leader stops (its lease revoked): the follower takes over from the recorded head.
    const leaderHeight = leader.chain.height;
    await leader.close();
    await waitFor(() => follower.haInfo()?.role === 'leader', 'the follower to take over');
    await waitFor(() => follower.chain.height >= leaderHeight + 3n, 'the new leader to produce 3 blocks');
    expect(await follower.store.getTxLocation(txHash(tx))).toEqual({ height: BigInt(body.height), index: body.index });
    expect((await follower.store.getTxLocation(txHash(committedTx)))?.height).toBe(commitHeight);
    await waitFor(() => follower.store.daIncludedHeight() >= leaderHeight + 3n, 'the new leader to post its blocks to DA');
    // Read first: blocks included while DA is read are not counted.
    const top = Number(follower.store.daIncludedHeight());
    const posts = await postsPerHeight(follower);
    expect(posts.filter(([h]) => h <= top)).toEqual(Array.from({ length: top }, (_, i) => [i + 1, 1]));
  });
});

describe('a block the fence refuses', () => {
  it("is dropped and its txs go back to the mempool, first in line, forced or foreign txs left out; the DA submission record takes only the leader's writes", async () => {
    const closers: Closers = [];
    cleanups.push(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });
    const signer = Ed25519Key.generate();
    const prefix = '/noded-test/ha-fenced-txs';
    const parts = await coreParts(closers, {
      signer,
      config: (c) => Object.assign(c.ha, { enabled: true, etcd_endpoints: etcd.endpoint, key_prefix: prefix, lease_ttl: 10_000 }),
    });
    const chain = await buildChain(parts);
    const guard = new GenesisGuard(parts.genesis, parts.genesisFile, parts.logger);
    const client = createEtcdClient(etcdSettingsOf(parts.config.ha, '/'));
    closers.push(() => client.close());
    const coordinator = buildHaCoordinator(
      {
        etcd: client,
        config: parts.config,
        chainId: parts.genesis.chainId,
        peerId: 'fenced-1',
        rpcAddress: 'http://127.0.0.1:1',
        logger: parts.logger,
        chain,
        intake: new BlockIntake(chain, parts.store, null, guard),
        mempool: parts.mempool,
        submitter: null,
      },
      { startLeading: () => undefined, stopLeading: async () => undefined },
    );
    // A long lease: on a loaded host (load 15 in one CI run) a 4 s lease lapsed between election and the first block.
    const stop = new AbortController();
    closers.push(() => coordinator.stopped());
    closers.push(() => stop.abort(new Error('test over')));
    coordinator.start(stop.signal, (err) => {
      throw err;
    });
    await waitFor(() => coordinator.role === 'leader', 'the node to lead');

    // A block fenced and committed: its tx leaves the mempool for good.
    await parts.mempool.add(enc('a=1'));
    await (
      await chain.build(await parts.execution.getTxs(1n), 1_700_000_001_000_000_000n, signer)
    ).committed;
    expect(parts.mempool.size).toBe(0);

    // Another writer moves the recorded head (as a leader elected meanwhile would): etcd refuses the next block.
    await client.put(haKeys(prefix).head).value(`7/${'ab'.repeat(32)}`);
    const txs = [enc('b=2'), enc('c=3')];
    for (const tx of txs) await parts.mempool.add(tx);
    const taken = await parts.execution.getTxs(2n);
    expect(taken).toEqual(txs);
    await parts.mempool.add(enc('d=4')); // came while the block was built
    // A forced tx (not the mempool's) in the block is not put into the mempool.
    await expect(chain.build([enc('forced=1'), ...taken], 1_700_000_002_000_000_000n, signer)).rejects.toBeInstanceOf(FenceRejectedError);
    expect(chain.height).toBe(1n);
    expect(parts.mempool.peek(10)).toEqual([...txs, enc('d=4')]);

    // The DA submission record (etcdSubmissions): written only while this node's leader key is in etcd.
    // The refusal above ended the term; with the recorded head its own again, the node leads again.
    await client.put(haKeys(prefix).head).value(`1/${Buffer.from(chain.currentState.lastHeaderHash).toString('hex')}`);
    const me = { node_id: 'fenced-1', rpc: 'http://127.0.0.1:1' };
    const pending = { fromHeight: '1', toHeight: '1', daHeadBefore: '4' };
    await waitFor(() => etcdSubmissions(client, prefix, me, 4000, parts.logger).record(pending), 'the node to lead again and record');
    expect(await etcdSubmissions(client, prefix, { ...me, node_id: 'deposed-2' }, 4000, parts.logger).record({ ...pending, toHeight: '9' })).toBe(false);
    expect(await etcdSubmissions(client, prefix, me, 4000, parts.logger).last()).toEqual(pending);
    await client.put(haKeys(prefix).daSubmission).value('garbage');
    await expect(etcdSubmissions(client, prefix, me, 4000, parts.logger).last()).rejects.toThrow(
      `etcd key ${prefix}/da-submission holds "garbage", not {"fromHeight","toHeight","daHeadBefore"} as decimal strings: another program writes under ha.key_prefix`,
    );
  });
});
