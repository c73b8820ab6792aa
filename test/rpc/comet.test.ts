import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Comet38Client, connectComet } from '@cosmjs/tendermint-rpc';
import { Daemon, fetchJson, killAll, latestHeight, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';

// The status listener against CosmJS's own CometBFT 0.38 client, and its JSON-RPC error objects byte for byte
// (CometBFT rpc/jsonrpc/types/types.go), on a kv aggregator and a full node that syncs from its DA.

const homes = new Homes();
let aggregator: Daemon;
let full: Daemon;
let client: Comet38Client;

beforeAll(async () => {
  const chain = await homes.chain('comet-kv', 1);
  aggregator = await Daemon.start(chain.aggregator, ['--node.node.block_time', '100ms']);
  full = await Daemon.start(chain.full[0]!, ['--no-node.da.local', '--node.da.address', aggregator.da]);
  await waitFor(async () => (await latestHeight(aggregator.rpc)) >= 3, 'height 3');
  client = (await connectComet(aggregator.status)) as Comet38Client;
});

afterAll(async () => {
  client?.disconnect();
  await killAll();
  homes.cleanup();
});

const enc = (s: string) => new TextEncoder().encode(s);
const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** A raw HTTP call to the status listener. */
const raw = (node: Daemon, path: string, body?: string) => fetchJson(`${node.status}${path}`, body);

const post = (node: Daemon, request: object) => raw(node, '/', JSON.stringify(request));

describe('CosmJS Comet38Client against a kv node', () => {
  it('picks Comet38Client from status, and every info method answers with decodable fields', async () => {
    expect(client).toBeInstanceOf(Comet38Client);
    expect(await client.health()).toBeNull();
    const status = await client.status();
    const height = status.syncInfo.latestBlockHeight;
    expect(height).toBeGreaterThanOrEqual(3);

    const block = await client.block(2);
    expect(block.block.header.height).toBe(2);
    expect(block.block.header.chainId).toBe('comet-kv');
    expect(block.block.lastCommit!.height).toBe(1);
    expect(block.block.lastCommit!.signatures[0]!.signature!.length).toBe(64);
    expect(Buffer.from(block.block.header.lastBlockId!.hash)).toEqual(Buffer.from((await client.block(1)).blockId.hash));
    expect((await client.block(1)).block.lastCommit).toBeNull();

    const chain = await client.blockchain(1, 3);
    expect(chain.blockMetas.map((m) => m.header.height)).toEqual([3, 2, 1]);
    expect(chain.lastHeight).toBeGreaterThanOrEqual(3);
    expect(Buffer.from(chain.blockMetas[1]!.blockId.hash)).toEqual(Buffer.from(block.blockId.hash));
    expect((await client.blockchain()).blockMetas.length).toBeLessThanOrEqual(20);

    const commit = await client.commit(2);
    expect(commit.canonical).toBe(true);
    expect(commit.header.height).toBe(2);
    expect(Buffer.from(commit.commit.blockId.hash)).toEqual(Buffer.from(block.blockId.hash));
    expect(Buffer.from(commit.commit.signatures[0]!.validatorAddress!)).toEqual(Buffer.from(block.block.header.proposerAddress));

    const genesis = await client.genesis();
    expect(genesis.chainId).toBe('comet-kv');
    expect(genesis.validators).toHaveLength(1);
    expect(genesis.consensusParams.block!.maxGas).toBe(-1);
    const validators = await client.validators({});
    expect(validators).toMatchObject({ count: 1, total: 1 });
    expect(validators.validators[0]!.votingPower).toBe(1n);
    expect(Buffer.from(validators.validators[0]!.address)).toEqual(Buffer.from(block.block.header.proposerAddress));
    expect(validators.validators[0]!.pubkey).toEqual(genesis.validators[0]!.pubkey);

    const results = await client.blockResults(2);
    expect(results.height).toBe(2);
    expect(results.results).toEqual([]);
    expect((await client.numUnconfirmedTxs()).total).toBeGreaterThanOrEqual(0);
    expect((await client.abciInfo()).data).toBe('noded');
  });

  it('broadcast_tx_sync, _async and _commit submit txs; tx finds them by hash with a proof; block_results has their results', async () => {
    const sync = await client.broadcastTxSync({ tx: enc('sync=1') });
    expect(sync.code).toBe(0);
    expect(Buffer.from(sync.hash)).toEqual(sha256('sync=1'));
    const async = await client.broadcastTxAsync({ tx: enc('async=1') });
    expect(Buffer.from(async.hash)).toEqual(sha256('async=1'));
    const commit = await client.broadcastTxCommit({ tx: enc('commit=1') });
    expect(commit.height).toBeGreaterThan(0);
    expect(commit.checkTx.code).toBe(0);
    expect(commit.txResult!.code).toBe(0);

    const found = await client.tx({ hash: sha256('commit=1'), prove: true });
    expect(found).toMatchObject({ height: commit.height, index: expect.any(Number) });
    expect(new TextDecoder().decode(found.tx)).toBe('commit=1');
    expect(found.proof!.proof.total).toBeGreaterThanOrEqual(1);
    expect(Buffer.from(found.proof!.data).toString()).toBe('commit=1');
    const results = await client.blockResults(commit.height);
    expect(results.results[found.index]!.code).toBe(0);
    await waitFor(async () => (await client.tx({ hash: sha256('async=1') })).height > 0, 'the async tx committed');
  });

  it('POST /tx?wait=commit answers once the block holding the tx is committed, naming it; another wait is refused', async () => {
    const [first, second] = await Promise.all(
      ['waited=1', 'waited=2'].map(async (body) => {
        const res = await fetch(`${aggregator.rpc}/tx?wait=commit`, { method: 'POST', body });
        expect(res.status).toBe(200);
        return (await res.json()) as { tx_hash: string; height: number; index: number };
      }),
    );
    for (const [answer, body] of [
      [first!, 'waited=1'],
      [second!, 'waited=2'],
    ] as const) {
      expect(answer.tx_hash).toBe(sha256(body).toString('hex').toUpperCase());
      // The block it names is committed and holds the tx at that index.
      const found = await client.tx({ hash: sha256(body) });
      expect({ height: found.height, index: found.index }).toEqual({ height: answer.height, index: answer.index });
    }
    const bad = await fetch(`${aggregator.rpc}/tx?wait=da`, { method: 'POST', body: 'waited=3' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringContaining('wait=da is not a choice: use POST /tx?wait=commit') });
  });

  it('refuses a committed tx on /tx (409) and broadcast_tx_* (CometBFT "tx already exists in cache"), naming its block', async () => {
    const tx = (await client.broadcastTxCommit({ tx: enc('once=1') })).height;
    const again = await fetch(`${aggregator.rpc}/tx`, { method: 'POST', body: 'once=1' });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: expect.stringMatching(new RegExp(`^tx already committed in block ${tx} \\(index \\d+\\)$`)) });
    for (const broadcast of ['broadcastTxSync', 'broadcastTxAsync', 'broadcastTxCommit'] as const) {
      const err = await client[broadcast]({ tx: enc('once=1') }).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      const rpcError = JSON.parse((err as Error).message);
      expect(rpcError).toEqual({
        code: -32603,
        message: 'Internal error',
        data: expect.stringContaining(`tx already exists in cache: committed in block ${tx} (index `),
      });
    }
    // The mempool's own dedupe stays: the same tx twice before a block is refused the second time.
    await Promise.all([
      client.broadcastTxSync({ tx: enc('twice=1') }),
      expect(client.broadcastTxSync({ tx: enc('twice=1') })).rejects.toThrow(/tx already exists in cache: (waiting in the mempool|committed in block)/),
    ]);
    await client.broadcastTxSync({ tx: enc('twice=2') });
    await expect(client.broadcastTxAsync({ tx: enc('twice=2') })).rejects.toThrow(/tx already exists in cache: (waiting in the mempool|committed in block)/);
  });

  it('fails with the JSON-RPC error, never a bare HTTP status', async () => {
    const failures: Array<[() => Promise<unknown>, RegExp]> = [
      [() => client.block(1_000_000), /"code":-32603.*height 1000000 must be less than or equal to the current blockchain height \d+/],
      [() => client.commit(1_000_000), /height 1000000 must be less than or equal to the current blockchain height/],
      [() => client.blockResults(1_000_000), /height 1000000 must be less than or equal/],
      [() => client.validators({ height: 1_000_000 }), /height 1000000 must be less than or equal/],
      [() => client.validators({ page: 2 }), /page should be within \[1, 1\] range, given 2/],
      [() => client.blockchain(5, 2), /min height 5 can't be greater than max height 2/],
      [() => client.tx({ hash: sha256('never sent') }), new RegExp(`tx \\(${sha256('never sent').toString('hex').toUpperCase()}\\) not found`)],
      [() => client.tx({ hash: new Uint8Array(3) }), /"code":-32602,"message":"Invalid params".*hash must be the 32-byte sha256 of the tx/],
      [() => client.abciQuery({ path: '/store', data: enc('k') }), /abci_query needs an ABCI app/],
    ];
    for (const [call, message] of failures) {
      const err = await call().then(
        () => new Error('resolved'),
        (e: Error) => e,
      );
      expect(err.message).toMatch(message);
      expect(err.message).not.toMatch(/Bad status/);
    }
  });

  it('a full node syncing from DA indexes the same txs and names the proposer as its validator', async () => {
    const { height } = await client.broadcastTxCommit({ tx: enc('synced=1') });
    await waitFor(async () => (await latestHeight(full.rpc)) >= height, `the full node at ${height}`, 30_000);
    const fullClient = await Comet38Client.connect(full.status);
    try {
      expect(await fullClient.tx({ hash: sha256('synced=1') })).toMatchObject({ height });
      expect((await fullClient.validators({})).validators[0]!.pubkey).toEqual((await client.validators({})).validators[0]!.pubkey);
      const refused = await fetch(`${full.rpc}/tx`, { method: 'POST', body: 'synced=1' });
      expect(refused.status).toBe(503);
    } finally {
      fullClient.disconnect();
    }
  });
});

