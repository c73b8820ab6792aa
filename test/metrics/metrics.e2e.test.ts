import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { Daemon, getBlockJson, killAll, latestHeight, runCli, waitFor } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { Homes } from '../helpers/homes.js';
import { sampleValue, scrape } from '../helpers/metrics.js';

// /metrics of real `noded start` processes (issue 9): the format, values that move with the chain,
// DA failures by cause, and no secret in any label.

const homes = new Homes();
afterEach(async () => {
  await killAll();
  homes.cleanup();
});

const TOKEN = 'metrics-secret-token-4711';
const METRICS = ['--node.instrumentation.prometheus', '--node.instrumentation.prometheus_listen_addr', '127.0.0.1:0'];

/** One metric of a node, read through the strict parser (0 when the series is absent). */
async function metric(d: Daemon, name: string, labels?: Record<string, string>): Promise<number> {
  return sampleValue((await scrape(d.metrics)).families, name, labels) ?? 0;
}

describe('/metrics of a running node', () => {
  it('follows the chain and DA, counts refused DA and code 19 apart, and never shows the token', async () => {
    const { aggregator, full } = await homes.chain('metrics-1');
    const da = await DaServer.start(await homes.create('metrics-da', false), ['--token', TOKEN]);
    const daArgs = ['--no-node.da.local', '--node.da.address', da.address, '--node.da.auth_token', TOKEN, '--node.da.request_timeout', '1s'];
    const agg = await Daemon.start(aggregator, ['--node.node.block_time', '100ms', ...daArgs, ...METRICS]);
    expect(agg.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const other = await fetch(`${agg.metrics}/`);
    expect(other.status).toBe(404);

    // Chain height: between the heights GetBlock reports just before and just after the scrape, and rising.
    await waitFor(async () => (await latestHeight(agg.rpc)) >= 3, 'height 3');
    const before = await latestHeight(agg.rpc);
    const first = await scrape(agg.metrics);
    const after = await latestHeight(agg.rpc);
    expect(first.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const height = sampleValue(first.families, 'noded_chain_height')!;
    expect(height).toBeGreaterThanOrEqual(before);
    expect(height).toBeLessThanOrEqual(after);
    await waitFor(async () => (await metric(agg, 'noded_chain_height')) > height, 'noded_chain_height to rise');
    // No peer subscribes here, so the aggregator publishes no gossip (test/p2p/gossip.test.ts counts it with peers).
    expect(await metric(agg, 'noded_p2p_gossip_published_total', { topic: 'header' })).toBe(0);
    expect(await metric(agg, 'noded_block_txs_count')).toBeGreaterThanOrEqual(height);

    // DA-included height: a block GetBlock shows on DA, rising as DA includes more.
    const included = await waitFor(async () => metric(agg, 'noded_da_included_height'), 'a block included on DA');
    expect((await getBlockJson(agg.rpc, { height: included })).json.header_da_height).toBeGreaterThan(0);
    await waitFor(async () => (await metric(agg, 'noded_da_included_height')) > included, 'noded_da_included_height to rise');
    expect(await metric(agg, 'noded_da_submitted_blobs_total')).toBeGreaterThanOrEqual(2);

    // A DA-only full node: blocks applied from DA, and its height follows the aggregator's.
    const fn = await Daemon.start(full[0]!, [...daArgs, ...METRICS]);
    await waitFor(async () => (await metric(fn, 'noded_sync_blocks_applied_total', { source: 'da' })) >= 3, 'blocks applied from DA');
    const fnHeight = await metric(fn, 'noded_chain_height');
    expect((await getBlockJson(fn.rpc, { height: fnHeight })).status).toBe(200);
    await fn.kill();

    // Refused connections, then (DA back) an injected code 19: each counted under its own reason.
    const refusedLabel = { reason: 'connection_refused' };
    const mempoolLabel = { reason: 'already_in_mempool' };
    await da.setFaults({ refuse: true });
    await waitFor(async () => (await metric(agg, 'noded_da_submit_failures_total', refusedLabel)) >= 1, 'a connection_refused failure');
    expect(await metric(agg, 'noded_da_submit_failures_total', mempoolLabel)).toBe(0);
    expect(await metric(agg, 'noded_da_submit_last_failure_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    await da.setFaults({ refuse: false });
    const blobs = await metric(agg, 'noded_da_submitted_blobs_total');
    await waitFor(async () => (await metric(agg, 'noded_da_submitted_blobs_total')) > blobs, 'a submission after the outage', 30_000);
    const refused = await metric(agg, 'noded_da_submit_failures_total', refusedLabel);
    await da.setFaults({ submitError: 'already_in_mempool', submitErrorCount: 1 });
    await waitFor(async () => (await metric(agg, 'noded_da_submit_failures_total', mempoolLabel)) === 1, 'the code 19 failure', 30_000);
    expect(await metric(agg, 'noded_da_submit_failures_total', refusedLabel)).toBe(refused);
    expect(await metric(agg, 'noded_da_submit_attempts_total')).toBeGreaterThan(refused + 1);

    // Requests that carry the token in a path or query make no label of it.
    await fetch(`${agg.rpc}/kv/${TOKEN}`);
    await fetch(`${agg.rpc}/${TOKEN}?token=${TOKEN}`);
    await fetch(`${agg.status}/${TOKEN}`);
    const last = await scrape(agg.metrics);
    expect(sampleValue(last.families, 'noded_rpc_requests_total', { server: 'rpc', route: '/kv/<key>' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(last.families, 'noded_rpc_requests_total', { server: 'rpc', route: 'other', code: '404' })).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(last.families, 'noded_rpc_requests_total', { server: 'rpc', route: '/node.v1.StoreService/GetBlock', code: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(last.text).not.toContain(TOKEN);
    expect(agg.stderr).not.toContain(TOKEN);
  });
});

describe('a metrics port held by another process', () => {
  let server: Server;
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    homes.cleanup();
  });

  it('--node.instrumentation.prometheus_listen_addr → exit 1 naming the port and the flag', async () => {
    const home = await homes.create('metrics-port', true);
    server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const port = (server.address() as { port: number }).port;
    const flag = '--node.instrumentation.prometheus_listen_addr';
    const res = await runCli(
      [
        'start',
        '--home',
        home,
        '--node.rpc.address',
        '127.0.0.1:0',
        '--node.rpc.status_address',
        '127.0.0.1:0',
        '--node.p2p.listen_address',
        '/ip4/127.0.0.1/tcp/0',
        '--node.da.local',
        '--node.da.address',
        'http://127.0.0.1:0',
        '--node.instrumentation.prometheus',
        flag,
        `127.0.0.1:${port}`,
      ],
      { OCLIF_COLUMNS: '1000' },
    );
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`port ${port} is already in use`);
    expect(res.stderr).toContain(`with ${flag} `);
  });
});
