import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NodeUnreachableError } from '../../src/client/index.js';
import { DashboardFeed, RecentBlocks, buildView, describeFailure, type FeedState, type Line, type PanelView } from '../../src/dashboard/index.js';
import { INITIAL_UI, keyName, keyNames, reduceKey, selectedIndex } from '../../src/dashboard/keys.js';
import { layoutFor } from '../../src/dashboard/layout.js';
import { formatLogLine, readLogTail } from '../../src/dashboard/log-tail.js';
import { bar, fitErrorAndRemedy, formatAge, meanBlockTime, sparkline } from '../../src/dashboard/view-model.js';
import type { NodeInfo } from '../../src/rpc/index.js';
import { FakeSource, blocksUpTo, fullNodeInfo, healthyInfo } from './fixtures.js';

beforeAll(() => {
  process.env.TZ = 'UTC';
});

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const text = (line: Line) => line.map((s) => s.text).join('');
const panelText = (p: PanelView) => p.lines.map(text).join('\n');
const state = (snapshot: FeedState['snapshot'], problem: FeedState['problem'] = null): FeedState => ({ snapshot, readAt: NOW - 1000, problem, log: null });
const view = (info: NodeInfo = healthyInfo(NOW), blocks = blocksUpTo(120, NOW)) => buildView(state({ info, blocks }), '127.0.0.1:7331', 'watch', NOW);

describe('formatting', () => {
  it('writes ages, sparklines and bars', () => {
    expect([400, 12_000, 192_000, 7_380_000, 273_600_000].map(formatAge)).toEqual(['0.4s', '12s', '3m12s', '2h03m', '3d04h']);
    expect(sparkline([0, 1, 2, 4])).toBe('▁▄▅█');
    expect(bar(0.25, 8)).toBe('██░░░░░░');
    expect(bar(3, 4)).toBe('████');
  });

  it('averages the time between the listed blocks', () => {
    expect(meanBlockTime(blocksUpTo(10, NOW, 5))).toBe(1000);
    expect(meanBlockTime(blocksUpTo(1, NOW, 1))).toBeNull();
  });
});

describe('buildView: ok', () => {
  it('shows every panel of a healthy aggregator, each state with its word', () => {
    const v = view();
    expect(text(v.header)).toMatch(/test-chain {2}aggregator {2}v0\.1\.0 {2}up 1h02m .*READY$/);
    expect(v.banner).toBeNull();
    for (const p of [v.chain, v.da, v.p2p, v.health, v.execution, v.children, v.warnings]) expect(p.level).toBe('ok');
    expect(panelText(v.chain)).toContain('height     120  best 120  lag 0');
    expect(panelText(v.chain)).toContain('in sync');
    expect(panelText(v.chain)).toContain('last block 0.4s ago');
    expect(panelText(v.chain)).toContain('1.00s mean of the last 20');
    expect(panelText(v.da)).toContain('included   117  pending 3 / 100');
    expect(panelText(v.da)).toContain('last error none');
    expect(panelText(v.da)).toContain('auto (the DA node estimates)');
    expect(panelText(v.p2p)).toContain('2 connected of 2 configured');
    expect(panelText(v.p2p)).toContain('12D3KooW…111111  /ip4/10.1.0.5/tcp/7676');
    expect(panelText(v.health)).toMatch(/live +OK\nready +READY/);
    expect(panelText(v.execution)).toContain('kv (built-in)  reachable');
    expect(panelText(v.children)).toBe('none supervised');
    expect(panelText(v.warnings)).toBe('none logged');
    expect(v.blocks).toHaveLength(30);
  });
});

