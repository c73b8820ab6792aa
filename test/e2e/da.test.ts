import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DaClient, blockBlobs } from '../../src/da/index.js';
import { daNamespaces } from '../../src/config/index.js';
import { Ed25519Key, buildBlock } from '../../src/types/index.js';
import { Daemon, getBlockJson, killAll, latestHeight, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { DaServer, headerPostings } from '../helpers/da.js';

const homes = new Homes();
afterEach(async () => {
  await killAll();
  homes.cleanup();
});

const newHome = (chainId: string, aggregator: boolean) => homes.create(chainId, aggregator);

/** An aggregator home and a full-node home of the same chain. */
async function chainHomes(chainId: string) {
  const { aggregator, full } = await homes.chain(chainId);
  return { aggregator, full: full[0]! };
}

// `noded da serve` includes what it takes in its next block: one DA block is the window to watch after a lost answer.
const daArgs = (da: DaServer, extra: string[] = []) => ['--no-node.da.local', '--node.da.address', da.address, '--node.da.inclusion_window', '1', ...extra];
const AGG = ['--node.node.block_time', '100ms'];

async function daHeightsOf(rpc: string, height: number) {
  const { json } = await getBlockJson(rpc, { height });
  return [json.header_da_height, json.data_da_height] as const;
}

describe('DA layer', () => {
  it('a DA-only full node follows the aggregator: same blocks and DA heights at every height', async () => {
    const { aggregator, full } = await chainHomes('da-follow');
    const da = await DaServer.start(await newHome('da-host', false));
    const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da)]);
    const fn = await Daemon.start(full, daArgs(da));
    await waitFor(async () => (await latestHeight(agg.rpc)) >= 15, 'aggregator height 15');
    const target = await latestHeight(agg.rpc);
    await waitFor(async () => (await daHeightsOf(agg.rpc, target))[0] > 0, 'the target block on DA');
    await waitFor(async () => (await latestHeight(fn.rpc)) >= target, `full node at ${target}`, 20_000);
    for (let h = 1; h <= target; h++) {
      const [a, f] = await Promise.all([getBlockJson(agg.rpc, { height: h }), getBlockJson(fn.rpc, { height: h })]);
      expect(f.text, `height ${h}`).toBe(a.text);
      expect(a.json.header_da_height, `header DA height at ${h}`).toBeGreaterThan(0);
      expect(a.json.data_da_height, `data DA height at ${h}`).toBeGreaterThan(0);
    }
    const status = (await (await fetch(`${fn.status}/status`)).json()) as any;
    expect(status.result.sync_info.latest_app_hash).toBeTruthy();
    const kvFull = await fetch(`${fn.rpc}/tx`, { method: 'POST', body: 'a=1' });
    expect(kvFull.status).toBe(503);
  });

  it('with da.data_namespace set, data goes to its own namespace and a DA-only full node still follows', async () => {
    const { aggregator, full } = await chainHomes('da-split');
    const da = await DaServer.start(await newHome('da-host', false));
    const split = ['--node.da.data_namespace', 'da-split-data'];
    const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da, split)]);
    const fn = await Daemon.start(full, daArgs(da, split));
    expect((await fetch(`${agg.rpc}/tx`, { method: 'POST', body: 'split=1' })).status).toBe(200);
    await waitFor(async () => (await (await fetch(`${fn.rpc}/kv/split`)).text()) === '1', 'the full node to apply the tx from DA', 20_000);
    // The block that carries the tx (the full node's head may be a later block without data).
    const head = Number(((await (await fetch(`${fn.status}/status`)).json()) as any).result.sync_info.latest_block_height);
    let height = 0;
    for (let h = 1; h <= head && height === 0; h++) if ((await getBlockJson(agg.rpc, { height: h })).json.block.data.txs?.length > 0) height = h;
    expect(height, 'the block with the tx').toBeGreaterThan(0);
    const [, dataDa] = await waitFor(async () => {
      const heights = await daHeightsOf(agg.rpc, height);
      return heights[1] > 0 ? heights : null;
    }, 'the data DA height');
    const ns = daNamespaces('da-split', 'da-split-data');
    const client = new DaClient({ address: da.address, authToken: '', requestTimeoutMs: 5000 });
    try {
      const inData = await client.getAll(BigInt(dataDa), [ns.data]);
      expect(inData.length, 'blobs in the data namespace').toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('DA outage: produces up to the cap, logs the cause, pauses, then posts the backlog once and resumes', async () => {
    const aggregator = await newHome('da-outage', true);
    const da = await DaServer.start(await newHome('da-host', false));
    const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da), '--node.node.max_pending_blocks', '15', '--node.da.request_timeout', '1s']);
    await waitFor(async () => (await latestHeight(agg.rpc)) >= 3, 'a few blocks');
    await da.setFaults({ refuse: true });
    await waitFor(() => agg.stderr.includes('block production halted'), 'production to halt at the cap', 20_000);
    const failure = agg.stderr.split('\n').find((l) => l.includes('DA layer submission failed'))!;
    expect(JSON.parse(failure)).toMatchObject({ code: 'DA_SUBMIT_FAILED', reason: 'connection_refused' });
    expect(failure).toMatch(/check the DA endpoint/);
    const halted = await latestHeight(agg.rpc);
    const ready = await fetch(`${agg.rpc}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(/UNREADY: (production paused: 15 blocks pending DA inclusion \(cap 15\)|DA unreachable)/);
    await da.setFaults({ refuse: false });
    await waitFor(() => agg.stderr.includes('block production resumed'), 'production to resume', 30_000);
    await waitFor(async () => (await latestHeight(agg.rpc)) > halted + 3, 'new blocks after the outage');
    const head = await latestHeight(agg.rpc);
    await waitFor(async () => (await daHeightsOf(agg.rpc, head))[0] > 0, 'the backlog on DA', 20_000);
    for (let h = 1; h <= head; h++) expect((await daHeightsOf(agg.rpc, h))[0], `DA height of ${h}`).toBeGreaterThan(0);
    const postings = await headerPostings(da.address, 'da-outage');
    for (let h = 1n; h <= BigInt(head); h++) expect(postings.get(h), `postings of block ${h}`).toBe(1);
  });

  it('code 19: the log names codespace sdk, code 19 and the remedy, and the next attempt raises the gas price', async () => {
    const aggregator = await newHome('da-code19', true);
    const da = await DaServer.start(await newHome('da-host', false));
    await da.setFaults({ submitError: 'already_in_mempool', submitErrorCount: 2 });
    const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da), '--node.da.gas_price', '0.01', '--node.da.gas_multiplier', '1.5']);
    await waitFor(async () => (await daHeightsOf(agg.rpc, 1))[0] > 0, 'block 1 on DA after the failures', 20_000);
    const line = agg.stderr.split('\n').find((l) => l.includes('DA layer submission failed'))!;
    expect(line).toContain('codespace sdk');
    expect(line).toContain('code 19');
    expect(line).toContain('check the balance, fund the account, or raise --node.da.gas_price');
    const prices = (await da.submissions()).map((s) => s.txConfig.gas_price);
    expect(prices.slice(0, 3)).toEqual([0.01, 0.015, 0.0225].map((p) => expect.closeTo(p, 10)));
  });

  it('a wrong token: the log says the token was rejected and never prints it', async () => {
    const aggregator = await newHome('da-token', true);
    const da = await DaServer.start(await newHome('da-host', false), ['--token', 'right-token-123']);
    const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da), '--node.da.auth_token', 'wrong-token-456']);
    await waitFor(() => agg.stderr.includes('DA layer submission failed'), 'a submission failure');
    const line = agg.stderr.split('\n').find((l) => l.includes('DA layer submission failed'))!;
    expect(JSON.parse(line).reason).toBe('unauthorized');
    expect(line).toMatch(/rejected the token in da\.auth_token/);
    expect(agg.stderr).not.toContain('wrong-token-456');
    expect(da.stderr).not.toContain('right-token-123');
  });

  it('kill -9 while blocks are pending: after restart every block reaches DA exactly once', async () => {
    const aggregator = await newHome('da-crash', true);
    const da = await DaServer.start(await newHome('da-host', false));
    let seen = 0;
    for (let round = 0; round < 3; round++) {
      // Each kill lands while a submission is on DA but its answer is held back: the restart must find it there.
      await da.setFaults({ slowSubmitAnswersMs: 60_000 });
      const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da)]);
      seen = await da.waitForSubmission(seen, 'included');
      await agg.kill('SIGKILL');
      await da.setFaults({ slowSubmitAnswersMs: 0 });
    }
    const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da)]);
    const head = await latestHeight(agg.rpc);
    await waitFor(async () => (await daHeightsOf(agg.rpc, head + 2))[0] > 0, 'blocks after the restart on DA', 60_000);
    expect(agg.stderr).toContain('found blocks already on DA from an earlier attempt');
    const postings = await headerPostings(da.address, 'da-crash');
    for (let h = 1n; h <= BigInt(head + 2); h++) expect(postings.get(h), `postings of block ${h}`).toBe(1);
  });

  it('a forged blob (bad signature, wrong proposer, wrong height) is rejected with the reason; the chain stays intact', async () => {
    const { aggregator, full } = await chainHomes('da-forged');
    const da = await DaServer.start(await newHome('da-host', false));
    const agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da), '--node.node.lazy_mode', '--node.node.lazy_block_interval', '1h']);
    // A lazy aggregator makes block 1 only when a tx waits: the forgeries below race for height 1 and 2.
    const fn = await Daemon.start(full, daArgs(da));
    const client = new DaClient({ address: da.address, authToken: '', requestTimeoutMs: 5000 });
    const ns = daNamespaces('da-forged', ''); // the node's default: data in the headers' namespace
    const intruder = Ed25519Key.generate();
    const forged = (height: bigint, mutate?: (b: ReturnType<typeof buildBlock>) => void) => {
      const b = buildBlock({
        chainId: 'da-forged',
        height,
        time: BigInt(Date.now()) * 1_000_000n,
        txs: [new TextEncoder().encode('evil=1')],
        lastHeaderHash: new Uint8Array(0),
        lastDataHash: new Uint8Array(0),
        appHash: new Uint8Array(32),
        signer: intruder,
      });
      mutate?.(b);
      return blockBlobs(b, ns, intruder);
    };
    const tx = {}; // the defaults: the DA node estimates under its default cap
    await client.submit(forged(1n), tx); // wrong proposer
    await client.submit(
      forged(1n, (b) => (b.header!.signature = new Uint8Array(64))),
      tx,
    ); // bad signature
    await client.submit(forged(7n), tx); // wrong height (and proposer)
    await client.submit([{ namespace: ns.header, data: new Uint8Array([1, 2, 3, 4]), commitment: new Uint8Array(32) }], tx);
    await client.close();
    await waitFor(() => fn.stderr.includes("proposer is not the chain's aggregator"), 'the full node to reject the forged blocks');
    await waitFor(() => fn.stderr.includes('skipping a blob'), 'the full node to skip the garbage blob');
    expect((await fetch(`${agg.rpc}/tx`, { method: 'POST', body: 'real=1' })).status).toBe(200);
    await waitFor(async () => (await latestHeight(agg.rpc)) >= 1, 'block 1');
    await waitFor(async () => (await latestHeight(fn.rpc)) >= 1, 'the full node to apply the real block 1', 20_000);
    const [a, f] = await Promise.all([getBlockJson(agg.rpc, { height: 1 }), getBlockJson(fn.rpc, { height: 1 })]);
    expect(f.text).toBe(a.text);
    expect(await (await fetch(`${fn.rpc}/kv/real`)).text()).toBe('1');
    expect((await fetch(`${fn.rpc}/kv/evil`)).status).toBe(404);
  });

  it('rm -rf data/cache while stopped: the next start rebuilds it and carries on; --node.clear_cache does the same', async () => {
    const { aggregator, full } = await chainHomes('da-cache');
    const da = await DaServer.start(await newHome('da-host', false));
    let agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da)]);
    let fn = await Daemon.start(full, daArgs(da));
    await waitFor(async () => (await latestHeight(fn.rpc)) >= 5, 'the full node at 5', 20_000);
    await Promise.all([agg.kill('SIGTERM'), fn.kill('SIGTERM')]);
    for (const home of [aggregator, full]) {
      expect(existsSync(join(home, 'data', 'cache', 'da.json'))).toBe(true);
      rmSync(join(home, 'data', 'cache'), { recursive: true, force: true });
    }
    agg = await Daemon.start(aggregator, [...AGG, ...daArgs(da)]);
    fn = await Daemon.start(full, daArgs(da, ['--node.clear_cache']));
    const before = await latestHeight(agg.rpc);
    await waitFor(async () => (await latestHeight(fn.rpc)) >= before + 5, 'the full node to go on', 20_000);
    const postings = await headerPostings(da.address, 'da-cache');
    for (let h = 1n; h <= BigInt(before); h++) expect(postings.get(h), `postings of block ${h}`).toBe(1);
  });
});
