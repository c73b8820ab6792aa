import { afterEach, describe, expect, it } from 'vitest';
import { Daemon, getBlockJson, killAll, latestHeight, tempHome, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { FakeEngine } from './fake-engine.js';

// EthereumJS does not implement the rollup payload-attribute extension
// (`transactions`, `noTxPool`, `gasLimit`) that a full node needs to execute
// blocks it did not build, so these paths run against FakeEngine, a small
// Engine API server in this test that does (as the reth/op-geth family does).

const homes = new Homes();
const engines: FakeEngine[] = [];
const dirs: Array<{ cleanup: () => void }> = [];

afterEach(async () => {
  await killAll();
  await Promise.all(engines.splice(0).map((e) => e.close()));
  homes.cleanup();
  for (const d of dirs.splice(0)) d.cleanup();
});

async function engine(supportsExtension: boolean): Promise<FakeEngine> {
  const dir = tempHome('noded-engine-');
  dirs.push(dir);
  const e = await FakeEngine.start(dir.dir, { supportsExtension });
  engines.push(e);
  return e;
}

const evmFlags = (e: FakeEngine) => ['--node.execution.type', 'evm', '--node.execution.engine_url', e.url, '--node.execution.jwt_secret_file', e.jwtFile];
const BLOCK_TIME = ['--node.node.block_time', '100ms'];

/** Waits until the daemon's log has a line with `text`, or fails at once if it exits. */
function logged(d: Daemon, text: string): Promise<true> {
  return waitFor(
    () => d.stderr.includes(text) || (d.child.exitCode !== null ? Promise.reject(new Error(`exited:\n${d.stderr}`)) : false),
    `log line "${text}"`,
    20_000,
  );
}

describe('EVM execution: full-node replay and the start-up handshake (Engine API server with the rollup extension)', () => {
  it("a full node replays the aggregator's blocks from DA with the extension; its EL agrees on every block", async () => {
    const [aggEl, fullEl] = [await engine(false), await engine(true)];
    const { aggregator, full } = await homes.chain('evm-replay-1');
    const agg = await Daemon.start(aggregator, [...evmFlags(aggEl), ...BLOCK_TIME]);
    // Txs the aggregator's EL takes into its pool land in rollup blocks.
    const txs = ['0x01aa', '0x02bb', '0x03cc'];
    for (const tx of txs) aggEl.addToPool(tx as `0x${string}`);
    const withTxs = await waitFor(async () => {
      for (let h = 1; h <= (await latestHeight(agg.rpc)); h++) {
        const got = await getBlockJson(agg.rpc, { height: h });
        if (got.json.block.data.txs.length === 3) return { height: h, txs: got.json.block.data.txs as string[] };
      }
      return null;
    }, 'a rollup block with the EL pool txs');
    expect(withTxs.txs).toEqual(txs.map((t) => Buffer.from(t.slice(2), 'hex').toString('base64')));
    expect(aggEl.blocks[withTxs.height]!.transactions).toEqual(txs);

    const fullNode = await Daemon.start(full[0]!, ['--node.da.address', agg.da, ...evmFlags(fullEl)]);
    const target = withTxs.height + 2;
    await waitFor(async () => (await latestHeight(fullNode.rpc)) >= target, `full node at height ${target}`, 30_000);
    // Same txs, timestamps and parents: the full node's EL built the very same blocks.
    for (let n = 1; n <= target; n++) expect(fullEl.blocks[n]!.hash, `EL block ${n}`).toBe(aggEl.blocks[n]!.hash);
    expect(fullEl.calls).toContain('engine_forkchoiceUpdatedV3');
    expect(fullNode.stderr).not.toContain('out of sync');
  });

  it('a full node whose EL refuses the extension stops, naming the reth/op-geth family', async () => {
    const [aggEl, fullEl] = [await engine(false), await engine(false)];
    const { aggregator, full } = await homes.chain('evm-replay-2');
    const agg = await Daemon.start(aggregator, [...evmFlags(aggEl), ...BLOCK_TIME]);
    await waitFor(async () => (await latestHeight(agg.rpc)) >= 2, 'aggregator blocks');
    const fullNode = await Daemon.start(full[0]!, ['--node.da.address', agg.da, ...evmFlags(fullEl)]);
    expect(await fullNode.exited).toBe(1);
    expect(fullNode.stderr).toMatch(/refused the rollup payload-attribute extension \(transactions, noTxPool, gasLimit\).*PayloadAttributesV3 MUST be used/);
    expect(fullNode.stderr).toContain('reth/op-geth family');
    expect(fullNode.stderr).not.toMatch(/\n\s+at /);
  });

  it('an EL ahead of the node stops it with "execution layer out of sync" and the reset evm remedy', async () => {
    const el = await engine(false);
    const home = await homes.create('evm-ahead', true);
    const first = await Daemon.start(home, [...evmFlags(el), ...BLOCK_TIME]);
    await waitFor(async () => (await latestHeight(first.rpc)) >= 3, 'blocks');
    expect(await first.kill('SIGTERM')).toBe(0);
    const nodeHeight = Number(el.height);
    el.advance(3);
    const second = await Daemon.start(home, evmFlags(el));
    expect(await second.exited).toBe(1);
    expect(second.stderr).toContain(`execution layer out of sync: node at ${nodeHeight}, execution client at ${nodeHeight + 3}`);
    expect(second.stderr).toContain('noded reset evm');
  });

  it('SYNCING from newPayload is asked again with backoff; INVALID stops the node with the validation error', async () => {
    const el = await engine(false);
    const home = await homes.create('evm-status', true);
    el.syncingAnswers = 2;
    const node = await Daemon.start(home, [...evmFlags(el), ...BLOCK_TIME]);
    await logged(node, 'answered SYNCING');
    await waitFor(async () => (await latestHeight(node.rpc)) >= 3, 'blocks after SYNCING');
    el.invalidReason = 'invalid gas used: 21000 != 42000';
    expect(await node.exited).toBe(1);
    expect(node.stderr).toContain('the execution client judged block');
    expect(node.stderr).toContain('INVALID: invalid gas used: 21000 != 42000');
  });
});
