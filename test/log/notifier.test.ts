import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, recentProblems, type Logger } from '../../src/log/index.js';
import { Node, nodeInfo } from '../../src/node/index.js';
import { StatusNotifier, describeStatus, statusFields, type StatusFields } from '../../src/node/notifier.js';
import type { FollowerDaInfo, NodeInfo, SubmitterDaInfo } from '../../src/rpc/index.js';
import { waitFor } from '../helpers/daemon.js';
import { portZeroHome } from '../helpers/node-parts.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function jsonLogger(): { logger: Logger; lines: () => Array<Record<string, any>> } {
  let text = '';
  const logger = createLogger({ level: 'info', format: 'json', destination: { write: (l: string) => (text += l) } });
  return {
    logger,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

const statusLines = (lines: Array<Record<string, any>>) => lines.filter((l) => l.module === 'status');

describe('status line', () => {
  it('a running aggregator logs it every log.status_interval with height, best-known, catching_up, DA and peers', async () => {
    const { home, config } = portZeroHome('notify-1', { 'node.block_time': '50ms', 'log.status_interval': '100ms' });
    cleanups.push(home.cleanup);
    const { logger, lines } = jsonLogger();
    const node = await Node.init({ home: home.dir, config, logger, version: 'test' });
    cleanups.push(() => node.close());
    node.start((err) => {
      throw err;
    });
    // Three lines a short interval apart, the last after blocks reached DA.
    await waitFor(() => statusLines(lines()).length >= 3 && statusLines(lines()).at(-1)!.status.daIncluded > 0, 'status lines with blocks on DA', 20_000);
    const last = statusLines(lines()).at(-1)!;
    expect(last).toMatchObject({ level: 30, module: 'status', status: { catchingUp: false, peers: 0, maxPending: 100, lastError: null } });
    expect(last.status.height).toBeGreaterThanOrEqual(last.status.daIncluded);
    expect(last.status.bestKnown).toBe(last.status.height);
    expect(last.status.daPending).toBe(last.status.height - last.status.daIncluded);
    expect(last.msg).toBe(describeStatus(last.status, Date.parse(last.time)));
    expect(last.msg).toMatch(/^synced \| height \d+ \| DA included \d+, \d+ pending \| 0 peers \| no errors$/);
    // Reads what /node_info reads: one source for the dashboard and the line.
    const now = statusFields(nodeInfo(node));
    expect(now.height).toBeGreaterThanOrEqual(last.status.height);
  });

  it('a state change is logged at once, not at the next interval; the same state again is not', async () => {
    let info = fakeInfo({});
    const { logger, lines } = jsonLogger();
    const notifier = new StatusNotifier(() => info, 3_600_000, logger.child({ module: 'status' }));
    const stop = new AbortController();
    cleanups.push(() => stop.abort());
    notifier.start(stop.signal);
    await waitFor(() => statusLines(lines()).length === 1, 'the first line');

    info = fakeInfo({ p2p: { peers: [{ id: 'a', address: '/ip4/1.2.3.4/tcp/1' }] } as never });
    await waitFor(() => statusLines(lines()).length === 2, 'a line for the new peer');
    expect(statusLines(lines())[1]!.status.peers).toBe(1);

    info = fakeInfo({ p2p: info.p2p, catching_up: true, best_known_height: 20 });
    await waitFor(() => statusLines(lines()).length === 3, 'a line for catching up');
    expect(statusLines(lines())[2]!.msg).toMatch(/^catching up \| height 10 of 20 \|/);

    logger.child({ module: 'da-submitter' }).error({ code: 'DA_SUBMIT_FAILED', error: 'connection refused' }, 'DA layer submission failed');
    info = { ...info, warnings: [...recentProblems(logger)] };
    await waitFor(() => statusLines(lines()).length === 4, 'a line for the new error');
    const errorLine = statusLines(lines())[3]!;
    expect(errorLine.status.lastError).toMatchObject({ code: 'DA_SUBMIT_FAILED', msg: 'DA layer submission failed', detail: 'connection refused' });
    expect(errorLine.msg).toMatch(/\| last error DA_SUBMIT_FAILED \d+s ago: DA layer submission failed \(connection refused\)$/);

    info = fakeInfo({ ...info, da: { ...AGGREGATOR_DA, pending_blocks: 100 } });
    await waitFor(() => statusLines(lines()).length === 5, 'a line at the pending cap');
    expect(statusLines(lines())[4]!.msg).toContain('DA included 5, 100 pending (at the cap of 100)');

    const failing = (s: number): NodeInfo['health'] => ({
      live: { ok: true },
      ready: { ok: false, reason: `DA submissions failing for ${s}s: connection refused` },
      checks: {},
    });
    info = { ...info, catching_up: false, health: failing(61) };
    await waitFor(() => statusLines(lines()).length === 6, 'a line when the node turns unready');
    expect(statusLines(lines())[5]!.msg).toMatch(/^UNREADY: DA submissions failing for 61s: connection refused \| height 10 \|/);
    expect(statusLines(lines())[5]!.status.unready).toBe('DA submissions failing for 61s: connection refused');
    info = { ...info, health: { live: { ok: true }, ready: { ok: true }, checks: {} } };
    await waitFor(() => statusLines(lines()).length === 7, 'a line when the node is ready again');
    expect(statusLines(lines())[6]!.msg).toMatch(/^synced \| height 10 \|/);
  });

  it('describes each state in words', () => {
    const base: StatusFields = {
      height: 7,
      bestKnown: 7,
      catchingUp: false,
      unready: null,
      daIncluded: 6,
      daPending: 1,
      maxPending: 0,
      peers: 1,
      lastError: null,
    };
    expect(describeStatus(base)).toBe('synced | height 7 | DA included 6, 1 pending | 1 peer | no errors');
    expect(describeStatus({ ...base, unready: 'DA submissions failing for 75s: tx already in mempool' })).toBe(
      'UNREADY: DA submissions failing for 75s: tx already in mempool | height 7 | DA included 6, 1 pending | 1 peer | no errors',
    );
  });

  it('a full node tells what it follows on DA, never pending blocks or a cap', () => {
    const fields = statusFields(fakeInfo({ height: 358, best_known_height: 358, da: FOLLOWER_DA }));
    expect(fields).toMatchObject({ daIncluded: 356, daScanned: 1203, daHead: 1205, daBehind: 2 });
    expect(fields).not.toHaveProperty('daPending');
    expect(fields).not.toHaveProperty('maxPending');
    const line = describeStatus(fields);
    expect(line).toBe('synced | height 358 | DA included 356 (2 blocks behind the chain), read DA height 1203 of 1205 | 0 peers | no errors');
    expect(line).not.toMatch(/pending|cap/);
  });
});

const AGGREGATOR_DA: SubmitterDaInfo = {
  mode: 'submit',
  included_height: 5,
  pending_blocks: 5,
  max_pending_blocks: 100,
  gas_price: -1,
  production_paused: null,
  last_success_at: 0,
  failing_since: 0,
  last_error: null,
};

const FOLLOWER_DA: FollowerDaInfo = {
  mode: 'follow',
  included_height: 356,
  scan_height: 1203,
  head_height: 1205,
  behind_blocks: 2,
  last_success_at: 0,
  failing_since: 0,
  last_error: null,
};

/** A NodeInfo with the fields the status line reads; the rest as a fresh node has them. */
function fakeInfo(over: Partial<NodeInfo>): NodeInfo {
  return {
    height: 10,
    best_known_height: 10,
    catching_up: false,
    health: { live: { ok: true }, ready: { ok: true }, checks: {} },
    da: AGGREGATOR_DA,
    p2p: { peers: [] },
    warnings: [],
    ...over,
  } as unknown as NodeInfo;
}
