import { join } from 'node:path';
import { EngineClient, ethereumJsArgs, initEvmHome, type DevAccount, type EvmDevnetPorts } from '../../src/exec/evm/index.js';
import { nowNanos, sleep } from '../../src/util/index.js';
import { ethCall, signTransfer } from '../lib/evm.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { openNode, startProducing, withDeadline } from '../lib/node.js';
import { row } from '../lib/report.js';
import { freePort } from '../lib/ports.js';
import { interleave } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

const BLOCK_TIME_MS = 100;
const ZERO_HASH = `0x${'00'.repeat(32)}`;
const RECIPIENT = '0x00000000000000000000000000000000000bee02';

type Hex = `0x${string}`;

interface Chain {
  home: string;
  engine: EngineClient;
  ethUrl: string;
  dev: DevAccount;
}

/** A fresh `init --execution evm` home with its EthereumJS client running (not supervised: the bench owns it). */
async function freshChain(scope: Scope): Promise<Chain> {
  const home = join(scope.tempDir('noded-bench-evm-'), 'home');
  const ports: EvmDevnetPorts = { engine: await freePort(), rpc: await freePort(), p2p: await freePort() };
  const { dev_account: dev } = initEvmHome({ home, chainId: 'bench-evm', aggregator: true, force: false }, ports);
  scope.spawn(process.execPath, ethereumJsArgs(ports), { cwd: home });
  const engine = new EngineClient({ url: `http://127.0.0.1:${ports.engine}`, jwtFile: join(home, 'config', 'jwt.hex'), timeoutMs: 60_000 });
  scope.defer(() => engine.close());
  for (let tries = 0; ; tries++) {
    try {
      await engine.call('eth_blockNumber', []);
      break;
    } catch (err) {
      if (tries > 300) throw err;
      await sleep(100);
    }
  }
  return { home, engine, ethUrl: `http://127.0.0.1:${ports.rpc}`, dev };
}

/** Fills the client's pool with `count` signed transfers. */
async function fillPool(chain: Chain, count: number): Promise<void> {
  for (let nonce = 0; nonce < count; nonce++)
    await ethCall(chain.ethUrl, 'eth_sendRawTransaction', [signTransfer(chain.dev.private_key, RECIPIENT, 1n, nonce)]);
}

/**
 * The EL alone: the four Engine calls a block, one block every BLOCK_TIME_MS,
 * no rollup around them. Txs per second until every pooled tx is in a block.
 */
async function elAlone(chain: Chain, poolTxs: number): Promise<number> {
  const { engine } = chain;
  let head = await engine.call<{ hash: Hex; timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  let timestamp = BigInt(head.timestamp);
  let txs = 0;
  const start = Date.now();
  for (let next = start; txs < poolTxs; next += BLOCK_TIME_MS) {
    await sleep(Math.max(0, next - Date.now()));
    const seconds = nowNanos() / 1_000_000_000n;
    timestamp = seconds > timestamp ? seconds : timestamp + 1n;
    const forkchoice = { headBlockHash: head.hash, safeBlockHash: head.hash, finalizedBlockHash: head.hash };
    const attributes = {
      timestamp: `0x${timestamp.toString(16)}`,
      prevRandao: ZERO_HASH,
      suggestedFeeRecipient: `0x${'00'.repeat(20)}`,
      withdrawals: [],
      parentBeaconBlockRoot: ZERO_HASH,
    };
    const { payloadId } = await engine.call<{ payloadId: Hex }>('engine_forkchoiceUpdatedV3', [forkchoice, attributes]);
    const { executionPayload: payload } = await engine.call<{ executionPayload: { blockHash: Hex; transactions: Hex[] } }>('engine_getPayloadV3', [payloadId]);
    await engine.call('engine_newPayloadV3', [payload, [], ZERO_HASH]);
    await engine.call('engine_forkchoiceUpdatedV3', [{ ...forkchoice, headBlockHash: payload.blockHash }, null]);
    head = { hash: payload.blockHash, timestamp: `0x${timestamp.toString(16)}` };
    txs += payload.transactions.length;
  }
  return txs / ((Date.now() - start) / 1000);
}

/** The same EL under a noded aggregator at the same block time: txs per second counted in rollup blocks until every pooled tx is in one. */
async function underNoded(chain: Chain, poolTxs: number): Promise<number> {
  const node = await openNode(chain.home, { 'node.block_time': `${BLOCK_TIME_MS}ms` });
  let txs = 0;
  const start = Date.now();
  const emptied = new Promise<void>((resolve) =>
    node.chain.onBlock((block) => {
      txs += block.data!.txs.length;
      if (txs >= poolTxs) resolve();
    }),
  );
  try {
    await Promise.race([emptied, startProducing(node)]);
    return txs / ((Date.now() - start) / 1000);
  } finally {
    await node.close();
  }
}

export const evm: Bench = {
  name: 'evm',
  description: `EVM transfers/s through noded at block_time ${BLOCK_TIME_MS}ms vs the EthereumJS client building blocks alone`,
  async run(opts: BenchOptions, scope: Scope) {
    const rounds = opts.quick ? 1 : 3;
    // EthereumJS executes a transfer in ~50 ms (twice: building, then newPayload), so the pool is sized for
    // a round of tens of seconds; both sides run until every pooled tx is in a block, bounded by the deadline.
    const poolTxs = opts.quick ? 100 : 400;
    const deadlineMs = 60_000 + poolTxs * 500;
    const measure = async (side: (chain: Chain, poolTxs: number) => Promise<number>, name: string) => {
      const chain = await freshChain(scope);
      await fillPool(chain, poolTxs);
      return withDeadline(side(chain, poolTxs), deadlineMs, `${poolTxs} transfers in blocks (${name})`);
    };
    const paired = await interleave(
      rounds,
      { baseline: () => measure(elAlone, 'EL alone'), noded: () => measure(underNoded, 'noded') },
      { nodedOnly: opts.nodedOnly },
    );
    return [
      row(
        `EVM transfers through the rollup at block_time ${BLOCK_TIME_MS}ms`,
        'txs/s',
        paired,
        { ratioAtLeast: 0.8 },
        `${poolTxs} signed transfers in the pool of a fresh EthereumJS client (@ethereumjs/client, eth_sendRawTransaction), then txs per second until all are in blocks: noded's aggregator (Engine API executor, store, signing; DA kept out) vs a bare loop of the four Engine API calls a block at the same cadence; ${rounds} rounds, interleaved, median.`,
      ),
    ];
  },
};