describe('buildView: a full node', () => {
  it('shows what it follows on DA: the height known there, how far DA is behind, the DA height read; no pending queue, cap or gas price', () => {
    // Far behind DA in blocks, as a P2P full node is between DA blocks: still healthy.
    const info = fullNodeInfo(NOW, { height: 358, best_known_height: 358 });
    info.da = { ...info.da, included_height: 0, behind_blocks: 358 };
    const v = view(info, blocksUpTo(358, NOW));
    expect(v.da.level).toBe('ok');
    const da = panelText(v.da);
    expect(da).toContain('included   0  DA 358 blocks behind the chain');
    expect(da).toContain('DA height  read 1203 of 1205');
    expect(da).toContain('last error none');
    expect(da).toContain('mode       follows DA; submits none');
    expect(da).not.toMatch(/pending|%|cap|gas/);
    expect(text(v.header)).toMatch(/full node .*READY$/);
  });

  it('fails DA when its DA reads have failed for da.unready_after, with how long and the remedy', () => {
    const info = fullNodeInfo(NOW);
    const reason = 'DA reads failing for 75s: connect ECONNREFUSED 127.0.0.1:26658';
    info.health = { live: { ok: true }, ready: { ok: false, reason }, checks: { da: { ok: false, reason } } };
    info.da = {
      ...info.da,
      last_success_at: NOW - 76_000,
      failing_since: NOW - 75_000,
      last_error: { message: 'connect ECONNREFUSED 127.0.0.1:26658', reason: 'connection_refused', remedy: 'check the DA endpoint', at: NOW - 500 },
    };
    const v = view(info);
    expect(v.da.level).toBe('fail');
    expect(panelText(v.da)).toContain('last ok    1m16s ago, failing for 1m15s');
    expect(panelText(v.da)).toContain('connection_refused: connect ECONNREFUSED 127.0.0.1:26658');
    expect(panelText(v.da)).toContain('remedy     check the DA endpoint');
  });
});

describe('buildView: an HA node', () => {
  const LONG_ID = '12D3KooWAbCdEfGhIjKlMnOpQrStUvWxYz';
  const haRow = (info: NodeInfo) =>
    view(info)
      .chain.lines.map(text)
      .find((l) => l.startsWith('HA '));

  it('shows its role and who leads in the CHAIN panel; no leader warns; without ha there is no row', () => {
    expect(haRow(healthyInfo(NOW, { ha: { node_id: 'node-a', role: 'leader', leader: 'node-a' } }))).toBe('HA         leader (this node)');
    const follower = healthyInfo(NOW, { ha: { node_id: 'node-b', role: 'follower', leader: LONG_ID } });
    expect(haRow(follower)).toBe('HA         follower of 12D3KooW…UvWxYz');
    expect(view(follower).chain.level).toBe('ok');
    const electing = healthyInfo(NOW, { ha: { node_id: 'node-b', role: 'follower', leader: null } });
    expect(haRow(electing)).toBe('HA         NO LEADER (electing)');
    expect(view(electing).chain.level).toBe('warn');
    expect(haRow(healthyInfo(NOW))).toBeUndefined();
    // The sixth row of CHAIN, within 80 columns (half of them for the panel).
    expect(view(follower).chain.lines).toHaveLength(6);
    expect(haRow(follower)!.length).toBeLessThanOrEqual(40);
  });
});

describe('buildView: warn', () => {
  it('warns while catching up, with the lag', () => {
    const v = view(
      healthyInfo(NOW, {
        height: 90,
        best_known_height: 120,
        catching_up: true,
        health: { live: { ok: true }, ready: { ok: false, reason: 'behind best-known height 120 by 30 blocks' }, checks: {} },
      }),
    );
    expect(v.chain.level).toBe('warn');
    expect(panelText(v.chain)).toContain('CATCHING UP');
    expect(panelText(v.chain)).toContain('lag 30');
    expect(v.health.level).toBe('warn');
    expect(panelText(v.health)).toContain('UNREADY: behind best-known height 120 by 30 blocks');
    expect(text(v.header)).toMatch(/UNREADY$/);
  });

  it('warns when the pending queue passes half the cap, and after a DA error that has not failed readiness', () => {
    const info = healthyInfo(NOW);
    info.da = {
      ...info.da,
      pending_blocks: 60,
      last_error: { message: 'connection refused', reason: 'connection_refused', remedy: 'check the DA endpoint', at: NOW - 500 },
    };
    const v = view(info);
    expect(v.da.level).toBe('warn');
    expect(panelText(v.da)).toContain('60%');
    expect(panelText(v.da)).toContain('filling');
    expect(panelText(v.da)).toContain('connection_refused: connection refused');
    expect(panelText(v.da)).toContain('remedy     check the DA endpoint');
  });

  it('calls a chain with no new block for many block times stalled', () => {
    const v = view(healthyInfo(NOW, { last_block_time: NOW - 60_000 }));
    expect(v.chain.level).toBe('warn');
    expect(panelText(v.chain)).toContain('STALLED: none for 1m00s');
  });

  it('lists warnings newest first with their level word', () => {
    const v = view(
      healthyInfo(NOW, {
        warnings: [
          { time: NOW - 5000, level: 'warn', module: 'p2p', msg: 'peer dial failed', detail: 'ECONNREFUSED' },
          { time: NOW - 1000, level: 'error', module: 'da-submitter', msg: 'DA layer submission failed', detail: 'timeout' },
        ],
      }),
    );
    expect(v.warnings.level).toBe('fail');
    expect(panelText(v.warnings).split('\n')).toEqual([
      '11:59:59 ERROR [da-submitter] DA layer submission failed: timeout',
      '11:59:55 WARN [p2p] peer dial failed: ECONNREFUSED',
    ]);
  });
});

