import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DaClient, blobCommitment } from '../../src/da/index.js';
import { daNamespace } from '../../src/config/index.js';
import { Daemon, killAll, latestHeight, runCli, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { DaServer } from '../helpers/da.js';

const homes = new Homes();
afterEach(async () => {
  await killAll();
  homes.cleanup();
});

/** DA blocks per epoch in these tests: 10 DA blocks of 100ms, so a forced tx waits about a second. */
const EPOCH = 10;
const FORCED = ['--node.da.forced_inclusion_namespace', 'fi-forced'];

function setEpoch(home: string, epoch = EPOCH): void {
  const file = join(home, 'config', 'genesis.json');
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), da_epoch_forced_inclusion: epoch }, null, 2));
}

/** `noded tx post` against a DA node, waiting at the node's RPC; its --json answer. */
async function post(home: string, tx: string, da: string, rpc: string) {
  const res = await runCli(
    ['tx', 'post', tx, '--home', home, '--node.da.address', da, ...FORCED, '--wait', '--timeout', '60s', '--node', rpc, '--json'],
    {},
    90_000,
  );
  expect(res.code, res.stderr + res.stdout).toBe(0);
  return JSON.parse(res.stdout) as { da_height: number; deadline_da_height: number; height: number };
}

async function blockAt(rpc: string, height: number) {
  const res = await fetch(`${rpc}/node.v1.StoreService/GetBlock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ height }),
  });
  return (await res.json()) as { block: { data: { txs: string[] } }; header_da_height: number };
}

describe('noded tx post refusals', () => {
  it('says how to turn forced inclusion on when it is off, and what failed when DA cannot be reached', async () => {
    const home = await homes.create('fi-post', false);
    const off = await runCli(['tx', 'post', 'a=1', '--home', home, '--json']);
    expect(off.code).toBe(1);
    expect(JSON.parse(off.stdout).error).toMatchObject({
      code: 'FORCED_INCLUSION_OFF',
      message: expect.stringMatching(/da\.forced_inclusion_namespace is empty; set it in config\/node\.yml \(or --node\.da\.forced_inclusion_namespace\)/),
    });
    const down = await runCli(['tx', 'post', 'a=1', '--home', home, ...FORCED, '--node.da.address', 'http://127.0.0.1:1', '--json']);
    expect(down.code).toBe(1);
    expect(JSON.parse(down.stdout).error).toMatchObject({
      code: 'DA_SUBMIT_FAILED',
      message: expect.stringMatching(/posting to DA failed: blob\.Submit to DA node 127\.0\.0\.1:1: connection refused/),
    });
    const clash = await runCli(['tx', 'post', 'a=1', '--home', home, '--node.da.forced_inclusion_namespace', 'fi-post']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/header namespace/);
  }, 60_000);
});

describe('forced inclusion', () => {
  it('a tx posted to the forced-inclusion namespace lands first in a block, on DA by its deadline, and the kv state has it', async () => {
    const { aggregator, full } = await homes.chain('fi-incl');
    for (const h of [aggregator, ...full]) setEpoch(h);
    const da = await DaServer.start(await homes.create('fi-da', false));
    const daArgs = ['--no-node.da.local', '--node.da.address', da.address, ...FORCED];
    const agg = await Daemon.start(aggregator, ['--node.node.block_time', '100ms', ...daArgs]);
    const fn = await Daemon.start(full[0]!, daArgs);
    await waitFor(async () => (await latestHeight(agg.rpc)) >= 3, 'the aggregator to produce');
    const posted = await post(aggregator, 'forced=yes', da.address, agg.rpc);
    expect(posted.deadline_da_height).toBeGreaterThanOrEqual(posted.da_height + EPOCH);
    expect(posted.deadline_da_height % EPOCH, "the deadline is the end of the epoch after the tx's").toBe(EPOCH - 1);
    const block = await blockAt(agg.rpc, posted.height);
    expect(block.block.data.txs[0], 'forced txs go first').toBe(Buffer.from('forced=yes').toString('base64'));
    expect(await (await fetch(`${agg.rpc}/kv/forced`)).text()).toBe('yes');
    const onDa = await waitFor(async () => (await blockAt(agg.rpc, posted.height)).header_da_height || null, 'the block on DA');
    expect(onDa).toBeLessThanOrEqual(posted.deadline_da_height);
    // An honest aggregator: the full node follows well past the deadline without a violation.
    const past = posted.deadline_da_height + 2 * EPOCH;
    await waitFor(async () => ((await (await fetch(`${da.admin}/health`)).json()) as { height: number }).height > past, 'DA past the deadline', 30_000);
    const target = await latestHeight(agg.rpc);
    await waitFor(async () => (await latestHeight(fn.rpc)) >= target, `the full node at ${target}`, 30_000);
    expect(fn.stderr).not.toMatch(/FORCED_INCLUSION_VIOLATED/);
    expect(await (await fetch(`${fn.rpc}/kv/forced`)).text()).toBe('yes');
  }, 180_000);

  it('an aggregator that drops forced txs is caught after the grace boundary by a DA-only and a P2P full node, which stop applying its blocks', async () => {
    const { aggregator, full } = await homes.chain('fi-censor', 2);
    for (const h of [aggregator, ...full]) setEpoch(h);
    const da = await DaServer.start(await homes.create('fi-da', false));
    const daArgs = ['--no-node.da.local', '--node.da.address', da.address, ...FORCED];
    const agg = await Daemon.start(aggregator, ['--node.node.block_time', '100ms', ...daArgs], { env: { NODED_TEST_CENSOR_FORCED_TXS: '1' } });
    const daOnly = await Daemon.start(full[0]!, daArgs);
    const p2p = await Daemon.start(full[1]!, [...daArgs, '--node.p2p.peers', agg.p2p]);
    await waitFor(async () => (await latestHeight(daOnly.rpc)) >= 3, 'the DA-only full node to follow');
    const res = await runCli(['tx', 'post', 'censored=1', '--home', aggregator, '--node.da.address', da.address, ...FORCED, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const posted = JSON.parse(res.stdout) as { da_height: number; deadline_da_height: number; height: null };
    expect(posted.height).toBeNull();
    const txHash = createHash('sha256').update('censored=1').digest('hex').toUpperCase();
    for (const [name, node] of [
      ['DA-only', daOnly],
      ['P2P', p2p],
    ] as const) {
      const line = await waitFor(
        () => node.stderr.split('\n').find((l) => l.includes('"FORCED_INCLUSION_VIOLATED"')),
        `the ${name} full node to catch the aggregator`,
        60_000,
      );
      const rec = JSON.parse(line) as Record<string, unknown>;
      expect(rec.txs, name).toEqual([txHash]);
      expect(rec.epochEnd, name).toBe(posted.deadline_da_height - EPOCH);
      expect(rec.graceBoundary, name).toBe(posted.deadline_da_height);
      expect(rec.daHeight as number, name).toBeGreaterThan(posted.deadline_da_height);
      expect(String(rec.aggregator), name).toMatch(/^[0-9A-F]{64}$/);
      const ready = await fetch(`${node.rpc}/health/ready`);
      expect(ready.status, name).toBe(503);
      expect(await ready.text(), name).toMatch(/^UNREADY: FORCED_INCLUSION_VIOLATED: 1 forced tx\(s\) of epoch \d+ .*aggregator [0-9A-F]{64} censored them/);
    }
    // The DA-only node stopped before the block that proved it; the aggregator keeps producing past it.
    const stoppedAt = await latestHeight(daOnly.rpc);
    await waitFor(async () => (await latestHeight(agg.rpc)) > stoppedAt + 20, 'the aggregator to go on');
    const status = await runCli(['status', '--node', daOnly.rpc]);
    expect(status.stdout + status.stderr).toMatch(/FORCED_INCLUSION_VIOLATED/);
    const doctor = await runCli([
      'doctor',
      '--home',
      full[0]!,
      '--check',
      'node',
      '--node.rpc.address',
      new URL(daOnly.rpc).host,
      '--node.rpc.status_address',
      new URL(daOnly.status).host,
      '--json',
    ]);
    expect(doctor.code, doctor.stderr).toBe(1);
    const verdict = (JSON.parse(doctor.stdout) as Array<{ id: string; status: string; message: string; remedy: string }>).find((c) => c.id === 'node')!;
    expect(verdict.status).toBe('fail');
    expect(verdict.message).toMatch(/FORCED_INCLUSION_VIOLATED/);
    expect(verdict.remedy).toMatch(/aggregator left forced txs out/);
    expect(await latestHeight(daOnly.rpc)).toBe(stoppedAt);
    expect((await fetch(`${daOnly.rpc}/kv/censored`)).status).toBe(404);
  }, 180_000);

  it('two based nodes started at different times derive the same chain, block for block, over 3 epochs; a node killed mid-epoch resumes losing and repeating nothing', async () => {
    const first = await homes.create('fi-based', false);
    const second = await homes.create('fi-based', false);
    setEpoch(first);
    copyFileSync(join(first, 'config', 'genesis.json'), join(second, 'config', 'genesis.json'));
    const da = await DaServer.start(await homes.create('fi-da', false));
    // 104 bytes of txs per block (da.max_blob_size less the 4096 kept for the header): one 63-byte tx per block.
    const args = ['--no-node.da.local', '--node.da.address', da.address, ...FORCED, '--node.node.based', '--node.da.max_blob_size', '4200'];
    const daHead = async () => ((await (await fetch(`${da.admin}/health`)).json()) as { height: number }).height;
    const a = await Daemon.start(first, args);
    // One tx in each of two epochs through `noded tx post`, then three in one blob submission: a third epoch of three blocks.
    const posts: number[] = [];
    for (const tx of ['b1=one', 'b2=two']) {
      if (posts.length > 0) await waitFor(async () => (await daHead()) > posts.at(-1)! + EPOCH, 'the next epoch');
      const res = await runCli(['tx', 'post', tx, '--home', first, '--node.da.address', da.address, ...FORCED, '--json']);
      expect(res.code, res.stderr).toBe(0);
      posts.push((JSON.parse(res.stdout) as { da_height: number }).da_height);
    }
    await waitFor(async () => (await daHead()) > posts.at(-1)! + EPOCH, 'the third epoch');
    const big = ['c1', 'c2', 'c3'].map((k) => Buffer.from(`${k}=${'x'.repeat(60)}`));
    const client = new DaClient({ address: da.address, authToken: '', requestTimeoutMs: 5000 });
    const ns = daNamespace('fi-forced');
    posts.push(
      Number(
        await client.submit(
          big.map((data) => ({ namespace: ns, data, commitment: blobCommitment(ns, data) })),
          {},
        ),
      ),
    );
    await client.close();
    expect(new Set(posts.map((h) => Math.floor(h / EPOCH))).size, 'three epochs').toBe(3);
    // Killed once it has begun the third epoch (block 3 of 5): wherever it stops, the restart must neither lose nor repeat a tx.
    await waitFor(async () => (await latestHeight(a.rpc)) >= 3, 'the first based node to begin the third epoch', 60_000);
    await a.kill('SIGKILL');
    const b = await Daemon.start(second, args);
    const again = await Daemon.start(first, args);
    for (const n of [again, b]) await waitFor(async () => (await latestHeight(n.rpc)) >= 5, 'both based nodes at block 5', 60_000);
    // Nothing more to derive: both stay at 5, one block per tx.
    await waitFor(async () => (await daHead()) > posts.at(-1)! + 2 * EPOCH, 'DA past the last epoch');
    expect(((await (await fetch(`${b.rpc}/node_info`)).json()) as { role: string }).role).toBe('based node');
    const refused = await fetch(`${b.rpc}/tx`, { method: 'POST', body: 'x=1' });
    expect([refused.status, await refused.text()]).toEqual([503, expect.stringMatching(/based node: .*noded tx post/)]);
    expect(await latestHeight(again.rpc)).toBe(5);
    expect(await latestHeight(b.rpc)).toBe(5);
    const txs: string[][] = [];
    for (let h = 1; h <= 5; h++) {
      const [x, y] = await Promise.all([blockAt(again.rpc, h), blockAt(b.rpc, h)]);
      expect(JSON.stringify(y.block), `block ${h}`).toBe(JSON.stringify(x.block));
      txs.push(x.block.data.txs);
    }
    expect(txs).toEqual([Buffer.from('b1=one'), Buffer.from('b2=two'), ...big].map((t) => [t.toString('base64')]));
  }, 240_000);
});
