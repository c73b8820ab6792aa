import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ethCall, signTransfer } from '../../bench/lib/evm.js';
import { Daemon, freePort, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { EthereumJs, killAllEthereumJs } from '../doctor/ethereumjs.js';

const homes = new Homes();
const dirs: Array<{ cleanup: () => void }> = [];

afterEach(async () => {
  await Promise.all([killAll(), killAllEthereumJs()]);
  homes.cleanup();
  for (const d of dirs.splice(0)) d.cleanup();
});

/** `start` waits for the supervised EthereumJS to answer first: slow on a busy machine. */
const SUPERVISED_START = { timeoutMs: 90_000 };

const RECIPIENT = '0x00000000000000000000000000000000000bee01';

function newDir(): string {
  const d = tempHome('noded-evm-');
  dirs.push(d);
  return d.dir;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function statusJson(home: string, d: Daemon): Promise<any> {
  const res = await runCli(['status', '--home', home, '--json'], {
    NODED_RPC_ADDRESS: d.rpc.slice('http://'.length),
    NODED_RPC_STATUS_ADDRESS: d.status.slice('http://'.length),
  });
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
}

/** Sends a transfer and returns the rollup block (GetBlock JSON) that holds it. */
async function transfer(ethUrl: string, privateKey: string, nonce: number, value: bigint): Promise<{ height: number; raw: string }> {
  const raw = signTransfer(privateKey, RECIPIENT, value, nonce);
  const hash = await ethCall<string>(ethUrl, 'eth_sendRawTransaction', [raw]);
  const receipt = await waitFor(() => ethCall<{ blockNumber: string } | null>(ethUrl, 'eth_getTransactionReceipt', [hash]), `receipt of ${hash}`, 30_000);
  return { height: Number(BigInt(receipt.blockNumber)), raw };
}

describe('EVM execution with the real EthereumJS client (@ethereumjs/client 0.10.5)', () => {
  it('init --execution evm: blocks carry the transfers; kill -9 of the EL, a node restart and reset evm all carry on', async () => {
    const home = newDir();
    const [engine, rpcPort, p2pPort] = [await freePort(), await freePort(), await freePort()];
    // prettier-ignore
    const init = await runCli(['init', '--home', home, '--chain-id', 'evm-e2e', '--aggregator', '--execution', 'evm',
      '--el-engine-port', String(engine), '--el-rpc-port', String(rpcPort), '--el-p2p-port', String(p2pPort), '--json']);
    expect(init.code, init.stderr).toBe(0);
    const { dev_account: dev } = JSON.parse(init.stdout) as { dev_account: { address: string; private_key: string } };
    expect(dev.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const ethUrl = `http://127.0.0.1:${rpcPort}`;
    const blockTime = ['--node.node.block_time', '200ms'];

    let node = await Daemon.start(home, blockTime, SUPERVISED_START);
    const first = await transfer(ethUrl, dev.private_key, 0, 12_345n);
    // The tx is in the rollup block of the same height as its EL block, as its EIP-2718 bytes.
    const block = await waitFor(async () => (await getBlockJson(node.rpc, { height: first.height })).json, `rollup block ${first.height}`);
    expect(block.block.data.txs).toContain(Buffer.from(first.raw.slice(2), 'hex').toString('base64'));
    expect(BigInt(await ethCall<string>(ethUrl, 'eth_getBalance', [RECIPIENT, 'latest']))).toBe(12_345n);
    await waitFor(async () => (await fetch(`${node.rpc}/health/ready`).then((r) => r.text())) === 'READY', 'READY');

    const doctor = await runCli([
      'doctor',
      '--home',
      home,
      '--check',
      'engine',
      '--json',
      '--node.rpc.address',
      node.rpc.slice(7),
      '--node.rpc.status_address',
      node.status.slice(7),
    ]);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(JSON.parse(doctor.stdout)[0]).toMatchObject({ id: 'engine', status: 'ok' });

    // kill -9 of the supervised EthereumJS: restarted, and blocks go on.
    const [child] = (await statusJson(home, node)).children;
    expect(child).toMatchObject({ name: 'ethereumjs', state: 'running', restarts: 0 });
    process.kill(child.pid, 'SIGKILL');
    const restarted = await waitFor(
      async () => {
        const [c] = (await statusJson(home, node)).children;
        return c.restarts === 1 && c.state === 'running' ? c : null;
      },
      'ethereumjs restarted',
      30_000,
    );
    expect(restarted.last_exit).toMatchObject({ signal: 'SIGKILL' });
    expect(node.stderr).toContain('ethereumjs exited (killed by SIGKILL); restarting it');
    const afterCrash = await latestHeight(node.rpc);
    await waitFor(async () => (await latestHeight(node.rpc)) >= afterCrash + 3, 'blocks after the EL restart', 30_000);

    // A clean stop takes the EL down after the node; a new start carries on from the same height.
    expect(await node.kill('SIGTERM')).toBe(0);
    expect(alive(restarted.pid)).toBe(false);
    node = await Daemon.start(home, blockTime, SUPERVISED_START);
    const second = await transfer(ethUrl, dev.private_key, 1, 1n);
    expect(second.height).toBeGreaterThan(first.height);
    expect(BigInt(await ethCall<string>(ethUrl, 'eth_getBalance', [RECIPIENT, 'latest']))).toBe(12_346n);
    expect(await node.kill('SIGTERM')).toBe(0);

    // reset evm: EthereumJS's database and the cache are emptied; the node replays its chain into a fresh EL.
    const reset = await runCli(['reset', 'evm', '--home', home, '--yes']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(readdirSync(join(home, 'data', 'evm'))).toEqual([]);
    expect(readdirSync(join(home, 'data', 'cache'))).toEqual([]);
    node = await Daemon.start(home, blockTime, SUPERVISED_START);
    await waitFor(
      async () => Number(BigInt(await ethCall<string>(ethUrl, 'eth_blockNumber', []))) > second.height,
      'the fresh EL replayed past the transfers',
      120_000,
    );
    expect(node.stderr).toContain('execution client is behind the node: replaying blocks');
    expect(BigInt(await ethCall<string>(ethUrl, 'eth_getBalance', [RECIPIENT, 'latest']))).toBe(12_346n);
  }, 300_000);

  it('a wrong JWT secret stops the node with a message naming the jwt file', async () => {
    const el = await EthereumJs.start(newDir());
    const home = await homes.create('evm-jwt', true);
    const wrongJwt = join(newDir(), 'wrong-jwt.hex');
    writeFileSync(wrongJwt, randomBytes(32).toString('hex'));
    const node = await Daemon.start(
      home,
      ['--node.execution.type', 'evm', '--node.execution.engine_url', el.engineUrl, '--node.execution.jwt_secret_file', wrongJwt],
      { wait: false },
    );
    expect(await node.exited).toBe(1);
    // oclif wraps the error message over lines that start with ›.
    const message = node.stderr.replace(/\s*\n\s*›\s*/g, ' ');
    expect(message).toContain(`rejected the node's JWT (HTTP 401`);
    expect(message).toContain(wrongJwt);
    expect(node.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('EL down at start: the node says what it waits for, /health/ready is UNREADY, and it goes on once the EL is back', async () => {
    const dir = newDir();
    const enginePort = await freePort();
    let el = await EthereumJs.start(dir, { enginePort });
    const home = await homes.create('evm-down', true);
    const evm = [
      '--node.execution.type',
      'evm',
      '--node.execution.engine_url',
      el.engineUrl,
      '--node.execution.jwt_secret_file',
      el.jwtFile,
      '--node.node.block_time',
      '200ms',
    ];
    let node = await Daemon.start(home, evm);
    await waitFor(async () => (await latestHeight(node.rpc)) >= 3, 'blocks');
    expect(await node.kill('SIGTERM')).toBe(0);
    await el.kill();

    node = await Daemon.start(home, evm);
    await waitFor(
      async () => (await fetch(`${node.rpc}/health/ready`).then((r) => r.text())) === 'UNREADY: execution client unreachable',
      'UNREADY: execution client unreachable',
    );
    await waitFor(
      () => node.stderr.includes(`waiting for the execution client to catch up with the node: execution client unreachable at ${el.engineUrl}`),
      'the waiting log line',
    );
    const before = await latestHeight(node.rpc);
    el = await EthereumJs.start(dir, { enginePort, jwtFile: el.jwtFile, dataDir: el.dataDir });
    await waitFor(async () => (await latestHeight(node.rpc)) >= before + 3, 'blocks once the EL is back', 30_000);
    await waitFor(async () => (await fetch(`${node.rpc}/health/ready`).then((r) => r.text())) === 'READY', 'READY again');
  }, 120_000);
});