describe('buildView: fail', () => {
  it('fails DA when readiness says DA is unreachable, and shows production paused at the cap', () => {
    const info = healthyInfo(NOW);
    info.health = {
      live: { ok: true },
      ready: { ok: false, reason: 'DA unreachable for 40s' },
      checks: { da: { ok: false, reason: 'DA unreachable for 40s' } },
    };
    info.da = {
      ...info.da,
      pending_blocks: 100,
      production_paused: 'production paused: 100 blocks pending DA',
      last_error: { message: 'refused', reason: 'connection_refused', remedy: 'check', at: NOW },
    };
    const v = view(info);
    expect(v.da.level).toBe('fail');
    expect(panelText(v.da)).toContain('100% PAUSED');
  });

  it('fails P2P when configured peers are all gone, and execution when it does not answer', () => {
    const info = healthyInfo(NOW, { execution: { type: 'evm', reachable: false, height: 55 } });
    info.p2p = { ...info.p2p, peers: [] };
    const v = view(info);
    expect(v.p2p.level).toBe('fail');
    expect(panelText(v.p2p)).toContain('0 connected of 2 configured');
    expect(panelText(v.p2p)).toContain('NONE: run `noded doctor`');
    expect(v.execution.level).toBe('fail');
    expect(panelText(v.execution)).toBe('evm  UNREACHABLE  EL height 55');
  });

  it('shows supervised children with state words, pid, uptime and restarts', () => {
    const v = view(
      healthyInfo(NOW, {
        children: [
          { name: 'reth', state: 'running', pid: 4242, started_at: NOW - 90_000, restarts: 1 },
          { name: 'celestia', state: 'failed', pid: null, started_at: null, restarts: 5 },
        ],
      }),
    );
    expect(v.children.level).toBe('fail');
    expect(panelText(v.children).split('\n')).toEqual(['reth  running  pid 4242  up 1m30s  restarts 1', 'celestia  failed  pid —  up —  restarts 5']);
  });

  it('says NOT LIVE when liveness fails', () => {
    const v = view(healthyInfo(NOW, { health: { live: { ok: false, reason: 'shutting down' }, ready: { ok: false, reason: 'shutting down' }, checks: {} } }));
    expect(text(v.header)).toMatch(/NOT LIVE$/);
    expect(v.chain.level).toBe('fail');
    expect(panelText(v.health)).toContain('FAIL: shutting down');
  });
});

describe('buildView: unreachable', () => {
  it('says so in place before any reading succeeded', () => {
    const v = buildView(state(null, { message: 'no node at 127.0.0.1:7331 — retrying', since: NOW - 3000 }), '127.0.0.1:7331', 'watch', NOW);
    expect(text(v.banner!)).toBe('no node at 127.0.0.1:7331 — retrying  (failing for 3.0s)');
    expect(text(v.header)).toContain('UNREACHABLE');
    expect(v.chain.level).toBe('fail');
    expect(panelText(v.chain)).toBe('no data yet');
  });

  it('keeps the last data, marked stale, once the node stops answering', () => {
    const v = buildView(
      state({ info: healthyInfo(NOW), blocks: blocksUpTo(120, NOW) }, { message: 'no node at 127.0.0.1:7331 — retrying', since: NOW - 2000 }),
      't',
      'watch',
      NOW,
    );
    expect(text(v.banner!)).toContain('showing data from 1.0s ago');
    expect([v.chain, v.da, v.p2p, v.health].map((p) => p.level)).toEqual(['stale', 'stale', 'stale', 'stale']);
    expect(panelText(v.chain)).toContain('height     120');
  });

  it('words failures: refused, slow, other', () => {
    expect(describeFailure(new NodeUnreachableError('127.0.0.1:7331'), 'x')).toBe('no node at 127.0.0.1:7331 — retrying');
    expect(describeFailure(Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), '127.0.0.1:7331')).toBe(
      '127.0.0.1:7331 did not answer in time — retrying',
    );
    expect(describeFailure(new Error('node_info failed: boom'), 'h')).toBe('h: node_info failed: boom — retrying');
  });
});

