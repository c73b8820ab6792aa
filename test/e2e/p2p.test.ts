import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BlockGossip, P2PHost } from '../../src/p2p/index.js';
import { silentLogger } from '../../src/log/index.js';
import { Ed25519Key, buildBlock } from '../../src/types/index.js';
import { Daemon, freePort, getBlockJson, killAll, latestHeight, runCli, waitFor } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { Homes } from '../helpers/homes.js';
import { runToExit } from '../helpers/script.js';

// P2P sync between real `noded start` processes on loopback (DESIGN.md §9).

const homes = new Homes();
const hosts: P2PHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await killAll();
  homes.cleanup();
});

/** Full-node flags: DA points at a port nothing listens on, so every block a node gets came over P2P. */
async function noDa(): Promise<string[]> {
  return ['--no-node.da.local', '--node.da.address', `http://127.0.0.1:${await freePort()}`, '--node.da.request_timeout', '1s'];
}

const peers = (...addresses: string[]) => ['--node.p2p.peers', addresses.join(',')];

async function postJson(url: string, body: unknown = {}): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** The block part of GetBlock's JSON at `height` (DA heights differ between nodes that learn them at different times). */
async function blockAt(rpc: string, height: number): Promise<string> {
  const { status, json } = await getBlockJson(rpc, { height });
  expect(status).toBe(200);
  return JSON.stringify(json.block);
}

const peerIdOf = (address: string) => address.split('/p2p/')[1]!;

