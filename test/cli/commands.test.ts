import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfigText } from '../../src/config/index.js';
import { initHome } from '../../src/home/index.js';
import { Daemon, freePort, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor } from '../helpers/daemon.js';

const homes: Array<ReturnType<typeof tempHome>> = [];
const newHome = () => {
  const h = tempHome();
  homes.push(h);
  return h.dir;
};

afterAll(async () => {
  await killAll();
  for (const h of homes) h.cleanup();
});

describe('noded --help and --version', () => {
  it('every command has help with examples', async () => {
    for (const cmd of [['init'], ['start'], ['status'], ['block', 'get'], ['da', 'serve']]) {
      const res = await runCli([...cmd, '--help']);
      expect(res.code, cmd.join(' ')).toBe(0);
      expect(res.stdout, cmd.join(' ')).toMatch(/EXAMPLES/);
      if (cmd[0] === 'start') {
        expect(res.stdout).toContain('--node.node.block_time');
        expect(res.stdout).toContain('--[no-]node.node.aggregator');
      }
    }
  });

  it('prints its version', async () => {
    const res = await runCli(['--version']);
    expect(res.stdout).toMatch(/^noded\/\d+\.\d+\.\d+ /);
  });
});

describe('noded init', () => {
  it('writes the home with key files 0600 and a node.yml that parses', async () => {
    const home = newHome();
    const res = await runCli(['init', '--home', home, '--chain-id', 'cli-1', '--aggregator']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Initialised an aggregator home for chain cli-1/);
    expect(res.stdout).toMatch(/P2P address: \/ip4\/127\.0\.0\.1\/tcp\/7676\/p2p\/12D3KooW/);
    for (const f of ['signer.json', 'node_key.json']) {
      expect(statSync(join(home, 'config', f)).mode & 0o777, f).toBe(0o600);
    }
    expect(statSync(join(home, 'data', 'cache')).isDirectory()).toBe(true);
    const yml = readFileSync(join(home, 'config', 'node.yml'), 'utf8');
    expect(parseConfigText(yml, 'node.yml').node.aggregator).toBe(true);
    expect(yml).toMatch(/# .*block/i);
    const genesis = JSON.parse(readFileSync(join(home, 'config', 'genesis.json'), 'utf8'));
    expect(Object.keys(genesis).sort()).toEqual([
      'chain_id',
      'da_epoch_forced_inclusion',
      'da_start_height',
      'initial_height',
      'proposer_address',
      'start_time',
    ]);
    expect(genesis.chain_id).toBe('cli-1');
  });

  it('refuses an existing home unless --force, and reports as JSON', async () => {
    const home = newHome();
    expect((await runCli(['init', '--home', home])).code).toBe(0);
    const again = await runCli(['init', '--home', home, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error).toMatchObject({ code: 'HOME_EXISTS', exit: 1 });
    expect(JSON.parse(again.stdout).error.message).toMatch(/--force/);
    const forced = await runCli(['init', '--home', home, '--force', '--json', '--chain-id', 'other-2']);
    expect(forced.code, forced.stderr).toBe(0);
    const out = JSON.parse(forced.stdout);
    expect(out.chain_id).toBe('other-2');
    expect(out.created.length).toBeGreaterThanOrEqual(7);
    // Every key snake_case, as the node's other JSON answers.
    expect(Object.keys(out).sort()).toEqual(['aggregator', 'chain_id', 'created', 'home', 'p2p_address', 'peer_id', 'signer_address']);
  });

  it('rejects a bad --chain-id with exit 2 and the expected form', async () => {
    const res = await runCli(['init', '--home', newHome(), '--chain-id', 'has spaces!']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--chain-id: got "has spaces!", expected 1 to 50 letters/);
  });
});

describe('noded status and block get against a running node', () => {
  let home: string;
  let node: Daemon;
  let rpcPort: number;

  beforeAll(async () => {
    home = newHome();
    // In this process (test/helpers/homes.ts says why): `noded init` has its tests above.
    initHome({ home, chainId: 'cli-2', aggregator: true, force: false });
    rpcPort = await freePort();
    const statusPort = await freePort();
    const yml = join(home, 'config', 'node.yml');
    writeFileSync(
      yml,
      readFileSync(yml, 'utf8')
        .replace(/address: 127\.0\.0\.1:7331/, `address: 127.0.0.1:${rpcPort}`)
        .replace(/status_address: 127\.0\.0\.1:26657/, `status_address: 127.0.0.1:${statusPort}`),
    );
    node = await Daemon.start(home, [
      '--node.rpc.address',
      `127.0.0.1:${rpcPort}`,
      '--node.rpc.status_address',
      `127.0.0.1:${statusPort}`,
      '--node.node.block_time',
      '100ms',
    ]);
    await waitFor(async () => (await latestHeight(node.rpc)) >= 3, 'height 3');
  });

  it('status prints role, chain, height and health', async () => {
    const res = await runCli(['status', '--home', home]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/cli-2 \(aggregator\)/);
    expect(res.stdout).toMatch(/live: OK, ready: READY/);
    const json = await runCli(['status', '--home', home, '--json']);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ role: 'aggregator', chain_id: 'cli-2', catching_up: false });
    expect(report.height).toBeGreaterThanOrEqual(3);
    expect(report.health.ready.ok).toBe(true);
    expect(report.da).toMatchObject({ mode: 'submit', pending_blocks: expect.any(Number), max_pending_blocks: 100 });
    expect(res.stdout).toMatch(/^DA {11}included \d+, \d+ pending$/m);
  });

  it('block get prints a summary, and --json prints exactly the GetBlock JSON', async () => {
    const text = await runCli(['block', 'get', '--home', home, '--height', '2']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/height\s+2/);
    expect(text.stdout).toMatch(/time\s+\d{4}-\d\d-\d\dT/);
    expect(text.stdout).toMatch(/hash\s+[0-9A-F]{64}/);
    expect(text.stdout).toMatch(/DA heights/);
    const json = await runCli(['block', 'get', '--home', home, '--height', '2', '--json']);
    const direct = await getBlockJson(node.rpc, { height: 2 });
    expect(json.stdout.trim()).toBe(direct.text.trim());
    const hash = text.stdout.match(/hash\s+([0-9A-F]{64})/)![1]!;
    const byHash = await runCli(['block', 'get', '--node', node.rpc, '--hash', hash, '--json']);
    expect(byHash.stdout.trim()).toBe(direct.text.trim());
  });

  it('block get of a missing height → exit 1 naming the latest; bad flags → exit 2', async () => {
    // One process: the --json envelope carries the exit, the code and the same message plain stderr shows
    // (plain stderr of a failure: the no-node test below).
    const missing = await runCli(['block', 'get', '--home', home, '--height', '99999999', '--json']);
    expect(missing.code, missing.stderr).toBe(1);
    expect(JSON.parse(missing.stdout).error).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/no block at height 99999999 \(latest is \d+\)/),
    });
    expect((await runCli(['block', 'get', '--home', home, '--height', '-3'])).code).toBe(2);
    expect((await runCli(['block', 'get', '--home', home, '--hash', 'zz'])).code).toBe(2);
    expect((await runCli(['block', 'get', '--home', home])).code).toBe(2);
    expect((await runCli(['block', 'get', '--home', home, '--height', '1', '--hash', 'AA'])).code).toBe(2);
  });
});

describe('commands with no node running', () => {
  it('status → exit 1 "no node of home … is running" naming the address', async () => {
    const home = newHome();
    initHome({ home, chainId: 'cli-3', aggregator: false, force: false });
    const port = await freePort();
    const yml = join(home, 'config', 'node.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/address: 127\.0\.0\.1:7331/, `address: 127.0.0.1:${port}`));
    const res = await runCli(['status', '--home', home]);
    expect(res.code).toBe(1);
    expect(res.stderr.replace(/\s*›\s*/g, ' ')).toContain(`no node of home ${home} is running: nothing answers at 127.0.0.1:${port} (its rpc.address)`);
    const json = await runCli(['status', '--home', home, '--json']);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'NODE_UNREACHABLE', exit: 1 });
    const block = await runCli(['block', 'get', '--home', home, '--height', '1']);
    expect(block.code).toBe(1);
    expect(block.stderr).toContain(`no node of home`);
  });
});
