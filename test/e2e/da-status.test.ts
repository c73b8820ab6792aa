import { afterEach, describe, expect, it } from 'vitest';
import { buildView } from '../../src/dashboard/view-model.js';
import type { NodeInfo } from '../../src/rpc/index.js';
import { Daemon, fetchJson, freePort, getBlockJson, killAll, runCli, waitFor } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { Homes } from '../helpers/homes.js';
import { scrape, sampleValue } from '../helpers/metrics.js';

// What the operator sees of DA on each kind of node (issue 16, items 1 and 4): a full node reports what it
// follows on DA on every surface, and a DA layer that keeps failing, for any cause, makes the node unready.

const homes = new Homes();
afterEach(async () => {
  await killAll();
  homes.cleanup();
});

const METRICS = ['--node.instrumentation.prometheus', '--node.instrumentation.prometheus_listen_addr', '127.0.0.1:0'];
const daArgs = (da: DaServer) => ['--no-node.da.local', '--node.da.address', da.address];

async function nodeInfo(d: Daemon): Promise<NodeInfo> {
  const { json } = await fetchJson(`${d.status}/node_info`);
  return json.result as NodeInfo;
}

/** The status lines a node logged (JSON), oldest first. */
const statusLines = (d: Daemon) =>
  d.stderr
    .split('\n')
    .filter((l) => l.includes('"module":"status"'))
    .map((l) => JSON.parse(l) as { msg: string; status: Record<string, unknown> });

const readyOf = async (d: Daemon) => {
  const res = await fetch(`${d.rpc}/health/ready`);
  return { status: res.status, text: await res.text() };
};

/** A full node started on fixed ports, so `noded status` finds it through the env of the home's config. */
async function startFullNode(home: string, args: string[]) {
  const [rpc, status] = [await freePort(), await freePort()];
  const env = { NODED_RPC_ADDRESS: `127.0.0.1:${rpc}`, NODED_RPC_STATUS_ADDRESS: `127.0.0.1:${status}` };
  const node = await Daemon.start(home, [
    '--node.rpc.address',
    env.NODED_RPC_ADDRESS,
    '--node.rpc.status_address',
    env.NODED_RPC_STATUS_ADDRESS,
    '--node.log.status_interval',
    '200ms',
    ...METRICS,
    ...args,
  ]);
  return { node, env };
}

