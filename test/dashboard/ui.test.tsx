import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { render, cleanup } from 'ink-testing-library';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NodeUnreachableError } from '../../src/client/index.js';
import { DA_REMEDY } from '../../src/da/index.js';
import { DashboardApp, DashboardFeed } from '../../src/dashboard/index.js';
import type { DashboardMode } from '../../src/dashboard/index.js';
import { tempHome, waitFor } from '../helpers/daemon.js';
import { FakeSource, blocksUpTo, fullNodeInfo, healthyInfo } from './fixtures.js';
import type { BlockDetail } from '../../src/dashboard/index.js';

beforeAll(() => {
  process.env.TZ = 'UTC';
});
const cleanups: Array<() => void> = [];
afterEach(() => {
  cleanup();
  for (const c of cleanups.splice(0)) c();
});

const ARROW_DOWN = '\u001B[B';
const ARROW_UP = '\u001B[A';
const ENTER = '\r';
const ESC = '\u001B';

/** The dashboard on a fake node, at `size`, after its first reading. */
async function mount(opts: { mode?: DashboardMode; size?: { columns: number; rows: number }; source?: FakeSource; logFile?: string } = {}) {
  const now = Date.now();
  const source = opts.source ?? new FakeSource({ info: healthyInfo(now), blocks: blocksUpTo(120, now) });
  const feed = new DashboardFeed(source, { intervalMs: 1000, timeoutMs: 1000, logFile: opts.logFile });
  await feed.refresh();
  const onQuit = vi.fn();
  const onStopNode = vi.fn();
  const draw = (size: { columns: number; rows: number }) => (
    <DashboardApp feed={feed} mode={opts.mode ?? 'watch'} colour={false} size={size} onQuit={onQuit} onStopNode={onStopNode} />
  );
  const app = render(draw(opts.size ?? { columns: 80, rows: 24 }));
  /** The terminal changed size. */
  const resize = (size: { columns: number; rows: number }) => app.rerender(draw(size));
  const frame = () => app.lastFrame() ?? '';
  /** Waits for the screen to show `text` (Ink draws after the state change, not during it). */
  const shows = (text: string | RegExp) =>
    waitFor(() => (typeof text === 'string' ? frame().includes(text) : text.test(frame())), `the dashboard to show ${text}:\n${frame()}`, 5000);
  return { app, feed, source, frame, shows, resize, onQuit, onStopNode };
}

describe('panels from fixed inputs', () => {
  it('draws every panel of a healthy node inside 80×24', async () => {
    const { frame, shows } = await mount();
    await shows('BLOCKS');
    const lines = frame().split('\n');
    expect(lines.length).toBeLessThanOrEqual(23);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    const screen = frame();
    expect(screen).toMatch(/^noded {2}test-chain {2}aggregator {2}v0\.1\.0 {2}up 1h02m/);
    expect(screen).toContain('CHAIN [ok]');
    expect(screen).toContain('height     120  best 120  lag 0');
    expect(screen).toContain('DA [ok]');
    expect(screen).toContain('included   117  pending 3 / 100');
    expect(screen).toContain('P2P [ok]');
    expect(screen).toContain('2 connected of 2 configured');
    expect(screen).toContain('HEALTH [ok]');
    expect(screen).toContain('READY');
    expect(screen).toContain('EXECUTION [ok]');
    expect(screen).toContain('CHILDREN [ok]');
    expect(screen).toContain('WARNINGS [ok]');
    expect(screen).toMatch(/› +120 \d\d:\d\d:\d\d +1 tx [0-9A-F]+ pending/);
    expect(screen).toMatch(/ +117 \d\d:\d\d:\d\d +5 tx [0-9A-F]+ on DA/);
  });

  it('an HA follower: its row in CHAIN, inside 80×24 with every other panel', async () => {
    const now = Date.now();
    const info = healthyInfo(now, { ha: { node_id: 'node-b', role: 'follower', leader: '12D3KooWAbCdEfGhIjKlMnOpQrStUvWxYz' } });
    const { frame, shows } = await mount({ source: new FakeSource({ info, blocks: blocksUpTo(120, now) }) });
    await shows('HA         follower of 12D3KooW…UvWxYz');
    const lines = frame().split('\n');
    expect(lines.length).toBeLessThanOrEqual(23);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    for (const title of ['CHAIN [ok]', 'DA [ok]', 'P2P [ok]', 'HEALTH [ok]', 'EXECUTION [ok]', 'CHILDREN [ok]', 'BLOCKS', 'WARNINGS [ok]']) {
      expect(frame()).toContain(title);
    }
  });

  it('uses a bigger terminal for more blocks and longer hashes', async () => {
    const { frame, shows } = await mount({ size: { columns: 140, rows: 44 } });
    await shows('BLOCKS');
    const small = await mount();
    await small.shows('BLOCKS');
    const rows = (s: string) => s.split('\n').filter((l) => / tx [0-9A-F]+ /.test(l));
    expect(rows(frame()).length).toBeGreaterThan(rows(small.frame()).length);
    expect(rows(frame())[0]!.length).toBeGreaterThan(rows(small.frame())[0]!.length);
  });

  it('tails the log file in start --dashboard', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    const logFile = join(home.dir, 'node.log');
    writeFileSync(logFile, '[12:00:01.000] INFO: node started\n[12:00:02.000] WARN: [da-submitter] DA layer submission failed\n');
    const { shows } = await mount({ mode: 'node', logFile, size: { columns: 120, rows: 30 } });
    await shows('LOG [ok]');
    await shows('12:00:02 WARN [da-submitter] DA layer submission failed');
  });
});

