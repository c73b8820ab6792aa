import { Agent, request } from 'node:http';
import type { Node } from '../../src/node/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { createAggregatorHome, makeTxs, openNode } from '../lib/node.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

const TX_BYTES = 100;
/** Requests in flight at once, each on its own keep-alive connection. */
const CONCURRENCY = 64;

/** POSTs every tx to `/tx` of `rpc`, CONCURRENCY at a time; returns txs/s. Any answer but 200 fails the figure. */
async function postAll(rpc: { host: string; port: number }, txs: Buffer[]): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const post = (tx: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const req = request({ host: rpc.host, port: rpc.port, path: '/tx', method: 'POST', agent, headers: { 'content-length': tx.length } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`POST /tx: HTTP ${res.statusCode} ${body}`))));
      });
      req.on('error', reject);
      req.end(tx);
    });
  let next = 0;
  const start = performance.now();
  try {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < txs.length) await post(txs[next++]!);
      }),
    );
  } finally {
    agent.destroy();
  }
  return txs.length / ((performance.now() - start) / 1000);
}

/** An aggregator whose listeners answer but which makes no blocks (admission alone is measured); closed with the scope. */
async function admittingNode(scope: Scope, durable: boolean): Promise<Node> {
  const home = scope.tempDir('noded-bench-admission-');
  createAggregatorHome(home);
  const node = await openNode(home, { 'node.mempool_max_txs': 1_000_000 });
  scope.defer(() => node.close());
  // The baseline: the same node with the mempool bucket's write answered at once, so a tx is acknowledged from memory.
  if (!durable) node.store.keepMempoolTxs = () => Promise.resolve();
  return node;
}

export const admission: Bench = {
  name: 'admission',
  description: `Tx admission: txs/s through POST /tx (${CONCURRENCY} concurrent keep-alive clients, ${TX_BYTES} B kv txs), acknowledged once kept in the store vs the same node acknowledging from memory`,
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, txs } = opts.quick ? { rounds: 3, txs: 2_000 } : { rounds: 5, txs: 10_000 };
    const durable = await admittingNode(scope, true);
    const memory = opts.nodedOnly ? null : await admittingNode(scope, false);
    let round = 0;
    const side = (node: Node) => () => postAll(node.listeners.rpc.address, makeTxs(txs, TX_BYTES, `r${round++}`));
    // A warm-up round on each gives the JIT its turn.
    await side(durable)();
    if (memory) await side(memory)();
    const paired = await interleave(rounds, { noded: side(durable), baseline: () => side(memory!)() }, { nodedOnly: opts.nodedOnly });
    const note =
      `Real in-process aggregator (kv execution, no block production, so admission alone is timed); ${txs} distinct txs a round, ` +
      `${CONCURRENCY} clients each posting the next tx when answered. noded: 200 once the tx is in the store's mempool bucket ` +
      `(group commit: the txs that arrive while a batch is written share the next). Baseline: a second node whose mempool-bucket write ` +
      `resolves at once (the tx-index lookup and the mempool are the same).`;
    return [row('Tx admission (durable)', 'txs/s', paired, { ratioAtLeast: 0.8 }, note)];
  },
};