describe('JSON-RPC error objects, as CometBFT writes them, always with HTTP 200', () => {
  it('unknown methods, prototype names included, are "Method not found" on POST / and on the URI form', async () => {
    for (const method of ['no_such_method', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'subscribe']) {
      const viaPost = await post(aggregator, { jsonrpc: '2.0', id: 7, method, params: {} });
      expect([viaPost.status, viaPost.text]).toEqual([200, '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}']);
      const viaUri = await raw(aggregator, `/${method}`);
      expect([viaUri.status, viaUri.text]).toEqual([200, '{"jsonrpc":"2.0","id":-1,"error":{"code":-32601,"message":"Method not found"}}']);
    }
  });

  it('a body that is not JSON, or a request CometBFT cannot read, is a parse error without an id', async () => {
    for (const body of ['{"jsonrpc":"2.0","id":1,', '{"jsonrpc":"2.0","id":true,"method":"status"}', '"status"', '{"jsonrpc":"2.0","id":1,"method":5}']) {
      const res = await raw(aggregator, '/', body);
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['jsonrpc', 'error']);
      expect(res.json.error).toMatchObject({
        code: -32700,
        message: 'Parse error. Invalid JSON',
        data: expect.stringMatching(/^error unmarshaling request: /),
      });
    }
  });

  it('bad params are "Invalid params" naming the param and the form it wants; a method refusing them is "Internal error"', async () => {
    const cases: Array<[Promise<{ status: number; json: any }>, object]> = [
      [
        raw(aggregator, '/block?height=abc'),
        {
          code: -32602,
          message: 'Invalid params',
          data: 'error converting http params to arguments: height must be an integer written as a string, e.g. "5", got "abc"',
        },
      ],
      [
        post(aggregator, { jsonrpc: '2.0', id: 1, method: 'block', params: { height: 'abc' } }),
        {
          code: -32602,
          message: 'Invalid params',
          data: 'error converting json params to arguments: height must be an integer written as a string, e.g. "5", got "abc"',
        },
      ],
      [
        post(aggregator, { jsonrpc: '2.0', id: 1, method: 'block', params: ['1', '2'] }),
        { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: expected 1 parameters (height), got 2' },
      ],
      [
        raw(aggregator, '/tx?hash=0xZZ'),
        {
          code: -32602,
          message: 'Invalid params',
          data: 'error converting http params to arguments: hash must be hex after 0x (an even number of 0-9a-f digits), got "ZZ"',
        },
      ],
      [
        post(aggregator, { jsonrpc: '2.0', id: 1, method: 'broadcast_tx_sync', params: {} }),
        { code: -32602, message: 'Invalid params', data: expect.stringContaining('tx is required') },
      ],
      [
        post(aggregator, { jsonrpc: '2.0', id: 1, method: 'broadcast_tx_sync', params: { tx: 'not base64!' } }),
        { code: -32602, message: 'Invalid params', data: 'error converting json params to arguments: tx must be base64, got "not base64!"' },
      ],
      [raw(aggregator, '/block?height=0'), { code: -32603, message: 'Internal error', data: 'height must be greater than 0, but got 0' }],
      [raw(aggregator, '/blockchain?minHeight=-1'), { code: -32603, message: 'Internal error', data: 'heights must be non-negative' }],
    ];
    for (const [call, error] of cases) {
      const res = await call;
      expect(res.status).toBe(200);
      expect(res.json.error).toEqual(error);
    }
  });

  it('positional params, batches and notifications work as in CometBFT', async () => {
    const positional = await post(aggregator, { jsonrpc: '2.0', id: 'a', method: 'block', params: ['2'] });
    expect(positional.json).toMatchObject({ id: 'a', result: { block: { header: { height: '2' } } } });
    const batch = await raw(
      aggregator,
      '/',
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'health' },
        { jsonrpc: '2.0', method: 'health' },
        { jsonrpc: '2.0', id: 2, method: 'nope' },
      ]),
    );
    expect(batch.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } },
    ]);
    const notification = await post(aggregator, { jsonrpc: '2.0', method: 'health' });
    expect([notification.status, notification.text]).toEqual([200, '']);
    const unconfirmed = await raw(aggregator, '/unconfirmed_txs?limit=5');
    expect(unconfirmed.json.result).toMatchObject({
      n_txs: expect.stringMatching(/^\d+$/),
      total: expect.stringMatching(/^\d+$/),
      total_bytes: expect.stringMatching(/^\d+$/),
      txs: expect.any(Array),
    });
    expect((await raw(aggregator, '/')).text).toContain('Available endpoints:');
    // The daemon keeps answering after all of it.
    expect((await raw(aggregator, '/health')).json).toEqual({ jsonrpc: '2.0', id: -1, result: {} });
  });
});