describe('every state has a word', () => {
  it('warn: catching up and a filling DA queue', async () => {
    const now = Date.now();
    const info = healthyInfo(now, {
      height: 100,
      best_known_height: 120,
      catching_up: true,
      health: { live: { ok: true }, ready: { ok: false, reason: 'behind' }, checks: {} },
    });
    info.da = { ...info.da, pending_blocks: 70 };
    const { shows, frame } = await mount({ source: new FakeSource({ info, blocks: blocksUpTo(100, now) }) });
    await shows('CHAIN [WARN]');
    expect(frame()).toContain('CATCHING UP');
    expect(frame()).toContain('DA [WARN]');
    expect(frame()).toContain('70% filling');
    expect(frame()).toContain('UNREADY: behind');
  });

  it('fail: DA unreachable with its remedy, peers gone, execution down', async () => {
    const now = Date.now();
    const info = healthyInfo(now, { execution: { type: 'evm', reachable: false, height: 7 } });
    info.health = { live: { ok: true }, ready: { ok: false, reason: 'DA unreachable' }, checks: { da: { ok: false, reason: 'DA unreachable' } } };
    info.da = { ...info.da, last_error: { message: 'connection refused', reason: 'connection_refused', remedy: DA_REMEDY.connection_refused, at: now } };
    info.p2p = { ...info.p2p, peers: [] };
    const { shows, frame } = await mount({ source: new FakeSource({ info, blocks: blocksUpTo(120, now) }) });
    await shows('DA [FAIL]');
    // The error and its remedy wrap inside the DA column rather than being cut off.
    const da = frame()
      .split('\n')
      .map((l) => l.slice(41).trim())
      .join(' ')
      .replace(/ +/g, ' ');
    expect(da).toContain('last error connection_refused: connection refused');
    expect(da).toContain(`remedy ${DA_REMEDY.connection_refused}`);
    expect(frame()).toContain('P2P [FAIL]');
    expect(frame()).toContain('EXECUTION [FAIL]');
    expect(frame()).toContain('UNREACHABLE');
  });

  it('unreachable: says so in place, keeps the last data as stale, and recovers', async () => {
    const { feed, source, shows, frame } = await mount();
    const snapshot = source.next;
    source.next = new NodeUnreachableError('127.0.0.1:7331');
    await feed.refresh();
    await shows('no node at 127.0.0.1:7331 — retrying');
    expect(frame()).toContain('CHAIN [stale]');
    expect(frame()).toContain('height     120');
    source.next = snapshot;
    await feed.refresh();
    await shows('CHAIN [ok]');
    expect(frame()).not.toContain('retrying');
  });

  it('unreachable from the start: no data, and the reason', async () => {
    const { shows, frame } = await mount({ source: new FakeSource(new NodeUnreachableError('127.0.0.1:7331')) });
    await shows('no node at 127.0.0.1:7331 — retrying');
    expect(frame()).toContain('CHAIN [FAIL]');
    expect(frame()).toContain('no data yet');
  });
});