describe('keys', () => {
  const blocks = blocksUpTo(10, NOW, 5);

  it('names keys from Ink input', () => {
    const none = { ctrl: false, upArrow: false, downArrow: false, return: false, escape: false };
    expect(keyName('j', none)).toBe('down');
    expect(keyName('', { ...none, upArrow: true })).toBe('up');
    expect(keyName('c', { ...none, ctrl: true })).toBe('ctrl-c');
    expect(keyName('', { ...none, return: true })).toBe('enter');
    expect(keyName('x', none)).toBe('other');
    expect(keyNames('jj\r', none)).toEqual(['down', 'down', 'enter']);
  });

  it('moves the selection, stops at the ends, and follows the newest again at the top', () => {
    let ui = INITIAL_UI;
    for (const k of ['down', 'down'] as const) ui = reduceKey(ui, k, blocks, 'watch').ui;
    expect(ui.selected).toBe(8);
    for (let i = 0; i < 9; i++) ui = reduceKey(ui, 'down', blocks, 'watch').ui;
    expect(ui.selected).toBe(6);
    for (let i = 0; i < 9; i++) ui = reduceKey(ui, 'up', blocks, 'watch').ui;
    expect(ui.selected).toBeNull();
    expect(selectedIndex({ ...ui, selected: 2 }, blocks)).toBe(4);
  });

  it('opens the selected block and goes back', () => {
    const down = reduceKey(INITIAL_UI, 'down', blocks, 'watch').ui;
    const opened = reduceKey(down, 'enter', blocks, 'watch');
    expect(opened).toEqual({ ui: { screen: 'block', selected: 9 }, effect: { kind: 'open', height: 9 } });
    expect(reduceKey(opened.ui, 'down', blocks, 'watch').effect).toEqual({ kind: 'open', height: 8 });
    expect(reduceKey(opened.ui, 'esc', blocks, 'watch').ui.screen).toBe('main');
  });

  it('quits at once when watching, asks first when the node runs in this process', () => {
    expect(reduceKey(INITIAL_UI, 'q', blocks, 'watch').effect).toEqual({ kind: 'quit' });
    const asked = reduceKey(INITIAL_UI, 'q', blocks, 'node');
    expect(asked).toEqual({ ui: { ...INITIAL_UI, screen: 'confirm-stop' }, effect: null });
    expect(reduceKey(asked.ui, 'other', blocks, 'node').ui.screen).toBe('main');
    expect(reduceKey(asked.ui, 'y', blocks, 'node')).toEqual({ ui: { ...INITIAL_UI, screen: 'stopping' }, effect: { kind: 'stop-node' } });
    expect(reduceKey(INITIAL_UI, 'ctrl-c', blocks, 'node').effect).toEqual({ kind: 'stop-node' });
  });

  it('opens and closes the help', () => {
    const help = reduceKey(INITIAL_UI, '?', blocks, 'watch').ui;
    expect(help.screen).toBe('help');
    expect(reduceKey(help, 'esc', blocks, 'watch').ui.screen).toBe('main');
  });
});