describe('a full node reports what it follows on DA', () => {
  it('DA-only and P2P full nodes: DA-known height, DA height read and blocks behind on every surface; never pending or a cap', async () => {
    const { aggregator, full } = await homes.chain('da-status', 2);
    const da = await DaServer.start(await homes.create('da-host', false));
    const agg = await Daemon.start(aggregator, ['--node.node.block_time', '100ms', '--node.log.status_interval', '200ms', ...daArgs(da)]);
    const daOnly = await startFullNode(full[0]!, daArgs(da));
    const p2p = await startFullNode(full[1]!, [...daArgs(da), '--node.p2p.peers', agg.p2p]);

    const aggInfo = await waitFor(
      async () => {
        const info = await nodeInfo(agg);
        return info.da.included_height >= 10 ? info : null;
      },
      'the aggregator to include 10 blocks on DA',
      60_000,
    );
    expect(aggInfo.da).toMatchObject({ mode: 'submit', max_pending_blocks: 100 });
    await waitFor(() => statusLines(agg).some((l) => /\| DA included \d+, \d+ pending \|/.test(l.msg)), 'the aggregator to log its pending blocks');

    for (const [name, { node, env }] of [
      ['DA-only', daOnly],
      ['P2P', p2p],
    ] as const) {
      const what = (s: string) => `${name} full node: ${s}\n${node.stderr.slice(-3000)}`;
      const info = await waitFor(
        async () => {
          const i = await nodeInfo(node);
          return i.height >= 10 && i.da.included_height >= 10 ? i : null;
        },
        what('10 blocks found on DA'),
        60_000,
      );

      // /node_info, which the dashboard reads.
      expect(info.role, what('role')).toBe(name === 'P2P' ? 'full node' : 'full node (DA-only sync)');
      expect(info.da.mode, what('DA mode')).toBe('follow');
      if (info.da.mode !== 'follow') throw new Error('unreachable');
      expect(info.da).not.toHaveProperty('pending_blocks');
      expect(info.da).not.toHaveProperty('max_pending_blocks');
      expect(info.da.included_height).toBeLessThanOrEqual(info.height);
      expect(info.da.behind_blocks).toBe(info.height - info.da.included_height);
      expect(info.da.scan_height, what('DA height read')).toBeGreaterThan(0);
      expect(info.da.head_height).toBeGreaterThanOrEqual(info.da.scan_height);
      // The height it reports as known on DA carries its DA heights.
      const block = await getBlockJson(node.rpc, { height: info.da.included_height });
      expect(block.json.header_da_height, what('header DA height')).toBeGreaterThan(0);
      expect(block.json.data_da_height, what('data DA height')).toBeGreaterThan(0);
      // A DA-only node at 100 ms blocks often reads a header on DA a moment before its data, and is then behind its
      // best-known height by one block for that moment (not ready, rightly): it must be READY once it has caught up.
      const ready = await waitFor(async () => {
        const r = await readyOf(node);
        return r.status === 200 ? r : null;
      }, what('readiness')).catch(async (err: Error) => {
        throw new Error(`${err.message}\nlast answer: ${JSON.stringify(await readyOf(node))}`);
      });
      expect(ready, what('readiness')).toEqual({ status: 200, text: 'READY' });

      // /status: CometBFT's fields as they were, ours in node_info.other.
      const status = (await fetchJson(`${node.status}/status`)).json.result;
      expect(status.sync_info).toMatchObject({ catching_up: expect.any(Boolean), latest_block_height: expect.any(String) });
      expect(status.node_info.other).toMatchObject({
        tx_index: 'on',
        da_included_height: expect.stringMatching(/^\d+$/),
        da_scan_height: expect.stringMatching(/^\d+$/),
      });
      expect(Number(status.node_info.other.da_included_height)).toBeGreaterThanOrEqual(info.da.included_height);
      expect(status.node_info.other).not.toHaveProperty('da_pending_blocks');

      // `noded status` and `noded status --json`.
      const text = await runCli(['status', '--home', node === daOnly.node ? full[0]! : full[1]!], env);
      expect(text.code, what(text.stderr)).toBe(0);
      expect(text.stdout).toMatch(/^DA {11}included \d+ \(\d+ blocks? behind the chain\), read DA height \d+ of \d+$/m);
      expect(text.stdout, what('status text')).not.toMatch(/pending|cap/);
      const json = await runCli(['status', '--home', node === daOnly.node ? full[0]! : full[1]!, '--json'], env);
      expect(json.code, what(json.stderr)).toBe(0);
      const report = JSON.parse(json.stdout);
      expect(report.da).toMatchObject({ mode: 'follow', scan_height: expect.any(Number), behind_blocks: expect.any(Number) });
      expect(report.da.included_height).toBeGreaterThanOrEqual(info.da.included_height);
      expect(JSON.stringify(report)).not.toMatch(/pending|max_pending/);

      // The status line.
      const line = await waitFor(() => statusLines(node).findLast((l) => Number(l.status.daIncluded) > 0), what('a status line with blocks on DA'));
      expect(line.msg, what('status line')).toMatch(/\| DA included \d+ \(\d+ blocks? behind the chain\), read DA height \d+ of \d+ \|/);
      expect(line.msg).not.toMatch(/pending|cap/);
      expect(line.status).not.toHaveProperty('daPending');
      expect(line.status).not.toHaveProperty('maxPending');

      // /metrics.
      const { families } = await scrape(node.metrics);
      expect(sampleValue(families, 'noded_da_included_height'), what('metrics')).toBeGreaterThanOrEqual(info.da.included_height);
      expect(sampleValue(families, 'noded_da_scan_height')).toBeGreaterThan(0);
      expect(sampleValue(families, 'noded_da_behind_blocks')).toBeGreaterThanOrEqual(0);
      expect(families.has('noded_pending_blocks')).toBe(false);
      expect(families.has('noded_pending_blocks_cap')).toBe(false);

      // The dashboard's DA panel, from the same /node_info.
      const view = buildView({ snapshot: { info, blocks: [] }, readAt: Date.now(), problem: null, log: null }, node.rpc, 'watch', Date.now());
      const panel = view.da.lines.map((l) => l.map((s) => s.text).join('')).join('\n');
      expect(view.da.level, what(panel)).toBe('ok');
      expect(panel).toMatch(/included\s+\d+ {2}DA \d+ blocks? behind the chain/);
      expect(panel).toMatch(/DA height\s+read \d+ of \d+/);
      expect(panel).not.toMatch(/pending|%|cap/);
    }
  });
});