describe('keys', () => {
  it('moves the selection with j/k and the arrows, opens a block with enter, and goes back with esc', async () => {
    const { app, shows, frame, source } = await mount();
    await shows('› ');
    app.stdin.write('j');
    await shows(/› +119 /);
    app.stdin.write(ARROW_DOWN);
    await shows(/› +118 /);
    app.stdin.write('k');
    app.stdin.write(ARROW_DOWN);
    app.stdin.write(ARROW_UP);
    await shows(/› +119 /);
    app.stdin.write(ENTER);
    await shows('BLOCK 119');
    expect(source.opened).toEqual([119]);
    expect(frame()).toContain('header 40, data 41');
    expect(frame()).toContain('greeting=hello');
    expect(frame()).toContain('(hashes in base64; hex from 84 columns)');
    app.stdin.write('j');
    await shows('BLOCK 118');
    app.stdin.write(ESC);
    await shows('CHAIN [ok]');
    expect(frame()).toMatch(/› +118 /);
  });

  it('shows the help on ? and closes it on esc', async () => {
    const { app, shows } = await mount();
    await shows('CHAIN');
    app.stdin.write('?');
    await shows('KEYS AND STATES');
    app.stdin.write(ESC);
    await shows('CHAIN [ok]');
  });

  it('q quits status --watch', async () => {
    const { app, shows, onQuit } = await mount();
    await shows('CHAIN');
    app.stdin.write('q');
    await waitFor(() => onQuit.mock.calls.length === 1, 'onQuit');
  });

  it('q in start --dashboard asks first; y stops the node, anything else keeps it running', async () => {
    const { app, shows, onStopNode, onQuit } = await mount({ mode: 'node' });
    await shows('CHAIN');
    app.stdin.write('q');
    await shows('Stop the node?');
    app.stdin.write('n');
    await shows('q quit');
    expect(onStopNode).not.toHaveBeenCalled();
    app.stdin.write('q');
    await shows('Stop the node?');
    app.stdin.write('y');
    await shows('stopping the node');
    expect(onStopNode).toHaveBeenCalledTimes(1);
    expect(onQuit).not.toHaveBeenCalled();
  });
});

/** The screen fits 80×24 as a terminal draws it: at most 23 rows (the last is left so drawing never scrolls), none wider than 80. */
function expectFits80x24(screen: string): string[] {
  const lines = screen.split('\n');
  expect(lines.length, screen).toBeLessThanOrEqual(23);
  for (const line of lines) expect(line.length, `${line}\n(${line.length} columns) in:\n${screen}`).toBeLessThanOrEqual(80);
  return lines;
}

/** The text of the DA column (right of the CHAIN | DA band), its wrapped lines joined. */
const daColumn = (screen: string) =>
  screen
    .split('\n')
    .slice(1, 12)
    .map((l) => l.slice(41).trim())
    .join(' ')
    .replace(/ +/g, ' ');

