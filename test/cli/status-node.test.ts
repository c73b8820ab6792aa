import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initHome } from '../../src/home/index.js';
import type { NodeStatusReport } from '../../src/client/index.js';
import { Daemon, freePort, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor, type RunResult } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { Homes } from '../helpers/homes.js';

/** `status` and `block get` read exactly one node: the one --node names, or the home's own, never a mix with the home's ports. */

const homes = new Homes();
const dirs: Array<ReturnType<typeof tempHome>> = [];
let a: Daemon;
let b: Daemon;
let aHome: string;
let bHome: string;
let da: DaServer;

beforeAll(async () => {
  aHome = await homes.create('one-a', true);
  bHome = await homes.create('one-b', true);
  [a, b] = await Promise.all([Daemon.start(aHome, ['--node.node.block_time', '100ms']), Daemon.start(bHome, ['--node.node.block_time', '100ms'])]);
  await waitFor(async () => (await latestHeight(a.rpc)) >= 2, 'node A at height 2');
  const daHome = tempHome('noded-one-da-');
  dirs.push(daHome);
  da = await DaServer.start(daHome.dir);
});
afterAll(async () => {
  await killAll();
  homes.cleanup();
  for (const d of dirs) d.cleanup();
});

/** A home that is not running, whose node.yml names these listeners. */
function homeAt(chainId: string, listeners: { rpc?: string; status?: string }): string {
  const h = tempHome('noded-one-');
  dirs.push(h);
  const host = (url: string) => url.replace(/^http:\/\//, '');
  initHome({
    home: h.dir,
    chainId,
    aggregator: false,
    force: false,
    config: { ...(listeners.rpc ? { 'rpc.address': host(listeners.rpc) } : {}), ...(listeners.status ? { 'rpc.status_address': host(listeners.status) } : {}) },
  });
  return h.dir;
}

function report(res: RunResult): NodeStatusReport {
  expect(res.code, `exit ${res.code}\n${res.stdout}\n${res.stderr}`).toBe(0);
  return JSON.parse(res.stdout) as NodeStatusReport;
}

function failure(res: RunResult): { code: string; message: string; exit: number } {
  expect(res.code, `exit ${res.code}\n${res.stdout}\n${res.stderr}`).toBe(1);
  const { error } = JSON.parse(res.stdout) as { error: { code: string; message: string; exit: number } };
  expect(error.exit).toBe(1);
  return error;
}

describe('status --node reads that node alone', () => {
  it('by its RPC listener or by its status listener, whatever the home config says', async () => {
    // The home's config points its status port at node B: none of it may leak into a report of node A.
    const home = homeAt('one-c', { status: b.status });
    const viaRpc = report(await runCli(['status', '--home', home, '--node', a.rpc, '--json']));
    const viaStatus = report(await runCli(['status', '--home', home, '--node', a.status, '--json']));
    for (const r of [viaRpc, viaStatus]) {
      expect(r).toMatchObject({ chain_id: 'one-a', role: 'aggregator', node: a.rpc });
      expect(r.health.live.text).toBe('OK');
    }
    expect(viaStatus.height).toBeGreaterThanOrEqual(viaRpc.height);
  });

  it('an address where something else answers: exit 1, NOT_A_NODE, naming the listeners to give', async () => {
    const error = failure(await runCli(['status', '--node', da.address, '--json']));
    expect(error.code).toBe('NOT_A_NODE');
    expect(error.message).toMatch(/^something answers at 127\.0\.0\.1:\d+, but not as a noded RPC or status listener \(GET \/node_info: HTTP \d+/);
    expect(error.message).toContain("give --node the node's rpc.address (7331 by default) or rpc.status_address (26657)");
  });
});

describe("status --home asks the home's own node", () => {
  it("the home's node: its report", async () => {
    // The test started A on ephemeral ports: its home's node.yml names them, as an operator's would.
    const yml = join(aHome, 'config', 'node.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/^ {2}address: 127\.0\.0\.1:7331$/m, `  address: ${a.rpc.replace('http://', '')}`));
    expect(report(await runCli(['status', '--home', aHome, '--json']))).toMatchObject({ chain_id: 'one-a', node: a.rpc });
  });

  it("a node of the same chain but not this home's (another peer id): exit 1, NOT_THIS_HOME", async () => {
    const home = homeAt('one-a', { rpc: a.rpc });
    const error = failure(await runCli(['status', '--home', home, '--json']));
    expect(error.code).toBe('NOT_THIS_HOME');
    expect(error.message).toMatch(/its peer id is 12D3KooW\w+, the home's peer id \(config\/node_key\.json\) is 12D3KooW\w+/);
    expect(error.message).not.toMatch(/chain id/);
  });

  it("another chain's node at the home's rpc.address: exit 1, NOT_THIS_HOME, naming the chain ids and peer ids", async () => {
    const home = homeAt('one-c', { rpc: a.rpc });
    const res = await runCli(['status', '--home', home, '--json']);
    const error = failure(res);
    expect(error.code).toBe('NOT_THIS_HOME');
    expect(error.message).toContain(
      `no node of home ${home} is running: the node answering at ${a.rpc.replace('http://', '')} (its rpc.address) is another node`,
    );
    expect(error.message).toContain(`its chain id is "one-a", the home's genesis says "one-c"`);
    expect(error.message).toContain(`start this home's node with \`noded start --home ${home}\`, or give --node URL`);
    const text = await runCli(['status', '--home', home]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toBe('');
    const block = failure(await runCli(['block', 'get', '--home', home, '--height', '1', '--json']));
    expect(block.code).toBe('NOT_THIS_HOME');
  });

  it('nothing at the home\'s rpc.address: exit 1 "no node of home … is running"', async () => {
    const home = homeAt('one-c', { rpc: `http://127.0.0.1:${await freePort()}`, status: b.status });
    const error = failure(await runCli(['status', '--home', home, '--json']));
    expect(error.code).toBe('NODE_UNREACHABLE');
    expect(error.message).toMatch(new RegExp(`^no node of home ${home} is running: nothing answers at 127\\.0\\.0\\.1:\\d+ \\(its rpc\\.address\\)`));
  });

  it("the home's node runs on other addresses than its config says: exit 1 naming its pid and --node", async () => {
    // B runs on the ephemeral ports the test gave it; its node.yml still says the default ones, here pointed at nothing.
    const yml = join(bHome, 'config', 'node.yml');
    const port = await freePort();
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/^ {2}address: 127\.0\.0\.1:7331$/m, `  address: 127.0.0.1:${port}`));
    const error = failure(await runCli(['status', '--home', bHome, '--json']));
    expect(error.code).toBe('NODE_UNREACHABLE');
    expect(error.message).toBe(
      `the node of home ${bHome} runs (pid ${b.pid}, data/node.pid) but nothing answers at 127.0.0.1:${port} (its rpc.address): it was started with other addresses; give --node URL with its RPC or status address`,
    );
  });

  it('a home that does not exist: exit 1 naming it, not whatever holds the default ports', async () => {
    const error = failure(await runCli(['status', '--home', `${aHome}-nope`, '--json']));
    expect(error).toMatchObject({ code: 'HOME_MISSING', message: expect.stringContaining(`no node home at ${aHome}-nope (config/node.yml is missing)`) });
  });
});

describe('block get --node', () => {
  it("by the status listener too: the block comes from that node's RPC", async () => {
    const res = await runCli(['block', 'get', '--node', a.status, '--height', '1', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe((await getBlockJson(a.rpc, { height: 1 })).text.trim());
  });
});
