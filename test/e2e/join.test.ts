import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Daemon, fetchJson, freePort, killAll, latestHeight, runCli, tempHome, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';

// Joining a running chain: `init --join`, and a full node with another chain's genesis (issue 16, item 3).

const homes = new Homes();
const temps: Array<ReturnType<typeof tempHome>> = [];
const servers: Server[] = [];
let aggregatorHome = '';
let agg: Daemon;

beforeAll(async () => {
  aggregatorHome = await homes.create('join-1', true);
  agg = await Daemon.start(aggregatorHome, ['--node.node.block_time', '200ms']);
  await waitFor(async () => (await latestHeight(agg.rpc)) >= 2, 'the aggregator to make block 2', 30_000);
}, 120_000);

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

afterAll(async () => {
  await killAll();
  homes.cleanup();
  for (const t of temps.splice(0)) t.cleanup();
});

/** A path for a home that does not exist yet (so a failed init can be seen to leave nothing). */
function newHomePath(): string {
  const t = tempHome();
  temps.push(t);
  return join(t.dir, 'home');
}

/** `noded init --join url --json` that must fail: it leaves no home behind, and exits with the exit its envelope names. */
async function joinTo(url: string): Promise<{ code: string; message: string; exit: number }> {
  const home = newHomePath();
  const res = await runCli(['init', '--join', url, '--home', home, '--json']);
  expect(existsSync(home), `${url} left ${home} behind`).toBe(false);
  const error = JSON.parse(res.stdout).error;
  expect(res.code, res.stdout).toBe(error.exit);
  return error as { code: string; message: string; exit: number };
}

/** Full-node flags: the aggregator's built-in DA, or with `da: false` a DA address nothing answers. */
async function followArgs(opts: { da: boolean; peers?: string }): Promise<string[]> {
  const da = opts.da ? agg.da : `http://127.0.0.1:${await freePort()}`;
  return [
    '--no-node.da.local',
    '--node.da.address',
    da,
    '--node.da.request_timeout',
    '1s',
    ...(opts.peers === undefined ? [] : ['--node.p2p.peers', opts.peers]),
  ];
}

async function caughtUp(node: Daemon, what: string): Promise<void> {
  const target = await latestHeight(agg.rpc);
  await waitFor(async () => (await latestHeight(node.rpc)) >= target, `${what} at the aggregator's height ${target}\n${node.stderr}`, 60_000, 100);
}

const hostPort = (url: string) => new URL(url).host;

describe('noded init --join', () => {
  it('writes a full-node home from the aggregator that syncs to its height over P2P, and another over DA; joining such a full node is refused (1)', async () => {
    const p2pHome = newHomePath();
    const res = await runCli(['init', '--join', agg.rpc, '--home', p2pHome, '--da-address', agg.da, '--json']);
    expect(res.code, res.stderr + res.stdout).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ chain_id: 'join-1', aggregator: false, joined: { url: agg.rpc, peer: agg.p2p, da_address: agg.da } });
    expect(readFileSync(join(p2pHome, 'config', 'genesis.json'), 'utf8')).toBe(readFileSync(join(aggregatorHome, 'config', 'genesis.json'), 'utf8'));
    const yml = readFileSync(join(p2pHome, 'config', 'node.yml'), 'utf8');
    expect(yml).toMatch(/aggregator: false/);
    expect(yml).toContain(agg.p2p);

    const plainHome = newHomePath();
    const plain = await runCli(['init', '--join', agg.rpc, '--home', plainHome, '--da-address', agg.da]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain(`Peer (p2p.peers): ${agg.p2p}`);
    expect(plain.stdout).toContain(`Start it with: noded start --home ${plainHome}`);

    // P2P alone (DA unreachable), and DA alone (no peers): each reaches the aggregator's height.
    const overP2P = await Daemon.start(p2pHome, await followArgs({ da: false }));
    const overDa = await Daemon.start(plainHome, ['--no-node.da.local', '--node.da.address', agg.da, '--node.p2p.peers', '']);
    await caughtUp(overP2P, 'the joined node over P2P');
    await caughtUp(overDa, 'the joined node over DA');
    expect(overP2P.stderr).not.toContain('GENESIS_MISMATCH');
    // A full node of the chain (joined itself) is not the aggregator: joining it is refused.
    expect(await joinTo(overDa.rpc)).toMatchObject({ code: 'JOIN_NOT_AGGREGATOR', exit: 1, message: expect.stringContaining('is a full node') });
    await Promise.all([overP2P.kill(), overDa.kill()]);
  }, 240_000);

  it('refuses a bad URL (2), an unreachable node, the status listener and a genesis that does not verify (1), writing nothing (a full node: the test above)', async () => {
    expect(await joinTo('127.0.0.1:7331')).toMatchObject({ code: 'JOIN_BAD_URL', exit: 2, message: expect.stringContaining('expected') });
    expect(await joinTo(`${agg.rpc}/genesis`)).toMatchObject({ code: 'JOIN_BAD_URL', exit: 2 });
    const badDa = newHomePath();
    const da = await runCli(['init', '--join', agg.rpc, '--da-address', '127.0.0.1:26658', '--home', badDa, '--json']);
    expect(da.code, da.stdout).toBe(2);
    expect(JSON.parse(da.stdout).error).toMatchObject({
      code: 'INVALID_FLAG',
      message: '--da-address: got "127.0.0.1:26658", expected an http(s) URL like http://127.0.0.1:26658',
    });
    expect(existsSync(badDa)).toBe(false);
    expect(await joinTo(`http://127.0.0.1:${await freePort()}`)).toMatchObject({
      code: 'JOIN_UNREACHABLE',
      exit: 1,
      message: expect.stringContaining('no node answers'),
    });
    expect(await joinTo(agg.status)).toMatchObject({ code: 'JOIN_NOT_A_NODE', exit: 1, message: expect.stringContaining('status listener') });
    const usageHome = newHomePath();
    const usage = await runCli(['init', '--join', agg.rpc, '--aggregator', '--home', usageHome, '--json']);
    expect(usage.code, usage.stdout).toBe(2);
    expect(JSON.parse(usage.stdout).error).toMatchObject({
      code: 'USAGE',
      exit: 2,
      message: '--join takes the chain from the aggregator: leave out --aggregator',
    });
    expect(existsSync(usageHome)).toBe(false);

    // The aggregator behind a proxy whose genesis and signer name another proposer: block 1 does not verify.
    const forged = Buffer.alloc(32, 7).toString('base64');
    const genesis = { ...JSON.parse(readFileSync(join(aggregatorHome, 'config', 'genesis.json'), 'utf8')), proposer_address: forged };
    const forward = async (req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      if (req.url === '/genesis') return res.end(JSON.stringify(genesis));
      if (req.url === '/node.v1.ConfigService/GetSignerInfo') return res.end(JSON.stringify({ address: forged }));
      const upstream = await fetch(`${agg.rpc}${req.url}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body: req.method === 'POST' ? body : undefined,
      });
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(await upstream.text());
    };
    // A failed forward drops the connection, so `noded join` reports it rather than waiting.
    const proxy = createServer((req, res) => void forward(req, res).catch((err: Error) => res.destroy(err)));
    servers.push(proxy);
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as { port: number }).port;
    expect(await joinTo(`http://127.0.0.1:${port}`)).toMatchObject({
      code: 'JOIN_BAD_GENESIS',
      exit: 1,
      message: expect.stringMatching(/does not verify: its block 1 is not the genesis proposer's \(proposer is not the chain's aggregator\)/),
    });
  }, 240_000);
});

