import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { parseConfigText } from '../../src/config/index.js';
import { readGetBlockJson } from '../../src/rpc/json.js';
import { headerHash, type Block } from '../../src/types/index.js';
import { parseJsonExact } from '../../src/util/index.js';
import { initHome } from '../../src/home/index.js';
import { Daemon, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor, type RunResult } from '../helpers/daemon.js';

// The daemon's life (DESIGN.md §11): clean shutdown, the home lock, taken ports, bad config, --dev, lazy mode.

const homes: Array<ReturnType<typeof tempHome>> = [];

afterEach(async () => {
  await killAll();
});

afterAll(async () => {
  await killAll();
  for (const h of homes) h.cleanup();
});

function newHome(): string {
  const h = tempHome('noded-life-');
  homes.push(h);
  return h.dir;
}

/** An aggregator's home, written by the function `noded init` runs (the command has its own tests): these tests are about `start`. */
function aggregatorHome(): string {
  const dir = newHome();
  initHome({ home: dir, chainId: 'test-1', aggregator: true, force: false });
  return dir;
}

/**
 * `noded start` expected to fail: run to completion on ephemeral ports, errors unwrapped to one line each.
 * A bad value of a flag is bad usage (exit 2); anything else that stops a start is a failure (exit 1).
 */
async function startFails(home: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, exit = 1): Promise<RunResult & { message: string }> {
  const ports = [
    ['--node.rpc.address', '127.0.0.1:0'],
    ['--node.rpc.status_address', '127.0.0.1:0'],
    ['--node.p2p.listen_address', '/ip4/127.0.0.1/tcp/0'],
  ].filter(([flag]) => !args.includes(flag!));
  const res = await runCli(['start', '--home', home, ...ports.flat(), '--node.log.format', 'json', ...args], { OCLIF_COLUMNS: '1000', ...env });
  expect(res.code, `noded start ${args.join(' ')} should fail with exit ${exit}:\n${res.stderr}`).toBe(exit);
  // oclif prefixes error lines with " ›   "; keep just the text.
  const message = res.stderr
    .split('\n')
    .filter((l) => l.includes('›'))
    .map((l) => l.replace(/^\s*›\s*/, ''))
    .join('\n');
  return { ...res, message };
}

/** The JSON log record with message `msg`. */
function logRecord(d: Daemon, msg: string): Record<string, any> {
  const line = d.stderr.split('\n').find((l) => l.includes(`"msg":"${msg}"`));
  if (!line) throw new Error(`no "${msg}" log line in:\n${d.stderr}`);
  return JSON.parse(line);
}

async function fetchBlock(rpc: string, height: number): Promise<Block | null> {
  const r = await getBlockJson(rpc, { height });
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`GetBlock ${height}: HTTP ${r.status} ${r.text}`);
  return readGetBlockJson(parseJsonExact(r.text) as never).block!;
}

const hashHex = (b: Block) => Buffer.from(headerHash(b.header!.header!)).toString('hex');

/** Every file under `dir` with the sha256 of its contents, to tell whether a failed start touched the home. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const p = join(rel, name);
      if (statSync(join(dir, p)).isDirectory()) {
        out[p + '/'] = 'dir';
        walk(p);
      } else
        out[p] = createHash('sha256')
          .update(readFileSync(join(dir, p)))
          .digest('hex');
    }
  };
  walk('');
  return out;
}

/** Sends SIGTERM and expects a clean exit (code 0); returns the height the node stopped at. */
async function stopCleanly(d: Daemon): Promise<number> {
  d.child.kill('SIGTERM');
  expect(await d.exited, 'exit code after SIGTERM').toBe(0);
  return logRecord(d, 'node stopped').height as number;
}

describe('SIGTERM', () => {
  it('exits 0, removes the pid file, and keeps every block for the next start', async () => {
    const home = aggregatorHome();
    const pidFile = join(home, 'data', 'node.pid');
    const node = await Daemon.start(home, ['--node.node.block_time', '100ms']);
    expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(node.pid));
    await waitFor(async () => (await latestHeight(node.rpc)) >= 3, 'height 3');
    const hashes = new Map<number, string>();
    for (let h = 1; h <= 3; h++) hashes.set(h, hashHex((await fetchBlock(node.rpc, h))!));

    const stoppedAt = await stopCleanly(node);
    expect(stoppedAt).toBeGreaterThanOrEqual(3);
    expect(existsSync(pidFile), 'pid file removed').toBe(false);

    const again = await Daemon.start(home, ['--node.node.block_time', '100ms']);
    expect(logRecord(again, 'node started').height, 'resumes at the height it stopped at').toBe(stoppedAt);
    const next = await waitFor(() => fetchBlock(again.rpc, stoppedAt + 1), `block ${stoppedAt + 1}`);
    const last = (await fetchBlock(again.rpc, stoppedAt))!;
    expect(Buffer.from(next.header!.header!.lastHeaderHash).toString('hex')).toBe(hashHex(last));
    for (const [h, hash] of hashes) expect(hashHex((await fetchBlock(again.rpc, h))!), `block ${h}`).toBe(hash);
    for (let h = 1; h <= stoppedAt; h++) expect(await fetchBlock(again.rpc, h), `block ${h}`).not.toBeNull();
  });
});

