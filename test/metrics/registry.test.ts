import { describe, expect, it } from 'vitest';
import { instrumentExecutor, type Executor } from '../../src/exec/index.js';
import { createNodeMetrics, type NodeReadings } from '../../src/metrics/index.js';
import { parseExposition, sampleValue } from '../helpers/metrics.js';

const readings = (over: Partial<NodeReadings> = {}): NodeReadings => ({
  chainHeight: () => 42n,
  daIncludedHeight: () => 40n,
  da: { mode: 'submit', pendingBlocks: () => 2n, maxPendingBlocks: 100 },
  mempoolSize: () => 7,
  connectedPeers: () => 3,
  bestKnownHeight: () => 45n,
  catchingUp: () => true,
  // A name with every character the format escapes: the parser must read it back as it was.
  children: () => [
    { name: 'ethereumjs', state: 'running', restarts: 2 },
    { name: 'odd "name" \\ with\nnewline', state: 'restarting', restarts: 0 },
  ],
  ha: { isLeader: () => true, hasLeader: () => true, leaderChanges: () => 3, fenceRefusals: () => 1, deadlineLeftMs: () => 1250 },
  ...over,
});

/** Every metric moved once, so each family has samples to check. */
function exercised() {
  const m = createNodeMetrics();
  m.observe(readings());
  m.blockInterval.observe(0.1);
  m.blockTxs.observe(1000);
  m.blocksApplied.inc({ source: 'p2p' });
  m.blocksApplied.inc({ source: 'da' }, 2);
  m.daAttempts.inc(3);
  m.daFailures.inc({ reason: 'connection_refused' });
  m.daFailures.inc({ reason: 'already_in_mempool' });
  m.daLastFailure.set(1_700_000_000.5);
  m.daGasPrice.set(0.0025);
  m.daSubmittedBytes.inc(1234);
  m.daSubmittedBlobs.inc(2);
  m.gossipReceived.inc({ topic: 'header' });
  m.gossipPublished.inc({ topic: 'data' });
  m.gossipRejected.inc({ topic: 'header' });
  m.rpcRequests.inc({ server: 'rpc', route: '/tx', code: '200' });
  m.rpcDuration.observe({ server: 'rpc', route: '/tx', code: '200' }, 0.002);
  m.executionDuration.observe({ method: 'executeTxs' }, 0.01);
  m.executionErrors.inc({ method: 'setFinal' });
  return m;
}