describe('at exactly 80×24', () => {
  it('a full node: the header keeps its state (never cut to REA…) however long the rest is', async () => {
    const now = Date.now();
    const info = fullNodeInfo(now, { chain_id: 'my-devnet-chain-1', role: 'full node (DA-only sync)' });
    const { frame, shows } = await mount({ source: new FakeSource({ info, blocks: blocksUpTo(120, now) }) });
    await shows('BLOCKS');
    const [header] = expectFits80x24(frame());
    expect(header).toMatch(/^noded {2}my-devnet-chain-1 {2}full node \(DA-only sync\) .*… {2}READY$/);
    expect(frame()).toContain('CHAIN [ok]');
    expect(daColumn(frame())).toContain('mode follows DA; submits none');
    expect(daColumn(frame())).not.toMatch(/pending|gas price/);
  });

  it('a long DA error: the remedy (before the raw error) and the gas price stay in view, the price to 4 significant digits', async () => {
    const now = Date.now();
    const info = healthyInfo(now);
    info.health = { live: { ok: true }, ready: { ok: true }, checks: { da: { ok: false, reason: 'DA submissions failing' } } };
    // A code 19 as celestia-node reports it: the raw error alone is longer than the DA column has rows for.
    const message =
      'rpc error: code = Unknown desc = broadcast tx failed: tx already exists in mempool: codespace sdk code 19: tx already in mempool (account celestia1qxyz0n5y7rcv9klm, sequence 4412, height 88123)';
    info.da = { ...info.da, gas_price: 0.0020513456789, last_error: { message, reason: 'already_in_mempool', remedy: DA_REMEDY.already_in_mempool, at: now } };
    const { frame, shows } = await mount({ source: new FakeSource({ info, blocks: blocksUpTo(120, now) }) });
    await shows('DA [FAIL]');
    expectFits80x24(frame());
    expect(frame()).not.toMatch(/DA \[FAIL\] \+\d+ more/);
    const da = daColumn(frame());
    expect(da).toContain(`remedy ${DA_REMEDY.already_in_mempool}`);
    expect(da).toMatch(/remedy .*last error already_in_mempool: rpc error.*…/);
    expect(da).toContain('gas price 0.002051');
    expect(da).not.toContain('0.0020513');
    // The band below keeps its titles: nothing drawn over them.
    expect(frame()).toContain('P2P [ok]');
    expect(frame()).toContain('HEALTH [ok]');
    expect(frame()).toMatch(/BLOCKS \[ok\] +1\/30/);
  });

  it('a block with many txs: its title on top, the txs that fit, a count of the rest, and nothing left of the screen under it', async () => {
    const now = Date.now();
    class ManyTxs extends FakeSource {
      override async block(height: number): Promise<BlockDetail> {
        const detail = await super.block(height);
        return { ...detail, txs: 300, txList: Array.from({ length: 300 }, (_, i) => `key${i}=${'v'.repeat(90)}`) };
      }
    }
    const { app, frame, shows } = await mount({ source: new ManyTxs({ info: healthyInfo(now), blocks: blocksUpTo(120, now) }) });
    await shows('BLOCKS');
    // Each key once the screen shows the last one took (a lone ESC written with the next key would read as one sequence).
    for (const [key, screen] of [
      [ENTER, 'BLOCK 120'],
      ['j', 'BLOCK 119'],
      [ESC, 'CHAIN [ok]'],
      [ARROW_DOWN, /› +118 /],
      [ENTER, 'BLOCK 118'],
    ] as const) {
      app.stdin.write(key);
      await shows(screen);
    }
    await shows(/BLOCK 118 .*300 txs/);
    await shows('more lines');
    const lines = expectFits80x24(frame());
    expect(lines).toHaveLength(23);
    expect(lines[1]).toMatch(/^BLOCK \d+ {2}\d\d:\d\d:\d\d {2}300 txs/);
    expect(lines[21]).toMatch(/^… \d+ more lines$/);
    expect(lines[22]).toMatch(/^esc back/);
    expect(lines.slice(2, 21).join('\n')).not.toMatch(/CHAIN|P2P|BLOCKS|›/);
  });

  it('the help screen', async () => {
    const { app, frame, shows } = await mount();
    await shows('CHAIN');
    app.stdin.write('?');
    await shows('KEYS AND STATES');
    expectFits80x24(frame());
  });
});

describe('below 80×24', () => {
  it.each([
    { columns: 79, rows: 24 },
    { columns: 80, rows: 23 },
    { columns: 70, rows: 20 },
  ])('says the terminal is too small at $columns×$rows instead of overlapping panels, and comes back when it grows', async (size) => {
    const { frame, shows, resize } = await mount({ size });
    await shows('terminal too small (need 80×24)');
    expect(frame()).toContain(`this one is ${size.columns}×${size.rows}`);
    expect(frame()).not.toContain('CHAIN');
    for (const line of frame().split('\n')) expect(line.length).toBeLessThanOrEqual(size.columns);
    resize({ columns: 80, rows: 24 });
    await shows('CHAIN [ok]');
    expect(frame()).not.toContain('too small');
  });
});
