import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readGetBlockJson } from '../../src/rpc/json.js';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { Comet38Client } from '@cosmjs/tendermint-rpc';
import { StoreService, headerHash, signedHeaderProblem, txsHash } from '../../src/types/index.js';
import { parseJsonExact } from '../../src/util/index.js';
import { Daemon, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor } from '../helpers/daemon.js';

const exec = promisify(execFile);
const BUF = fileURLToPath(new URL('../../node_modules/.bin/buf', import.meta.url));

let home: ReturnType<typeof tempHome>;
let node: Daemon;

beforeAll(async () => {
  home = tempHome();
  const init = await runCli(['init', '--home', home.dir, '--chain-id', 'devnet-test', '--aggregator']);
  expect(init.code, init.stderr).toBe(0);
  node = await Daemon.start(home.dir, ['--node.node.block_time', '200ms']);
  await waitFor(async () => (await latestHeight(node.rpc)) >= 3, 'height 3');
});

afterAll(async () => {
  await killAll();
  home?.cleanup();
});

const HEADER_FIELDS = [
  'version',
  'height',
  'time',
  'last_header_hash',
  'last_commit_hash',
  'data_hash',
  'consensus_hash',
  'app_hash',
  'last_results_hash',
  'proposer_address',
  'validator_hash',
  'chain_id',
];