describe('node metrics registry', () => {
  it('writes the text format: HELP and TYPE before each family, every sample `name{labels} value`, all names noded_', async () => {
    const { body, contentType } = await exercised().scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parseExposition(body);
    expect(families.size).toBeGreaterThan(30);
    for (const family of families.values()) {
      expect(family.name, 'prefix').toMatch(/^noded_/);
      expect(family.help, `${family.name} help`).not.toBe('');
      if (family.type === 'counter') expect(family.name, 'a counter ends in _total').toMatch(/_total$/);
      if (/duration|interval|timestamp|seconds/.test(family.name)) expect(family.name, 'time in seconds').toMatch(/_seconds(_total)?$/);
      if (/bytes/.test(family.name)) expect(family.name, 'sizes in bytes').toMatch(/_bytes(_total)?$/);
    }
    // Node.js process metrics, on this registry and under the prefix.
    expect(families.has('noded_process_cpu_seconds_total')).toBe(true);
    expect(families.has('noded_nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('reads the node at scrape time and reports what the components counted', async () => {
    const f = parseExposition((await exercised().scrape()).body);
    const v = (name: string, labels?: Record<string, string>) => sampleValue(f, name, labels);
    expect(v('noded_chain_height')).toBe(42);
    expect(v('noded_da_included_height')).toBe(40);
    expect(v('noded_pending_blocks')).toBe(2);
    expect(v('noded_pending_blocks_cap')).toBe(100);
    expect(v('noded_mempool_txs')).toBe(7);
    expect(v('noded_p2p_connected_peers')).toBe(3);
    expect(v('noded_sync_best_known_height')).toBe(45);
    expect(v('noded_sync_catching_up')).toBe(1);
    expect(v('noded_supervised_child_up', { name: 'ethereumjs' })).toBe(1);
    expect(v('noded_supervised_child_up', { name: 'odd "name" \\ with\nnewline' })).toBe(0);
    expect(v('noded_supervised_child_restarts_total', { name: 'ethereumjs' })).toBe(2);
    expect(v('noded_sync_blocks_applied_total', { source: 'da' })).toBe(2);
    expect(v('noded_da_submit_failures_total', { reason: 'connection_refused' })).toBe(1);
    expect(v('noded_da_submit_failures_total', { reason: 'already_in_mempool' })).toBe(1);
    // Every cause is there from the start, at 0.
    for (const reason of ['timeout', 'unauthorized', 'insufficient_funds', 'too_big', 'other']) {
      expect(v('noded_da_submit_failures_total', { reason }), reason).toBe(0);
    }
    expect(v('noded_da_submit_last_failure_timestamp_seconds')).toBe(1_700_000_000.5);
    expect(v('noded_da_gas_price')).toBe(0.0025);
    expect(v('noded_da_submitted_bytes_total')).toBe(1234);
    expect(v('noded_block_txs_count')).toBe(1);
    expect(v('noded_block_interval_seconds_bucket', { le: '0.1' })).toBe(1);
    expect(v('noded_rpc_request_duration_seconds_count', { route: '/tx', code: '200' })).toBe(1);
    expect(v('noded_execution_errors_total', { method: 'setFinal' })).toBe(1);
    expect(v('noded_ha_is_leader')).toBe(1);
    expect(v('noded_ha_has_leader')).toBe(1);
    expect(v('noded_ha_leader_changes_seen_total')).toBe(3);
    expect(v('noded_ha_fence_refusals_total')).toBe(1);
    expect(v('noded_ha_lease_deadline_seconds')).toBe(1.25);
  });

  it('shows the HA election on an HA node alone: a follower reads 0 time left; without ha.enabled there is no ha_ family', async () => {
    const follower = createNodeMetrics();
    const ha = { isLeader: () => false, hasLeader: () => false, leaderChanges: () => 0, fenceRefusals: () => 0, deadlineLeftMs: () => null };
    follower.observe(readings({ ha }));
    const f = parseExposition((await follower.scrape()).body);
    for (const name of ['noded_ha_is_leader', 'noded_ha_has_leader', 'noded_ha_leader_changes_seen_total', 'noded_ha_lease_deadline_seconds']) {
      expect(sampleValue(f, name), name).toBe(0);
    }
    const plain = createNodeMetrics();
    plain.observe(readings({ ha: null }));
    const names = [...parseExposition((await plain.scrape()).body).keys()];
    expect(names.filter((n) => n.startsWith('noded_ha_'))).toEqual([]);
  });

  it("shows only the role's own DA gauges: a full node's DA progress, never an aggregator's pending queue or cap", async () => {
    const m = createNodeMetrics();
    m.observe(readings({ da: { mode: 'follow', scanHeight: () => 1203n, headHeight: () => 1205n, behindBlocks: () => 2n } }));
    const f = parseExposition((await m.scrape()).body);
    expect(sampleValue(f, 'noded_da_included_height')).toBe(40);
    expect(sampleValue(f, 'noded_da_scan_height')).toBe(1203);
    expect(sampleValue(f, 'noded_da_head_height')).toBe(1205);
    expect(sampleValue(f, 'noded_da_behind_blocks')).toBe(2);
    expect(f.has('noded_pending_blocks')).toBe(false);
    expect(f.has('noded_pending_blocks_cap')).toBe(false);
    const aggregator = parseExposition((await exercised().scrape()).body);
    expect(aggregator.has('noded_da_scan_height')).toBe(false);
  });

  it('reads 0 before the node is observed', async () => {
    const fresh = parseExposition((await createNodeMetrics().scrape()).body);
    expect(sampleValue(fresh, 'noded_chain_height')).toBe(0);
    expect(sampleValue(fresh, 'noded_sync_catching_up')).toBe(0);
  });

  it('gives each node a registry of its own', async () => {
    const a = createNodeMetrics();
    const b = createNodeMetrics();
    a.daAttempts.inc(5);
    const fb = parseExposition((await b.scrape()).body);
    expect(sampleValue(fb, 'noded_da_submit_attempts_total')).toBe(0);
  });

  it('times executor calls by method and counts the ones that fail', async () => {
    const m = createNodeMetrics();
    const failing: Executor = {
      initChain: async () => new Uint8Array(32),
      getTxs: async () => [],
      filterTxs: async () => [],
      executeTxs: async () => {
        throw new Error('engine down');
      },
      setFinal: async () => undefined,
      submitTx: () => undefined,
    };
    const exec = instrumentExecutor(failing, m);
    await exec.getTxs();
    await expect(exec.executeTxs([], 1n, 1n, new Uint8Array(32))).rejects.toThrow('engine down');
    const f = parseExposition((await m.scrape()).body);
    expect(sampleValue(f, 'noded_execution_call_duration_seconds_count', { method: 'getTxs' })).toBe(1);
    expect(sampleValue(f, 'noded_execution_call_duration_seconds_count', { method: 'executeTxs' })).toBe(1);
    expect(sampleValue(f, 'noded_execution_errors_total', { method: 'executeTxs' })).toBe(1);
    expect(sampleValue(f, 'noded_execution_errors_total', { method: 'getTxs' })).toBeUndefined();
  });
});

describe('the strict exposition parser', () => {
  it.each([
    ['a sample without TYPE', 'noded_x 1\n'],
    ['a TYPE without HELP', '# TYPE noded_x gauge\nnoded_x 1\n'],
    ['a bad value', '# HELP noded_x x\n# TYPE noded_x gauge\nnoded_x one\n'],
    ['an unquoted label', '# HELP noded_x x\n# TYPE noded_x gauge\nnoded_x{a=b} 1\n'],
    ['a raw newline escape', '# HELP noded_x x\n# TYPE noded_x gauge\nnoded_x{a="\\q"} 1\n'],
    ['no final newline', '# HELP noded_x x\n# TYPE noded_x gauge\nnoded_x 1'],
    ['a family split in two', '# HELP noded_x x\n# TYPE noded_x gauge\nnoded_x 1\n# HELP noded_y y\n# TYPE noded_y gauge\nnoded_y 1\nnoded_x 2\n'],
  ])('refuses %s', (_, text) => {
    expect(() => parseExposition(text)).toThrow();
  });
});