describe('a second start on the same home', () => {
  it('exits 1 naming the pid of the running node, which keeps producing', async () => {
    const home = aggregatorHome();
    const first = await Daemon.start(home, ['--node.node.block_time', '100ms']);
    await waitFor(async () => (await latestHeight(first.rpc)) >= 1, 'height 1');

    const second = await startFails(home);
    expect(second.message).toContain(`already in use by process ${first.pid}`);
    expect(readFileSync(join(home, 'data', 'node.pid'), 'utf8').trim(), 'pid file still the first node').toBe(String(first.pid));

    const h = await latestHeight(first.rpc);
    await waitFor(async () => (await latestHeight(first.rpc)) >= h + 2, `the first node to go past height ${h + 1}`);
    expect(first.child.exitCode).toBeNull();
  });
});

describe('a port held by another process', () => {
  let home: string;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    home = aggregatorHome();
    server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((r) => server?.close(r));
  });

  for (const flag of ['--node.rpc.address', '--node.rpc.status_address']) {
    it(`${flag} → exit 1 naming the port and the flag`, async () => {
      const res = await startFails(home, [flag, `127.0.0.1:${port}`]);
      expect(res.message).toContain(`port ${port} is already in use`);
      expect(res.message).toContain(`with ${flag} `);
      expect(existsSync(join(home, 'data', 'node.pid')), 'pid file removed').toBe(false);
    });
  }

  it('--node.p2p.listen_address → exit 1 naming the port and the flag', async () => {
    const res = await startFails(home, ['--node.p2p.listen_address', `/ip4/127.0.0.1/tcp/${port}`]);
    expect(res.message).toContain(`port ${port} is already in use`);
    expect(res.message).toContain('with --node.p2p.listen_address ');
    expect(existsSync(join(home, 'data', 'node.pid')), 'pid file removed').toBe(false);
  });

  it('leaves the home usable: a start on free ports works', async () => {
    const node = await Daemon.start(home, ['--node.node.block_time', '100ms']);
    await waitFor(async () => (await latestHeight(node.rpc)) >= 1, 'height 1');
  });
});

describe('bad config at start', () => {
  let home: string;
  let yml: string;
  let goodYml: string;
  let height: number;

  beforeAll(async () => {
    home = aggregatorHome();
    yml = join(home, 'config', 'node.yml');
    goodYml = readFileSync(yml, 'utf8');
    const node = await Daemon.start(home, ['--node.node.block_time', '100ms']);
    await waitFor(async () => (await latestHeight(node.rpc)) >= 2, 'height 2');
    height = await stopCleanly(node);
  });

  afterEach(() => {
    writeFileSync(yml, goodYml);
  });

  /** Runs a start that must fail and checks it left the home as it was. */
  async function failsUntouched(args: string[], env: NodeJS.ProcessEnv = {}, exit = 1): Promise<string> {
    const before = snapshot(home);
    expect(Object.keys(before).some((p) => p.startsWith('data/store/'))).toBe(true);
    const res = await startFails(home, args, env, exit);
    expect(snapshot(home), 'home untouched').toEqual(before);
    expect(res.stderr).not.toContain('"node started"');
    return res.message;
  }

  it('broken YAML → the file, line and column', async () => {
    const lines = goodYml.split('\n');
    const i = lines.indexOf('  block_time: 1s');
    expect(i).toBeGreaterThan(0);
    lines[i] = '  block_time: 1s: 2s';
    writeFileSync(yml, lines.join('\n'));
    const message = await failsUntouched([]);
    expect(message).toContain(`${yml}:${i + 1}:15`);
    expect(message).toMatch(/invalid YAML/);
  });

  it('unknown key node.blok_time → suggests node.block_time', async () => {
    writeFileSync(yml, goodYml.replace(/^ {2}block_time: 1s$/m, '  blok_time: 1s'));
    const message = await failsUntouched([]);
    expect(message).toContain(yml);
    expect(message).toContain('unknown key "node.blok_time"');
    expect(message).toContain('did you mean "node.block_time"');
  });

  it('--node.node.block_time fast → bad usage (2) naming the flag, the value and the form', async () => {
    const message = await failsUntouched(['--node.node.block_time', 'fast'], {}, 2);
    expect(message).toContain('--node.node.block_time');
    expect(message).toContain('got "fast"');
    expect(message).toMatch(/expected a duration like 500ms/);
  });

  it('--node.node.max_pending_blocks -1 → bad usage (2) naming the flag and the allowed range', async () => {
    const message = await failsUntouched(['--node.node.max_pending_blocks', '-1'], {}, 2);
    expect(message).toContain('--node.node.max_pending_blocks');
    expect(message).toContain('got -1');
    expect(message).toMatch(/expected an integer >= 0/);
  });

  it('NODED_NODE_BLOCK_TIME=xyz → names the env var', async () => {
    const message = await failsUntouched([], { NODED_NODE_BLOCK_TIME: 'xyz' });
    expect(message).toContain('NODED_NODE_BLOCK_TIME');
    expect(message).toContain('got "xyz"');
  });

  it('after all that, the store still holds its blocks', async () => {
    const node = await Daemon.start(home, ['--node.node.block_time', '100ms']);
    expect(logRecord(node, 'node started').height).toBe(height);
    await waitFor(() => fetchBlock(node.rpc, height + 1), `block ${height + 1}`);
    for (let h = 1; h <= height; h++) expect(await fetchBlock(node.rpc, h), `block ${h}`).not.toBeNull();
  });
});