describe('layout', () => {
  it('fits every band into 80×24, one row spare so drawing never scrolls', () => {
    for (const banner of [false, true]) {
      const l = layoutFor({ columns: 80, rows: 24 }, { mode: 'watch', banner, peers: 2, children: 1, topLines: 6 });
      expect(1 + (banner ? 1 : 0) + l.top + l.mid + l.bottom + 1).toBe(23);
      expect(l.bottom).toBeGreaterThanOrEqual(4);
    }
  });

  it('a DA error and its remedy: wrapped whole when they fit; when not, the remedy first, the raw error cut with …, the rest kept', () => {
    const lines: Line[] = [
      [{ text: 'included   117' }],
      [{ text: 'last error ' }, { text: `already_in_mempool: ${'tx already exists in mempool '.repeat(4)}` }],
      [{ text: 'remedy     ' }, { text: 'check the balance, fund the account, or raise --node.da.gas_price' }],
      [{ text: 'gas price  0.002051' }],
    ];
    const roomy = fitErrorAndRemedy(lines, 1, 39, 20).map(text);
    expect(roomy[0]).toBe('included   117');
    expect(roomy[1]).toMatch(/^last error already_in_mempool:/);
    expect(roomy.findIndex((l) => l.startsWith('remedy'))).toBeGreaterThan(1);
    expect(roomy.at(-1)).toBe('gas price  0.002051');
    const short = fitErrorAndRemedy(lines, 1, 39, 6).map(text);
    expect(short).toHaveLength(6);
    for (const l of short) expect(l.length).toBeLessThanOrEqual(39);
    expect(short[1]).toMatch(/^remedy /);
    const errorAt = short.findIndex((l) => l.startsWith('last error'));
    expect(short.slice(1, errorAt).join(' ').replace(/ +/g, ' ')).toBe('remedy check the balance, fund the account, or raise --node.da.gas_price');
    expect(short.slice(errorAt, 5).join(' ')).toMatch(/^last error already_in_mempool: .*…$/);
    expect(short[5]).toBe('gas price  0.002051');
  });

  it('gives more rows to long lists, the blocks and the log, and more columns to the hashes', () => {
    const small = layoutFor({ columns: 80, rows: 24 }, { mode: 'node', banner: false, peers: 12, children: 0, topLines: 6 });
    const big = layoutFor({ columns: 160, rows: 50 }, { mode: 'node', banner: false, peers: 12, children: 0, topLines: 6 });
    expect(big.mid).toBeGreaterThan(small.mid);
    expect(big.bottom).toBeGreaterThan(small.bottom);
    expect([small.warnings, small.log > 0]).toEqual([0, true]);
    expect(big.warnings).toBeGreaterThan(0);
    expect(big.hashChars).toBeGreaterThan(small.hashChars);
  });
});

describe('log tail', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('reads the last lines, shortened for the panel, JSON or text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'noded-logtail-'));
    dirs.push(dir);
    const file = join(dir, 'node.log');
    expect(await readLogTail(file, 5)).toEqual([]);
    const lines = Array.from({ length: 3000 }, (_, i) => `[12:00:0${i % 10}.123] INFO: line ${i}`);
    lines.push(JSON.stringify({ level: 40, time: '2026-11-23T12:00:09.000Z', module: 'da', msg: 'DA layer submission failed', error: 'refused' }));
    writeFileSync(file, lines.join('\n') + '\n');
    expect(await readLogTail(file, 3)).toEqual([
      '12:00:08 INFO line 2998',
      '12:00:09 INFO line 2999',
      '12:00:09 WARN [da] DA layer submission failed error=refused',
    ]);
    expect(formatLogLine('not a log line')).toBe('not a log line');
  });
});

describe('RecentBlocks', () => {
  it('fetches only blocks it does not hold, and forgets blocks above a lower height', async () => {
    const fetched: number[] = [];
    const recent = new RecentBlocks(async (h) => {
      fetched.push(h);
      return { height: h, time: h * 1000, txs: 0, hash: String(h) };
    });
    expect((await recent.upTo(3)).map((b) => b.height)).toEqual([3, 2, 1]);
    expect((await recent.upTo(5)).map((b) => b.height)).toEqual([5, 4, 3, 2, 1]);
    expect(fetched.sort()).toEqual([1, 2, 3, 4, 5]);
    expect((await recent.upTo(2)).map((b) => b.height)).toEqual([2, 1]);
  });
});

describe('DashboardFeed', () => {
  it('turns failures into a problem, keeps the last reading, and clears the problem when the node answers again', async () => {
    const snapshot = { info: healthyInfo(Date.now()), blocks: blocksUpTo(120, Date.now()) };
    const source = new FakeSource(snapshot);
    const feed = new DashboardFeed(source, { intervalMs: 1000, timeoutMs: 1000 });
    let told = 0;
    feed.subscribe(() => told++);
    await feed.refresh();
    expect(feed.state.problem).toBeNull();
    source.next = new NodeUnreachableError('127.0.0.1:7331');
    await feed.refresh();
    await feed.refresh();
    expect(feed.state.problem?.message).toBe('no node at 127.0.0.1:7331 — retrying');
    expect(feed.state.snapshot).toBe(snapshot);
    source.next = snapshot;
    await feed.refresh();
    expect(feed.state.problem).toBeNull();
    expect(told).toBe(4);
  });

  it('bounds a reading that never answers by its timeout', async () => {
    const source = new FakeSource(new Error('unused'));
    source.snapshot = () => new Promise(() => {});
    const feed = new DashboardFeed(source, { intervalMs: 1000, timeoutMs: 50 });
    await feed.refresh();
    expect(feed.state.problem?.message).toBe('127.0.0.1:7331 did not answer in 0.1s — retrying');
  });
});