describe('a devnet aggregator', () => {
  it('answers GetBlock with every field of SPEC.md §2.1, integers as JSON numbers', async () => {
    const { status, json, text } = await getBlockJson(node.rpc, { height: 2 });
    expect(status, text).toBe(200);
    expect(Object.keys(json).sort()).toEqual(['block', 'data_da_height', 'header_da_height']);
    expect(typeof json.header_da_height).toBe('number');
    expect(typeof json.data_da_height).toBe('number');
    expect(Object.keys(json.block).sort()).toEqual(['data', 'header']);
    const signed = json.block.header;
    expect(Object.keys(signed).sort()).toEqual(['header', 'signature', 'signer']);
    expect(Object.keys(signed.header).sort()).toEqual([...HEADER_FIELDS].sort());
    expect(signed.header.version).toEqual({ block: 11, app: 0 });
    expect(signed.header.height).toBe(2);
    expect(typeof signed.header.time).toBe('number');
    expect(signed.header.chain_id).toBe('devnet-test');
    for (const f of HEADER_FIELDS.filter((f) => f.endsWith('hash') || f.endsWith('address'))) expect(typeof signed.header[f], f).toBe('string');
    expect(typeof signed.signature).toBe('string');
    expect(Object.keys(signed.signer).sort()).toEqual(['address', 'pub_key']);
    expect(Object.keys(json.block.data).sort()).toEqual(['metadata', 'txs']);
    expect(Object.keys(json.block.data.metadata).sort()).toEqual(['chain_id', 'height', 'last_data_hash', 'time']);
    expect(json.block.data.metadata.height).toBe(2);
    expect(Array.isArray(json.block.data.txs)).toBe(true);
    // Integers are written as numbers in the text itself, not strings.
    expect(text).toMatch(/"height":2[,}]/);
  });

  it('returns the identical block by hash, and 404 naming the height for a missing one', async () => {
    // Once block 2 is on DA: its DA heights no longer change between the reads compared.
    const byHeight = await waitFor(async () => {
      const r = await getBlockJson(node.rpc, { height: 2 });
      return r.json?.header_da_height > 0 && r.json.data_da_height > 0 ? r : null;
    }, 'block 2 on DA');
    const parsed = readGetBlockJson(parseJsonExact(byHeight.text) as never);
    const hash = Buffer.from(headerHash(parsed.block!.header!.header!)).toString('base64');
    const byHash = await getBlockJson(node.rpc, { hash });
    expect(byHash.status).toBe(200);
    expect(byHash.text).toBe(byHeight.text);
    const hex = await getBlockJson(node.rpc, { hash: Buffer.from(hash, 'base64').toString('hex') });
    expect(hex.text).toBe(byHeight.text);
    const missing = await getBlockJson(node.rpc, { height: 999_999 });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ code: 'not_found' });
    expect(missing.json.message).toMatch(/no block at height 999999 \(latest is \d+\)/);
  });

  it('serves Connect-ES clients over Connect, gRPC and gRPC-Web', async () => {
    const transports = {
      connect: createConnectTransport({ baseUrl: node.rpc, httpVersion: '1.1' }),
      connectJson: createConnectTransport({ baseUrl: node.rpc, httpVersion: '1.1', useBinaryFormat: false }),
      grpc: createGrpcTransport({ baseUrl: node.rpc }),
      grpcWeb: createGrpcWebTransport({ baseUrl: node.rpc, httpVersion: '1.1' }),
    };
    for (const [name, transport] of Object.entries(transports)) {
      const client = createClient(StoreService, transport);
      const res = await client.getBlock({ identifier: { case: 'height', value: 2n } });
      expect(res.block?.header?.header?.height, name).toBe(2n);
      const err = await client.getBlock({ identifier: { case: 'height', value: 10_000_000n } }).catch((e) => e);
      expect(err.code, name).toBe(5); // NotFound
    }
  });

  it('is read by buf curl over connect and grpc, the schema taken from server reflection (v1 and v1alpha)', async () => {
    for (const [protocol, reflect] of [
      ['connect', 'grpc-v1'],
      ['grpc', 'grpc-v1'],
      ['grpc', 'grpc-v1alpha'],
    ] as const) {
      const args = ['curl', '--protocol', protocol, '--reflect-protocol', reflect, '-d', '{"height":2}', `${node.rpc}/node.v1.StoreService/GetBlock`];
      if (protocol === 'grpc') args.splice(1, 0, '--http2-prior-knowledge');
      const { stdout } = await exec(BUF, args);
      const out = JSON.parse(stdout);
      // buf curl writes proto3 JSON (camelCase, 64-bit as strings).
      expect(out.block.header.header.height, `${protocol} ${reflect}`).toBe('2');
      expect(out.block.header.header.chainId, `${protocol} ${reflect}`).toBe('devnet-test');
    }
    const { stdout: methods } = await exec(BUF, ['curl', '--list-methods', node.rpc]);
    expect(methods.split('\n')).toEqual(
      expect.arrayContaining(['node.v1.StoreService/GetBlock', 'node.v1.P2PService/GetNetInfo', 'node.v1.ConfigService/GetSignerInfo']),
    );
  });

  it('answers CosmJS Comet38Client.status() with its height, not catching up', async () => {
    const client = await Comet38Client.connect(node.status);
    try {
      // Its height lies between the GetBlock heights read just before and just after (blocks keep coming meanwhile).
      const before = await latestHeight(node.rpc);
      const status = await client.status();
      const after = await latestHeight(node.rpc);
      expect(status.nodeInfo.network).toBe('devnet-test');
      expect(status.syncInfo.catchingUp).toBe(false);
      expect(status.syncInfo.latestBlockHeight).toBeGreaterThanOrEqual(before);
      expect(status.syncInfo.latestBlockHeight).toBeLessThanOrEqual(after);
      expect(status.syncInfo.latestBlockHash.length).toBe(32);
    } finally {
      client.disconnect();
    }
  });

  it('puts each posted tx in exactly one block, readable from the kv machine', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `once${i}`);
    for (const k of keys) {
      const res = await fetch(`${node.rpc}/tx`, { method: 'POST', body: `${k}=v-${k}` });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(((await res.json()) as any).tx_hash).toMatch(/^[0-9A-F]{64}$/);
    }
    await waitFor(async () => (await fetch(`${node.rpc}/kv/${keys.at(-1)}`)).status === 200, 'the last tx to be committed');
    expect(await (await fetch(`${node.rpc}/kv/once3`)).text()).toBe('v-once3');
    const seen = new Map<string, number>();
    const head = await latestHeight(node.rpc);
    for (let h = 1; h <= head; h++) {
      const { json } = await getBlockJson(node.rpc, { height: h });
      for (const tx of json.block.data.txs as string[]) {
        const text = Buffer.from(tx, 'base64').toString();
        seen.set(text, (seen.get(text) ?? 0) + 1);
      }
    }
    for (const k of keys) expect(seen.get(`${k}=v-${k}`), k).toBe(1);
  });

  it('links every block to the previous one, signed, with data_hash matching its txs', async () => {
    const head = await latestHeight(node.rpc);
    let prevHash: Uint8Array | null = null;
    for (let h = 1; h <= head; h++) {
      const { text } = await getBlockJson(node.rpc, { height: h });
      // Nanosecond times exceed 2^53: parse them exactly, as a client must.
      const res = readGetBlockJson(parseJsonExact(text) as never);
      const signed = res.block!.header!;
      const header = signed.header!;
      expect(header.height).toBe(BigInt(h));
      if (prevHash) expect(Buffer.from(header.lastHeaderHash).equals(Buffer.from(prevHash)), `link at ${h}`).toBe(true);
      expect(signedHeaderProblem(signed, header.proposerAddress), `signature at ${h}`).toBeNull();
      expect(Buffer.from(txsHash(res.block!.data!.txs)).equals(Buffer.from(header.dataHash)), `data_hash at ${h}`).toBe(true);
      prevHash = headerHash(header);
    }
  });

  it('reports live and ready health, plain and as JSON', async () => {
    const live = await fetch(`${node.rpc}/health/live`);
    expect([live.status, await live.text()]).toEqual([200, 'OK']);
    const ready = await fetch(`${node.rpc}/health/ready`);
    expect([ready.status, await ready.text()]).toEqual([200, 'READY']);
    const json = (await (await fetch(`${node.rpc}/health/ready`, { headers: { accept: 'application/json' } })).json()) as any;
    expect(json.status).toBe('pass');
    expect(json.checks.producing.status).toBe('pass');
  });

  it('serves the CometBFT-style status server: GET /status, JSON-RPC POST, /health, /block', async () => {
    const get = (await (await fetch(`${node.status}/status`)).json()) as any;
    expect(get.result.sync_info.catching_up).toBe(false);
    expect(get.result.sync_info.latest_block_height).toMatch(/^\d+$/);
    const post = (await (
      await fetch(node.status, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'status', params: {} }) })
    ).json()) as any;
    expect(post.id).toBe(7);
    expect(post.result.node_info.network).toBe('devnet-test');
    expect((await fetch(`${node.status}/health`)).status).toBe(200);
    const block = (await (await fetch(`${node.status}/block?height=2`)).json()) as any;
    expect(block.result.block.header.height).toBe('2');
    // A JSON-RPC error travels with HTTP 200, as CometBFT's do (CosmJS loses it on any status >= 400).
    const bad = await fetch(`${node.status}/block?height=abc`);
    expect(bad.status).toBe(200);
    expect(((await bad.json()) as any).error).toMatchObject({
      code: -32602,
      message: 'Invalid params',
      data: expect.stringMatching(/height must be an integer/),
    });
  });
});