describe('a missing home', () => {
  it('start → exit 1 saying to run noded init, and creates nothing', async () => {
    const home = join(newHome(), 'nowhere');
    const res = await startFails(home);
    expect(res.message).toContain(`no node home at ${home}`);
    expect(res.message).toContain(`noded init --home ${home}`);
    expect(existsSync(home)).toBe(false);
  });
});

describe('start --dev', () => {
  it('initialises the devnet home on first use and reuses it after', async () => {
    const home = join(newHome(), 'devnet');
    const first = await Daemon.start(home, ['--dev', '--node.node.block_time', '100ms']);
    expect(first.stderr).toContain(`Initialised devnet home ${home}`);
    const genesis = readFileSync(join(home, 'config', 'genesis.json'), 'utf8');
    expect(JSON.parse(genesis).chain_id).toBe('noded-devnet');
    expect(parseConfigText(readFileSync(join(home, 'config', 'node.yml'), 'utf8'), 'node.yml').p2p.listen_address, 'peers on loopback only').toBe(
      '/ip4/127.0.0.1/tcp/7676',
    );
    expect(logRecord(first, 'node started')).toMatchObject({ role: 'aggregator', height: 0, chainId: 'noded-devnet' });
    await waitFor(async () => (await latestHeight(first.rpc)) >= 2, 'height 2');
    const block1 = hashHex((await fetchBlock(first.rpc, 1))!);
    const stoppedAt = await stopCleanly(first);

    const second = await Daemon.start(home, ['--dev', '--node.node.block_time', '100ms']);
    expect(second.stderr).not.toContain('Initialised devnet home');
    expect(readFileSync(join(home, 'config', 'genesis.json'), 'utf8'), 'same genesis').toBe(genesis);
    expect(logRecord(second, 'node started').height).toBe(stoppedAt);
    await waitFor(() => fetchBlock(second.rpc, stoppedAt + 1), `block ${stoppedAt + 1}`);
    expect(hashHex((await fetchBlock(second.rpc, 1))!), 'same chain').toBe(block1);
  });
});

describe('lazy mode', () => {
  it('makes blocks only for txs, or after lazy_block_interval', async () => {
    const home = aggregatorHome();
    const lazy = (interval: string) =>
      Daemon.start(home, ['--node.node.lazy_mode', '--node.node.block_time', '50ms', '--node.node.lazy_block_interval', interval]);
    // An interval no test outlives: any block is one a tx asked for.
    const node = await lazy('1h');
    const producing = await waitFor(
      () => node.stderr.includes('"msg":"block production started"') && logRecord(node, 'block production started'),
      'block production',
    );

    // No tx waits: while ten block times pass after production started, no block comes.
    const startedMs = Date.parse(producing.time);
    await waitFor(() => Date.now() > startedMs + 10 * 50, 'ten block times after production started');
    expect(await latestHeight(node.rpc), 'no block while no tx waits').toBe(0);

    // A tx: the next block holds it.
    const res = await fetch(`${node.rpc}/tx`, { method: 'POST', body: 'lazy=yes' });
    expect(res.status, await res.text()).toBe(200);
    const b1 = await waitFor(() => fetchBlock(node.rpc, 1), 'a block for the tx');
    expect(b1.data!.txs.map((t) => Buffer.from(t).toString())).toEqual(['lazy=yes']);
    expect(await (await fetch(`${node.rpc}/kv/lazy`)).text()).toBe('yes');
    const stoppedAt = await stopCleanly(node);

    // With a short interval and no txs, empty blocks come one interval apart, not one block time apart.
    const LAZY_MS = 1_000;
    const again = await lazy(`${LAZY_MS}ms`);
    const [b2, b3] = [
      await waitFor(() => fetchBlock(again.rpc, stoppedAt + 1), 'a block after lazy_block_interval'),
      await waitFor(() => fetchBlock(again.rpc, stoppedAt + 2), 'the next one'),
    ];
    expect([b2.data!.txs, b3.data!.txs]).toEqual([[], []]);
    expect(b3.header!.header!.time - b2.header!.header!.time, 'not before the interval').toBeGreaterThanOrEqual(BigInt(LAZY_MS) * 1_000_000n);
  });
});
