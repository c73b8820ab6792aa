import { afterEach, describe, expect, it } from 'vitest';
import { Daemon, freePort, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor } from '../../helpers/daemon.js';
import { Homes } from '../../helpers/homes.js';
import { KvStoreProcess, abciFlags } from '../../abci/helpers.js';
import { ExecServeProcess, grpcFlags } from './helpers.js';

// A node on execution.type grpc driving `noded exec serve` in its own process (issue 22).

const homes = new Homes();
const execHomes: Array<ReturnType<typeof tempHome>> = [];
/** Pids of executors a node supervises: a node killed with SIGKILL cannot stop them itself. */
const supervisedPids = new Set<number>();
afterEach(async () => {
  await killAll();
  for (const pid of supervisedPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  supervisedPids.clear();
  homes.cleanup();
  for (const h of execHomes.splice(0)) h.cleanup();
});

function execHome(): string {
  const h = tempHome('noded-exec-');
  execHomes.push(h);
  return h.dir;
}

/** POST /tx's status; 0 when the node does not answer (the assertion then shows its stderr). */
async function postTx(rpc: string, tx: string): Promise<number> {
  return fetch(`${rpc}/tx`, { method: 'POST', body: tx }).then(
    (res) => res.status,
    () => 0,
  );
}

/** Every block's txs and header app_hash from `from` to `to`. */
async function chainOf(rpc: string, from: number, to: number): Promise<Array<{ txs: string[]; appHash: string }>> {
  const out = [];
  for (let height = from; height <= to; height++) {
    const { json, text } = await getBlockJson(rpc, { height });
    expect(json?.block, text).toBeDefined();
    out.push({
      txs: (json.block.data.txs ?? []).map((t: string) => Buffer.from(t, 'base64').toString()),
      appHash: json.block.header.header.app_hash as string,
    });
  }
  return out;
}

/** The height of the block holding `tx` (polled until a block has it). */
async function heightOfTx(rpc: string, tx: string, what: string): Promise<number> {
  return waitFor(
    async () => {
      const top = await latestHeight(rpc);
      for (let h = top; h >= 1; h--) if ((await chainOf(rpc, h, h))[0]!.txs.includes(tx)) return h;
      return null;
    },
    what,
    20_000,
  );
}

describe('execution.type grpc against `noded exec serve`', () => {
  it('gives the same chain (txs and app hashes) as the in-process kv machine', async () => {
    const exec = await ExecServeProcess.start(execHome());
    const grpcHome = await homes.create('exec-grpc', true);
    const kvHome = await homes.create('exec-grpc', true);
    // Lazy mode: a block only when txs wait, so both chains hold the same blocks of the same txs.
    const lazy = ['--node.node.lazy_mode', '--node.node.lazy_block_interval', '1h', '--node.node.block_time', '100ms'];
    const grpcNode = await Daemon.start(grpcHome, [...grpcFlags(exec.url), ...lazy]);
    const kvNode = await Daemon.start(kvHome, lazy);
    for (const tx of ['a=1', 'b=2', 'a=3', 'c=4']) {
      // One block a tx, on both.
      for (const node of [grpcNode, kvNode]) {
        expect(await postTx(node.rpc, tx), node.stderr).toBe(200);
        await heightOfTx(node.rpc, tx, `a block with ${tx} on the ${node === kvNode ? 'kv' : 'grpc'} node`);
      }
    }
    const top = await latestHeight(kvNode.rpc);
    expect(await latestHeight(grpcNode.rpc)).toBe(top);
    const grpcChain = await chainOf(grpcNode.rpc, 1, top);
    const kvChain = await chainOf(kvNode.rpc, 1, top);
    expect(grpcChain).toEqual(kvChain);
    // The state roots moved: block 1's header holds genesis's, each later one the root after the block before.
    expect(new Set(kvChain.map((b) => b.appHash)).size).toBe(top);
  }, 180_000);
});

describe('execution.type grpc against `noded exec serve --type abci`', () => {
  it('gives the same chain as a node driving the same ABCI app directly', async () => {
    const apps = await Promise.all(
      [0, 1].map(async () => {
        const address = `tcp://127.0.0.1:${await freePort()}`;
        await KvStoreProcess.start(execHome(), address);
        return address;
      }),
    );
    const exec = await ExecServeProcess.start(execHome(), { abci: apps[0]! });
    const lazy = ['--node.node.lazy_mode', '--node.node.lazy_block_interval', '1h', '--node.node.block_time', '100ms'];
    const viaGrpc = await Daemon.start(await homes.create('exec-grpc-abci', true), [...grpcFlags(exec.url), ...lazy]);
    const direct = await Daemon.start(await homes.create('exec-grpc-abci', true), [...abciFlags(apps[1]!), ...lazy]);
    for (const tx of ['x=1', 'y=2', 'x=3']) {
      for (const node of [viaGrpc, direct]) {
        expect(await postTx(node.rpc, tx), node.stderr).toBe(200);
        await heightOfTx(node.rpc, tx, `a block with ${tx} on the ${node === direct ? 'abci' : 'grpc'} node`);
      }
    }
    const top = await latestHeight(direct.rpc);
    expect(await latestHeight(viaGrpc.rpc)).toBe(top);
    expect(await chainOf(viaGrpc.rpc, 1, top)).toEqual(await chainOf(direct.rpc, 1, top));
  }, 180_000);
});

describe('execution.type grpc when the executor goes away', () => {
  it('an executor killed (kill -9) and restarted mid-run: the node waits, reports it unready, and goes on; a fresh executor gets the chain replayed', async () => {
    const dir = execHome();
    let exec = await ExecServeProcess.start(dir);
    const port = Number(new URL(exec.url).port);
    const home = await homes.create('exec-grpc-kill', true);
    const node = await Daemon.start(home, [...grpcFlags(exec.url), '--node.node.block_time', '100ms']);
    expect(await postTx(node.rpc, 'before=1'), node.stderr).toBe(200);
    await heightOfTx(node.rpc, 'before=1', 'a block with before=1');

    await exec.kill('SIGKILL');
    const ready = `${node.rpc}/health/ready`;
    const unready = await waitFor(async () => {
      const res = await fetch(ready);
      const text = await res.text();
      return res.status === 503 && text.includes('execution client unreachable') ? text : null;
    }, 'the node to report the executor unreachable');
    expect(unready).toContain('execution client unreachable');
    const stalled = await latestHeight(node.rpc);
    expect(await postTx(node.rpc, 'during=2'), node.stderr).toBe(200);

    exec = await ExecServeProcess.start(dir, { port });
    const during = await heightOfTx(node.rpc, 'during=2', 'a block with during=2 after the executor came back');
    expect(during).toBeGreaterThan(stalled);
    await waitFor(async () => (await fetch(ready)).status === 200, 'the node ready again');
    expect(node.stderr).toContain('executor in step with the node');

    // A fresh executor (its data gone): the node replays its whole chain into it before the next block.
    await exec.kill('SIGKILL');
    exec = await ExecServeProcess.start(execHome(), { port });
    expect(await postTx(node.rpc, 'after=3'), node.stderr).toBe(200);
    await heightOfTx(node.rpc, 'after=3', 'a block with after=3 on a fresh executor');
    expect(node.stderr).toContain('replaying stored blocks into the executor');
    expect(node.child.exitCode, node.stderr).toBeNull();
  }, 180_000);
});

describe('execution.type grpc: a node restart and `init --execution grpc`', () => {
  it('a node killed (kill -9) and restarted finds the executor where it left it and goes on', async () => {
    const exec = await ExecServeProcess.start(execHome());
    const home = await homes.create('exec-grpc-node-crash', true);
    const args = [...grpcFlags(exec.url), '--node.node.block_time', '50ms'];
    const node = await Daemon.start(home, args);
    for (let i = 0; i < 5; i++) expect(await postTx(node.rpc, `n${i}=${i}`), node.stderr).toBe(200);
    await heightOfTx(node.rpc, 'n4=4', 'the fifth tx in a block');
    await node.kill('SIGKILL');
    const again = await Daemon.start(home, args);
    const stored = await latestHeight(again.rpc);
    await waitFor(async () => (await latestHeight(again.rpc)) > stored + 2, 'blocks after the restart');
    expect(again.stderr).toContain('executor in step with the node');
    expect(again.stderr).not.toContain('out of sync');
  });

  it('init --execution grpc writes a supervise: entry running `noded exec serve`; `noded start` alone runs the chain', async () => {
    const dir = tempHome('noded-grpc-init-');
    execHomes.push(dir);
    const port = await freePort();
    const init = await runCli(['init', '--home', dir.dir, '--chain-id', 'exec-grpc-init', '--aggregator', '--execution', 'grpc', '--exec-port', String(port)]);
    expect(init.code, init.stderr).toBe(0);
    const node = await Daemon.start(dir.dir, ['--node.node.block_time', '100ms']);
    const info = (await (await fetch(`${node.status}/node_info`)).json()) as {
      result: { children: Array<{ name: string; pid: number | null; state: string }> };
    };
    const child = info.result.children[0]!;
    if (child.pid !== null) supervisedPids.add(child.pid);
    expect(child).toMatchObject({ name: 'executor', state: 'running' });
    expect(await postTx(node.rpc, 'supervised=yes'), node.stderr).toBe(200);
    await heightOfTx(node.rpc, 'supervised=yes', 'a block with the tx');
    expect(await (await fetch(`http://127.0.0.1:${port}/health`)).text()).toBe('ok\n');
    node.child.kill('SIGTERM');
    expect(await node.exited, node.stderr).toBe(0);
  });
});
