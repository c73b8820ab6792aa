import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { admit, createAggregatorHome, makeTxs, nextBlock, openNode, startProducing, withDeadline } from '../lib/node.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';
import { requestsPerSecond } from '../load/run-load.js';
import type { LoadSpec } from '../load/spec.js';

const TXS = 100;
const TX_BYTES = 100;
const CONNECTIONS = 64;
const PATH = '/node.v1.StoreService/GetBlock';
const HEADERS = { 'content-type': 'application/json' };

/** A node whose latest block holds 100 txs of 100 bytes; returns its RPC origin and that block's height. */
async function nodeWithBlock(scope: Scope): Promise<{ origin: string; height: bigint }> {
  const home = scope.tempDir('noded-bench-getblock-');
  createAggregatorHome(home);
  // Lazy mode with a long interval: the node makes the one block the txs ask for and then
  // stays quiet, so block production does not share the core with the RPC being measured.
  const node = await openNode(home, { 'node.lazy_mode': true, 'node.lazy_block_interval': '1h' });
  scope.defer(() => node.close());
  await admit(node, makeTxs(TXS, TX_BYTES, 'getblock'));
  const block = nextBlock(node, (b) => b.data!.txs.length === TXS);
  const fatal = startProducing(node);
  const { header } = (await withDeadline(Promise.race([block, fatal]), 30_000, `a block of ${TXS} txs`)).header!;
  const { host, port } = node.listeners.rpc.address;
  return { origin: `http://${host}:${port}`, height: header!.height };
}

/** The response noded gives, fetched once: the bare server answers with exactly these bytes. */
async function fetchResponse(origin: string, body: string): Promise<Buffer> {
  const res = await fetch(origin + PATH, { method: 'POST', headers: HEADERS, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`GetBlock answered ${res.status}: ${bytes.toString()}`);
  const txs = (JSON.parse(bytes.toString()) as { block: { data: { txs: unknown[] } } }).block.data.txs.length;
  if (txs !== TXS) throw new Error(`GetBlock returned a block of ${txs} txs, expected ${TXS}`);
  return bytes;
}

/** The floor: node:http answering every request with the pre-serialized bytes, nothing else. */
async function bareServer(scope: Scope, response: Buffer): Promise<string> {
  // Same keep-alive timeout as noded's listener, so connections live as long on both.
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': response.length });
    res.end(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scope.defer(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export const getBlock: Bench = {
  name: 'getblock',
  description: 'GetBlock requests/s at 64 keep-alive connections vs a bare node:http server',
  async run(opts: BenchOptions, scope: Scope) {
    const { origin, height } = await nodeWithBlock(scope);
    const body = JSON.stringify({ height: Number(height) });
    const response = await fetchResponse(origin, body);
    const bare = opts.nodedOnly ? '' : await bareServer(scope, response);
    const timing = opts.quick ? { warmupMs: 500, durationMs: 2_000, rounds: 3 } : { warmupMs: 1_000, durationMs: 5_000, rounds: 5 };
    const load = (target: string): LoadSpec => ({
      origin: target,
      path: PATH,
      method: 'POST',
      headers: HEADERS,
      body,
      connections: CONNECTIONS,
      warmupMs: timing.warmupMs,
      durationMs: timing.durationMs,
      expectBytes: response.length,
    });
    const paired = await interleave(
      timing.rounds,
      { baseline: () => requestsPerSecond(load(bare)), noded: () => requestsPerSecond(load(origin)) },
      { nodedOnly: opts.nodedOnly },
    );
    return [
      row(
        'GetBlock, 64 keep-alive connections',
        'req/s',
        paired,
        // Issue 18: GetBlock stays at ≥ 0.9× a bare node:http server.
        { ratioAtLeast: 0.9 },
        `POST ${PATH} {"height":${height}} (a block of ${TXS} txs × ${TX_BYTES} B, ${response.length} B of JSON) to a real in-process node (lazy mode, DA at a closed port: idle apart from the RPC); ` +
          `every request asks the same height, so noded answers from its cache of written answers (a block's first answer is written once, from the store); ` +
          `baseline: node:http answering the same bytes. Load: undici Pool, ${CONNECTIONS} connections, pipelining 1, in a worker thread; ` +
          `${timing.warmupMs} ms warm-up + ${timing.durationMs} ms counted per round; only 200s of the right length count.`,
      ),
    ];
  },
};
