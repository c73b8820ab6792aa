import { afterEach, describe, expect, it } from 'vitest';
import { Daemon, getBlockJson, killAll, latestHeight, tempHome, waitFor } from '../../helpers/daemon.js';
import { Homes } from '../../helpers/homes.js';
import { ExecServeProcess, grpcFlags } from './helpers.js';

// A node on execution.type grpc driving `noded exec serve` in its own process (issue 22).

const homes = new Homes();
const execHomes: Array<ReturnType<typeof tempHome>> = [];
afterEach(async () => {
  await killAll();
  homes.cleanup();
  for (const h of execHomes.splice(0)) h.cleanup();
});

function execHome(): string {
  const h = tempHome('noded-exec-');
  execHomes.push(h);
  return h.dir;
}

async function postTx(rpc: string, tx: string): Promise<number> {
  return (await fetch(`${rpc}/tx`, { method: 'POST', body: tx })).status;
}

/** Every block's txs and header app_hash from `from` to `to`. */
async function chainOf(rpc: string, from: number, to: number): Promise<Array<{ txs: string[]; appHash: string }>> {
  const out = [];
  for (let height = from; height <= to; height++) {
    const { json, text } = await getBlockJson(rpc, { height });
    expect(json?.block, text).toBeDefined();
    out.push({ txs: (json.block.data.txs ?? []).map((t: string) => Buffer.from(t, 'base64').toString()), appHash: json.block.header.header.app_hash as string });
  }
  return out;
}

/** The height of the block holding `tx` (polled until a block has it). */
async function heightOfTx(rpc: string, tx: string, what: string): Promise<number> {
  return waitFor(async () => {
    const top = await latestHeight(rpc);
    for (let h = top; h >= 1; h--) if ((await chainOf(rpc, h, h))[0]!.txs.includes(tx)) return h;
    return null;
  }, what, 20_000);
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
  });
});