describe('P2P sync', () => {
  it('a line A ← B ← C: C, which peers only with B, follows within two block times; net info names the peers', async () => {
    const blockTimeMs = 1000;
    const { aggregator, full } = await homes.chain('p2p-line', 2);
    const a = await Daemon.start(aggregator, ['--node.node.block_time', `${blockTimeMs}ms`]);
    const b = await Daemon.start(full[0]!, [...(await noDa()), ...peers(a.p2p)]);
    const c = await Daemon.start(full[1]!, [...(await noDa()), ...peers(b.p2p)]);
    await waitFor(async () => (await latestHeight(c.rpc)) >= 3, 'C to reach height 3 through B');
    for (let round = 0; round < 3; round++) {
      const target = await latestHeight(a.rpc);
      await waitFor(async () => (await latestHeight(c.rpc)) >= target, `C at A's height ${target} within two block times`, 2 * blockTimeMs, 10);
    }
    const height = await latestHeight(a.rpc);
    await waitFor(async () => (await latestHeight(c.rpc)) >= height, `C at ${height}`);
    for (let h = 1; h <= height; h++) expect(await blockAt(c.rpc, h), `block ${h}`).toBe(await blockAt(a.rpc, h));

    const netB = await postJson(`${b.rpc}/node.v1.P2PService/GetNetInfo`);
    expect(netB.net_info.id).toBe(peerIdOf(b.p2p));
    expect(netB.net_info.listen_addresses).toEqual([b.p2p]);
    expect([...netB.net_info.connected_peers].sort()).toEqual([peerIdOf(a.p2p), peerIdOf(c.p2p)].sort());
    const peersC = await postJson(`${c.rpc}/node.v1.P2PService/GetPeerInfo`);
    expect(peersC.peers).toEqual([
      { id: peerIdOf(b.p2p), address: expect.stringMatching(new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/\\d+/p2p/${peerIdOf(b.p2p)}$`)) },
    ]);
    const cometNet = (await (await fetch(`${c.status}/net_info`)).json()) as any;
    expect(cometNet.result).toMatchObject({
      listening: true,
      n_peers: '1',
      peers: [{ node_info: { id: peerIdOf(b.p2p), network: 'p2p-line' }, remote_ip: '127.0.0.1' }],
    });
    const status = (await (await fetch(`${c.status}/status`)).json()) as any;
    expect(status.result.node_info.listen_addr).toBe(c.p2p);
  });

  it('a full node killed for 200 blocks catches up over P2P (its DA blocked), then follows gossip', async () => {
    const { aggregator, full } = await homes.chain('p2p-catchup');
    const a = await Daemon.start(aggregator, ['--node.node.block_time', '20ms']);
    const args = [...(await noDa()), ...peers(a.p2p)];
    const b = await Daemon.start(full[0]!, args);
    await waitFor(async () => (await latestHeight(b.rpc)) >= 5, 'B to follow A');
    await b.kill('SIGKILL');
    const stoppedAt = await latestHeight(a.rpc);
    await waitFor(async () => (await latestHeight(a.rpc)) >= stoppedAt + 200, 'A to make 200 blocks more', 30_000);
    const b2 = await Daemon.start(full[0]!, args);
    const target = await latestHeight(a.rpc);
    await waitFor(async () => (await latestHeight(b2.rpc)) >= target, `B back at ${target}`, 30_000);
    await waitFor(() => b2.stderr.includes('"caught up from peers"'), 'B to log its catch-up');
    const caughtUp = b2.stderr
      .split('\n')
      .filter((l) => l.includes('"caught up from peers"'))
      .map((l) => JSON.parse(l));
    expect(caughtUp.reduce((n, l) => n + l.blocks, 0)).toBeGreaterThanOrEqual(target - stoppedAt - 5);
    // Then gossip: B keeps pace with the blocks A makes from now on.
    const later = (await latestHeight(a.rpc)) + 20;
    await waitFor(async () => (await latestHeight(b2.rpc)) >= later, `B at ${later}`);
    for (const h of [1, stoppedAt, target, later]) expect(await blockAt(b2.rpc, h), `block ${h}`).toBe(await blockAt(a.rpc, h));
  });

  // The forged-gossip check shares this test's two nodes: a pair of nodes costs two `noded start`s, and
  // a header is judged by its proposer and signature whatever its height or the node's DA.
  it('a node with peers and a DA: both sources agree, and DA heights fill in on the full node as DA catches up; a peer gossiping forged blocks gets none stored: not its own key as proposer, not a forged signature', async () => {
    const { aggregator, full } = await homes.chain('p2p-da');
    // A slow DA (1 s blocks) beside 100 ms blocks: gossip brings each block long before DA has it.
    const a = await Daemon.start(aggregator, ['--node.node.block_time', '100ms', '--node.da.block_time', '1s']);
    const b = await Daemon.start(full[0]!, ['--no-node.da.local', '--node.da.address', a.da, '--node.da.block_time', '1s', ...peers(a.p2p)]);
    await waitFor(async () => (await latestHeight(b.rpc)) >= 20, 'B at 20');
    const target = await latestHeight(b.rpc);
    await waitFor(async () => (await getBlockJson(a.rpc, { height: target })).json.header_da_height > 0, `block ${target} on DA`, 20_000);
    await waitFor(async () => (await getBlockJson(b.rpc, { height: target })).json.header_da_height > 0, `B to learn block ${target}'s DA heights`, 20_000);
    for (let h = 1; h <= target; h++) {
      const [fromA, fromB] = await Promise.all([getBlockJson(a.rpc, { height: h }), getBlockJson(b.rpc, { height: h })]);
      expect(fromB.text, `block ${h} with its DA heights`).toBe(fromA.text);
    }
    expect(b.stderr).not.toContain('rejected a block from DA');

    const forger = await P2PHost.create({
      seed: Ed25519Key.generate().seed,
      listen: '/ip4/127.0.0.1/tcp/0',
      peers: [b.p2p],
      chainId: 'p2p-da',
      logger: silentLogger(),
    });
    hosts.push(forger);
    const gossip = new BlockGossip(forger, { sink: { nextHeight: 1n, apply: async () => undefined }, validateHeader: () => undefined, logger: silentLogger() });
    gossip.start();
    await waitFor(() => gossip.subscribers().includes(peerIdOf(b.p2p)), 'the forger to see B on the block topics');

    const proposer = (await postJson(`${a.rpc}/node.v1.ConfigService/GetSignerInfo`)).address as string;
    const forgerKey = Ed25519Key.generate();
    const height = BigInt((await latestHeight(b.rpc)) + 3);
    const ownKey = buildBlock({
      chainId: 'p2p-da',
      height,
      time: BigInt(Date.now()) * 1_000_000n,
      txs: [new TextEncoder().encode('stolen=1')],
      lastHeaderHash: new Uint8Array(32),
      lastDataHash: new Uint8Array(32),
      appHash: new Uint8Array(32),
      signer: forgerKey,
    });
    const claimsProposer = buildBlock({
      chainId: 'p2p-da',
      height: height + 1n,
      time: BigInt(Date.now()) * 1_000_000n,
      txs: [new TextEncoder().encode('stolen=2')],
      lastHeaderHash: new Uint8Array(32),
      lastDataHash: new Uint8Array(32),
      appHash: new Uint8Array(32),
      signer: forgerKey,
    });
    claimsProposer.header!.header!.proposerAddress = Buffer.from(proposer, 'base64');
    claimsProposer.header!.signer!.address = Buffer.from(proposer, 'base64');
    await gossip.publishBlock(ownKey);
    await gossip.publishBlock(claimsProposer);

    await waitFor(
      () => b.stderr.split('\n').filter((l) => l.includes('"rejected gossiped header"') && l.includes(forger.peerId)).length >= 2,
      'B to reject both forged headers',
    );
    const rejections = b.stderr
      .split('\n')
      .filter((l) => l.includes('"rejected gossiped header"'))
      .map((l) => JSON.parse(l).reason);
    expect(rejections).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/proposer is not the chain's aggregator/),
        expect.stringMatching(/signer address does not match signer public key|signature does not verify/),
      ]),
    );
    await waitFor(async () => (await latestHeight(b.rpc)) >= Number(height) + 1, 'B past the forged heights');
    for (const h of [height, height + 1n]) expect(await blockAt(b.rpc, Number(h)), `block ${h}`).toBe(await blockAt(a.rpc, Number(h)));
    const kv = await fetch(`${b.rpc}/kv/stolen`);
    expect(kv.status).toBe(404);
  });

  it('peers configured but none connected: not ready, "no peers connected"; ready once the peer comes up', async () => {
    const { aggregator, full } = await homes.chain('p2p-ready');
    const port = await freePort();
    const aggPeerId = JSON.parse(readFileSync(join(aggregator, 'config', 'node_key.json'), 'utf8')).peer_id as string;
    // DA is up (a ready node needs it), but the aggregator posts nothing to it until it starts.
    const da = await DaServer.start(await homes.create('p2p-ready-da', false));
    const daArgs = ['--no-node.da.local', '--node.da.address', da.address];
    const b = await Daemon.start(full[0]!, [...daArgs, ...peers(`/ip4/127.0.0.1/tcp/${port}/p2p/${aggPeerId}`)]);
    const ready = await fetch(`${b.rpc}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toBe('UNREADY: no peers connected');
    await Daemon.start(aggregator, [...daArgs, '--node.node.block_time', '200ms', '--node.p2p.listen_address', `/ip4/127.0.0.1/tcp/${port}`]);
    let last = '';
    await waitFor(
      async () => {
        const res = await fetch(`${b.rpc}/health/ready`);
        last = await res.text();
        return res.status === 200;
      },
      'B ready once it reached the aggregator',
      30_000,
    ).catch((err) => {
      throw new Error(`${err.message}; last answer: ${last}`);
    });
    expect(await latestHeight(b.rpc)).toBeGreaterThan(0);
  });

  it.each([
    ['a bare peer id', '12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN', 'is a bare peer id'],
    ['an address without /p2p/', '/ip4/127.0.0.1/tcp/7676', 'has no /p2p/<peer_id> part'],
    ['garbage', 'peer-one', 'is not a multiaddr'],
  ])('--node.p2p.peers with %s: bad usage (exit 2) before any port is bound, naming the entry and the expected format', async (_, entry, problem) => {
    const home = await homes.create('p2p-bad-peer', false);
    const rpcPort = await freePort();
    const res = await runCli(['start', '--home', home, '--node.rpc.address', `127.0.0.1:${rpcPort}`, '--node.p2p.peers', entry], { OCLIF_COLUMNS: '1000' });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain(
      `flag --node.p2p.peers: p2p.peers: got "${entry}", expected comma-separated peer addresses /ip4/<ip>/tcp/<port>/p2p/<peer_id>`,
    );
    expect(res.stderr).toContain(`entry "${entry}" ${problem}`);
    expect(res.stderr).not.toMatch(/node started|listening/);
  });

  it('shutdown closes every libp2p connection: two synced nodes, closed, leave nothing that keeps the process alive', async () => {
    const { code, out } = await runToExit(new URL('./fixtures/nodes-close-exit.ts', import.meta.url));
    expect(out).toMatch(/closed at height \d+/);
    expect(code, `the process did not exit by itself:\n${out}`).toBe(0);
  });

  it('init prints the full P2P address the node will listen on', async () => {
    const home = await homes.create('p2p-init', false);
    const res = await runCli(['init', '--home', home, '--chain-id', 'p2p-init', '--force', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).p2p_address).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/7676\/p2p\/12D3KooW[1-9A-HJ-NP-Za-km-z]+$/);
  });
});