describe('readiness covers a failing DA of any kind', () => {
  const UNREADY_AFTER = ['--node.da.unready_after', '2s'];

  /** Waits for /health/ready to turn 503 for DA, and for the status line to say so; returns the reason. */
  async function waitUnready(agg: Daemon, cause: RegExp, what: string): Promise<string> {
    const ready = await waitFor(
      async () => {
        const r = await readyOf(agg);
        return r.status === 503 && r.text.startsWith('UNREADY: DA submissions failing') ? r : null;
      },
      `${what}: /health/ready to be 503 for DA\n${agg.stderr.slice(-2000)}`,
      60_000,
    );
    expect(ready.text, what).toMatch(/^UNREADY: DA submissions failing for \d+s: /);
    expect(ready.text, what).toMatch(cause);
    await waitFor(
      () => statusLines(agg).some((l) => l.msg.startsWith('UNREADY: DA submissions failing for') && cause.test(l.msg)),
      `${what}: the status line to say UNREADY`,
    );
    return ready.text;
  }

  const waitReady = (agg: Daemon, what: string) =>
    waitFor(async () => (await readyOf(agg)).status === 200, `${what}: READY again once DA takes submissions\n${agg.stderr.slice(-2000)}`, 60_000);

  it('code 19, a gas price above the cap, refused connections: UNREADY after da.unready_after, READY again after a success', async () => {
    const aggregator = await homes.create('da-unready', true);
    const da = await DaServer.start(await homes.create('da-host', false));
    const agg = await Daemon.start(aggregator, ['--node.node.block_time', '100ms', '--node.log.status_interval', '200ms', ...UNREADY_AFTER, ...daArgs(da)]);
    await waitFor(async () => (await nodeInfo(agg)).da.included_height > 0, 'a block on DA');
    expect((await readyOf(agg)).status).toBe(200);

    // Code 19: the node raises the gas price by itself, but when that does not help for da.unready_after, it is not ready.
    await da.setFaults({ submitError: 'already_in_mempool' });
    await waitUnready(agg, /mempool/, 'code 19');
    await da.setFaults({ submitError: null });
    await waitReady(agg, 'after code 19');

    await da.setFaults({ estimatedGasPrice: 10 });
    await waitUnready(agg, /gas price/i, 'gas price above the cap');
    await da.setFaults({ estimatedGasPrice: null });
    await waitReady(agg, 'after the gas price');

    await da.setFaults({ refuse: true });
    await waitUnready(agg, /ECONNREFUSED|refused/i, 'refused');
    await da.setFaults({ refuse: false });
    await waitReady(agg, 'after the outage');
  });

  it('"failing for Ns" counts from the first failure, not the last success', async () => {
    const aggregator = await homes.create('da-since', true);
    const da = await DaServer.start(await homes.create('da-host', false));
    // Lazy: after the first blocks nothing is submitted until a tx comes, so the last success grows old.
    const agg = await Daemon.start(aggregator, ['--node.node.lazy_mode', '--node.node.lazy_block_interval', '10m', ...UNREADY_AFTER, ...daArgs(da)]);
    expect((await fetch(`${agg.rpc}/tx`, { method: 'POST', body: 'first=1' })).status).toBe(200);
    const lastOk = await waitFor(async () => {
      const info = await nodeInfo(agg);
      return info.da.included_height > 0 && info.da.mode === 'submit' && info.da.pending_blocks === 0 ? info.da.last_success_at : 0;
    }, 'the first blocks on DA');
    await waitFor(() => Date.now() - lastOk > 5_000, 'the last success to be 5s old');
    expect((await readyOf(agg)).status).toBe(200);
    await da.setFaults({ submitError: 'already_in_mempool' });
    const faultAt = Date.now();
    expect((await fetch(`${agg.rpc}/tx`, { method: 'POST', body: 'since=1' })).status).toBe(200);
    const text = await waitUnready(agg, /mempool/, 'code 19 after a quiet spell');
    const seconds = Number(/failing for (\d+)s/.exec(text)![1]);
    expect(seconds, text).toBeLessThanOrEqual(Math.ceil((Date.now() - faultAt) / 1000));
    const info = await nodeInfo(agg);
    expect(info.da.failing_since).toBeGreaterThanOrEqual(faultAt);
  });

  it('a full node whose DA reads fail: UNREADY after da.unready_after, READY again once DA answers', async () => {
    const { aggregator, full } = await homes.chain('da-reads', 1);
    const da = await DaServer.start(await homes.create('da-host', false));
    await Daemon.start(aggregator, ['--node.node.block_time', '100ms', ...daArgs(da)]);
    const fn = await Daemon.start(full[0]!, ['--node.log.status_interval', '200ms', ...UNREADY_AFTER, ...daArgs(da)]);
    await waitFor(async () => (await nodeInfo(fn)).da.included_height > 0, 'the full node to find blocks on DA', 60_000);
    await da.setFaults({ refuse: true });
    const ready = await waitFor(
      async () => {
        const r = await readyOf(fn);
        return r.status === 503 && r.text.startsWith('UNREADY: DA reads failing') ? r : null;
      },
      `/health/ready to be 503 for DA reads\n${fn.stderr.slice(-2000)}`,
      60_000,
    );
    expect(ready.text).toMatch(/^UNREADY: DA reads failing for \d+s: .*(ECONNREFUSED|refused)/i);
    await waitFor(() => statusLines(fn).some((l) => l.msg.startsWith('UNREADY: DA reads failing for')), 'the status line to say UNREADY');
    await da.setFaults({ refuse: false });
    await waitFor(async () => (await readyOf(fn)).status === 200, `READY again\n${fn.stderr.slice(-2000)}`, 60_000);
  });

  it('a token the DA node rejects: UNREADY after da.unready_after, naming the cause', async () => {
    const aggregator = await homes.create('da-auth', true);
    const da = await DaServer.start(await homes.create('da-host', false), ['--token', 'right-token']);
    const agg = await Daemon.start(aggregator, [
      '--node.node.block_time',
      '100ms',
      '--node.log.status_interval',
      '200ms',
      ...UNREADY_AFTER,
      ...daArgs(da),
      '--node.da.auth_token',
      'wrong-token',
    ]);
    const text = await waitUnready(agg, /token/i, 'wrong token');
    expect(text).not.toContain('wrong-token');
  });
});
