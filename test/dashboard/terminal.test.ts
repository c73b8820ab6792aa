import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dashboardLogFile } from '../../src/dashboard/index.js';
import { Daemon, freePort, killAll, runCli, waitFor } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { Homes } from '../helpers/homes.js';
import { TmuxTerminal, requireTmux } from './tmux.js';

const homes = new Homes();
const terminals: TmuxTerminal[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  await killAll();
  homes.cleanup();
});

function terminal(args: string[], env: Record<string, string> = {}, size: { columns: number; rows: number } = { columns: 80, rows: 24 }): TmuxTerminal {
  const t = new TmuxTerminal(args, { env, ...size });
  terminals.push(t);
  return t;
}

/** Waits for the screen to match, and returns the match. */
function screenShows(t: TmuxTerminal, pattern: RegExp, what: string, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  let last = '';
  return waitFor(
    () => {
      last = t.capture();
      return last.match(pattern);
    },
    `${what}; the screen was:\n${last}`,
    timeoutMs,
    100,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${last}`);
  });
}

const heightOn = async (t: TmuxTerminal) => Number((await screenShows(t, /height +(\d+) +best/, 'the CHAIN panel'))[1]);

/** After the command exits: its status, and the terminal it left (cursor shown, main screen, not raw). */
async function expectCleanExit(t: TmuxTerminal): Promise<void> {
  const exit = await screenShows(t, /EXIT=(\d+)/, 'the command to exit');
  expect(exit[1]).toBe('0');
  const modes = t.capture();
  // stty -a lists each mode, with a leading '-' when it is off: raw mode turns icanon and echo off.
  expect(modes).toMatch(/(^|\s)icanon(\s|$)/m);
  expect(modes).toMatch(/(^|\s)echo(\s|$)/m);
  expect(t.display('#{cursor_flag} #{alternate_on}')).toBe('1 0');
}

describe('without a terminal', () => {
  it('status --watch exits 2 and points at --json; with --json the error is the JSON envelope', async () => {
    const home = await homes.create('dash-notty', true);
    const plain = await runCli(['status', '--watch', '--home', home]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('--watch needs a terminal; use `noded status --json`');
    const json = await runCli(['status', '--watch', '--json', '--home', home]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'NOT_A_TERMINAL', message: '--watch needs a terminal; use `noded status --json`', exit: 2 } });
  });

  it('start --dashboard exits 2 before starting anything', async () => {
    const home = await homes.create('dash-notty-start', true);
    const res = await runCli(['start', '--dashboard', '--home', home]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--dashboard needs a terminal');
    expect(res.stderr).not.toContain('node started');
  });
});

describe('in a real terminal (tmux)', () => {
  beforeAll(requireTmux);

  it('status --watch: says no node is there, then shows the devnet live (height rising, DA pending, peers); q exits 0 and restores the terminal', async () => {
    const { aggregator, full } = await homes.chain('dash-watch');
    const [rpcPort, statusPort] = [await freePort(), await freePort()];
    const rpc = `127.0.0.1:${rpcPort}`;
    const t = terminal(['status', '--watch', '--home', aggregator, '--node', rpc], { NODED_RPC_STATUS_ADDRESS: `127.0.0.1:${statusPort}` });
    await screenShows(t, new RegExp(`no node at ${rpc.replace(/\./g, '\\.')} — retrying`), 'the dashboard to say no node answers');

    const agg = await Daemon.start(aggregator, ['--node.rpc.address', rpc, '--node.rpc.status_address', `127.0.0.1:${statusPort}`]);
    const follower = await Daemon.start(full[0]!, ['--no-node.da.local', '--node.da.address', agg.da, '--node.p2p.peers', agg.p2p]);
    await screenShows(t, /CHAIN \[ok\]/, 'the dashboard to recover once the node answers');
    const first = await heightOn(t);
    await waitFor(async () => (await heightOn(t)) > first, 'the height on screen to rise between two captures');
    await screenShows(t, /pending \d+ \/ 100/, 'the DA pending count against max_pending_blocks');
    await screenShows(t, /peers +1 connected/, 'the peer count');
    const followerId = follower.p2p.split('/p2p/')[1]!;
    await screenShows(t, new RegExp(`${followerId.slice(0, 8)}…${followerId.slice(-6)}`), 'the peer in the list');

    // The same object the dashboard drew is what /node_info serves.
    const info = (await (await fetch(`${agg.status}/node_info`)).json()) as any;
    expect(info.result).toMatchObject({ chain_id: 'dash-watch', role: 'aggregator', da: { max_pending_blocks: 100 }, p2p: { peers: [{ id: followerId }] } });

    t.send('q');
    await expectCleanExit(t);
  });

  it('start --dashboard: the node in its own process, log in <home>/logs/node.log; q then y stops it cleanly and the next start resumes', async () => {
    const home = await homes.create('dash-start', true);
    const t = terminal([
      'start',
      '--dashboard',
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
      '--node.da.block_time',
      '200ms',
    ]);
    await screenShows(t, /this process +READY/, 'the in-process dashboard');
    const first = await heightOn(t);
    await waitFor(async () => (await heightOn(t)) > first, 'the height to rise');
    await screenShows(t, /pending \d+ \/ 100/, 'the DA pending count');
    await screenShows(t, /LOG \[ok\]/, 'the log panel');
    await screenShows(t, /\d\d:\d\d:\d\d INFO \[da-submitter\] sub/, 'the log panel to tail the node log');

    t.send('q');
    await screenShows(t, /Stop the node\?/, 'the dashboard to ask before stopping');
    t.send('y');
    await expectCleanExit(t);
    expect(t.capture()).toContain(`node stopped (exit 0); its log is ${dashboardLogFile(home)}`);

    const log = readFileSync(dashboardLogFile(home), 'utf8');
    expect(log).toContain('shutting down {"reason":"stopped from the dashboard"}');
    const stoppedAt = Number(/node stopped \{"height":(\d+)\}/.exec(log)?.[1]);
    expect(stoppedAt).toBeGreaterThan(first);

    const again = await Daemon.start(home);
    const started = JSON.parse(again.stderr.split('\n').find((l) => l.includes('"node started"'))!);
    expect(started.height).toBe(stoppedAt);
  });

  it('status --watch at 80×24 and 70×20: every panel and the block view fit 80×24; smaller, it says so, and it comes back when the terminal grows', async () => {
    const home = await homes.create('dash-sizes', true);
    const [rpcPort, statusPort] = [await freePort(), await freePort()];
    const rpc = `127.0.0.1:${rpcPort}`;
    const status = `127.0.0.1:${statusPort}`;
    const da = await DaServer.start(await homes.create('dash-sizes-da', false));
    const node = await Daemon.start(home, [
      '--no-node.da.local',
      '--node.da.address',
      da.address,
      '--node.rpc.address',
      rpc,
      '--node.rpc.status_address',
      status,
    ]);
    const t = terminal(['status', '--watch', '--home', home, '--node', rpc], { NODED_RPC_STATUS_ADDRESS: status }, { columns: 70, rows: 20 });
    const tooSmall = await screenShows(t, /terminal too small \(need 80×24\)/, 'the dashboard to say the terminal is too small').catch((err: Error) => {
      throw new Error(`${err.message}\nnode stderr:\n${node.stderr}`);
    });
    expect(tooSmall.input).toContain('this one is 70×20');
    expect(t.capture()).not.toContain('CHAIN');

    t.resize(80, 24);
    await screenShows(t, /BLOCKS \[ok\] +1\//, 'the dashboard once the terminal is 80×24');
    const main = t.capture().split('\n');
    expect(main[0]).toMatch(/^noded {2}dash-sizes {2}aggregator .* READY *$/);
    for (const title of ['CHAIN [ok]', 'DA [', 'P2P [', 'HEALTH [', 'EXECUTION [', 'CHILDREN [', 'BLOCKS [ok]', 'WARNINGS [']) {
      expect(
        main.filter((l) => l.includes(title)),
        `${title} once in:\n${main.join('\n')}`,
      ).toHaveLength(1);
    }
    expect(main.join('\n')).not.toContain('too small');

    t.send('Enter');
    const block = await screenShows(t, /^BLOCK (\d+) /m, 'the block view');
    const view = t.capture().split('\n');
    expect(view[1], view.join('\n')).toMatch(/^BLOCK \d+ /);
    expect(view.join('\n')).not.toMatch(/CHAIN|P2P|BLOCKS \[/);
    t.send('Escape');
    await screenShows(t, /CHAIN \[ok\]/, 'the main screen again');
    expect(t.capture()).not.toContain(`BLOCK ${block[1]} `);

    // Code 19 on every submission: the node raises its gas price each time, the raw error is longer than the DA column.
    await da.setFaults({ submitError: 'already_in_mempool' });
    await screenShows(t, /remedy +check the balance, fund the\s*$/m, 'the remedy first when the DA error is long', 60_000);
    await screenShows(t, /gas price +0\.00[1-9]\d{0,3}\s*$/m, 'a raised gas price, rounded to 4 significant digits', 60_000);
    const failing = t.capture();
    expect(failing).toMatch(/^.{41} {2}account, or raise --node\.da\.gas_price\s*$/m);
    expect(failing).toMatch(/last error already_in_mempool:[^]*…/);
    expect(failing).not.toMatch(/DA \[\w+\] \+\d+ more/);
    expect(failing.split('\n').filter((l) => l.includes('P2P [') || l.includes('BLOCKS ['))).toHaveLength(2);

    t.resize(70, 20);
    await screenShows(t, /terminal too small \(need 80×24\)/, 'the message again after shrinking');
    expect(t.capture()).not.toContain('CHAIN');
    t.send('q');
    await expectCleanExit(t);
  });
});