describe("a full node with another chain's genesis", () => {
  it("logs GENESIS_MISMATCH once, is unready and fails the doctor's genesis check; with the aggregator's genesis it syncs", async () => {
    // Its own `noded init` of the same chain id: the genesis names this node as the proposer.
    const home = await homes.create('join-1', false);
    const node = await Daemon.start(home, await followArgs({ da: true, peers: agg.p2p }));
    const ready = await waitFor(
      async () => {
        const r = await fetchJson(`${node.rpc}/health/ready`);
        return r.status === 503 && r.text.includes('genesis mismatch') ? r.text : null;
      },
      `readiness to name the genesis mismatch\n${node.stderr}`,
      30_000,
      100,
    );
    expect(ready).toMatch(/^UNREADY: genesis mismatch: proposer address: this home's genesis says \S+, the chain's blocks are signed by \S+$/);

    // Over several more blocks, heard from both peers and DA, one line.
    const from = await latestHeight(agg.rpc);
    await waitFor(async () => (await latestHeight(agg.rpc)) >= from + 10, 'the aggregator to make 10 more blocks', 30_000);
    // The status line repeats the last error as its lastError: the error line itself comes once.
    const lines = node.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((l) => l.code === 'GENESIS_MISMATCH');
    expect(lines, node.stderr).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatchObject({ level: 50, code: 'GENESIS_MISMATCH', remedy: expect.stringContaining("copy the aggregator's config/genesis.json") });
    expect(line.differences).toMatch(/^proposer address: /);
    // Before it the first block of that chain may be rejected as any block of another proposer (one alone proves no chain); none after.
    expect(node.stderr.slice(node.stderr.indexOf('GENESIS_MISMATCH'))).not.toContain("proposer is not the chain's aggregator");
    // Nothing else repeats the mismatch either, but the status line's lastError.
    const repeats = node.stderr.split('\n').filter((l) => l.includes('genesis mismatch') && !l.includes('"module":"status"'));
    expect(repeats, repeats.join('\n')).toEqual([]);
    expect(await latestHeight(node.rpc)).toBe(0);

    const doctor = await runCli([
      'doctor',
      '--home',
      home,
      '--check',
      'genesis',
      '--json',
      '--node.rpc.address',
      hostPort(node.rpc),
      '--node.rpc.status_address',
      hostPort(node.status),
    ]);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(1);
    const [check] = JSON.parse(doctor.stdout);
    expect(check).toMatchObject({ id: 'genesis', status: 'fail', message: expect.stringContaining('genesis mismatch: proposer address') });
    expect(check.remedy).toContain(`copy the aggregator's config/genesis.json to ${join(home, 'config', 'genesis.json')} and restart the node`);

    // The remedy: the aggregator's genesis, then a restart; DA alone (no peers) brings it to the chain's height.
    expect(await node.kill('SIGTERM'), node.stderr).toBe(0);
    copyFileSync(join(aggregatorHome, 'config', 'genesis.json'), join(home, 'config', 'genesis.json'));
    const fixed = await Daemon.start(home, await followArgs({ da: true, peers: '' }));
    await caughtUp(fixed, "the node with the aggregator's genesis");
    await waitFor(async () => (await fetchJson(`${fixed.rpc}/health/ready`)).status === 200, `readiness after the remedy\n${fixed.stderr}`, 30_000, 100);
    expect(fixed.stderr).not.toContain('GENESIS_MISMATCH');
    const after = await runCli([
      'doctor',
      '--home',
      home,
      '--check',
      'genesis',
      '--json',
      '--node.rpc.address',
      hostPort(fixed.rpc),
      '--node.rpc.status_address',
      hostPort(fixed.status),
    ]);
    expect(JSON.parse(after.stdout)[0], after.stdout).toMatchObject({ id: 'genesis', status: 'ok' });
    await fixed.kill();
  }, 240_000);
});
