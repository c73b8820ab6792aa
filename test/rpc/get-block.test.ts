import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeListenerMove } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { BlockJsonCache } from '../../src/rpc/block-json-cache.js';
import { parseSpecJsonRequest, writeSpecJson } from '../../src/rpc/json.js';
import { ParsedRequests } from '../../src/rpc/parsed-requests.js';
import { listen } from '../../src/rpc/listen.js';
import { RpcServer } from '../../src/rpc/rpc-server.js';
import type { RpcBackend } from '../../src/rpc/backend.js';
import { BlockStore, decodeStoredBlock } from '../../src/store/index.js';
import { Ed25519Key, GetBlockRequestSchema, GetBlockResponseSchema, StateSchema, headerHash } from '../../src/types/index.js';
import { sampleBlock } from '../helpers/blocks.js';
import { getBlockJson, tempHome } from '../helpers/daemon.js';

const signer = Ed25519Key.generate();
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A real store behind a real RPC listener; the backend has only what GetBlock reads. */
async function serve(): Promise<{ store: BlockStore; rpc: string }> {
  const home = tempHome();
  cleanups.push(home.cleanup);
  const store = await BlockStore.open(join(home.dir, 'store'));
  cleanups.push(() => store.close());
  const backend: Pick<RpcBackend, 'store'> = { store };
  const server = new RpcServer(backend as RpcBackend, silentLogger());
  const listener = await listen('127.0.0.1:0', server.handler, nodeListenerMove('rpc.address', '127.0.0.1:0'));
  cleanups.push(() => listener.close());
  return { store, rpc: `http://127.0.0.1:${listener.address.port}` };
}

async function commit(store: BlockStore, height: bigint): Promise<Uint8Array> {
  const block = sampleBlock(height, signer);
  const hash = headerHash(block.header!.header!);
  await store.commitBlock(block, hash, create(StateSchema, { lastBlockHeight: height }));
  return hash;
}

/** GetBlock's JSON as written from the store, without the cache. */
async function uncachedJson(store: BlockStore, height: bigint): Promise<string> {
  const stored = (await store.getBlock(height))!;
  return writeSpecJson(
    GetBlockResponseSchema,
    create(GetBlockResponseSchema, { block: decodeStoredBlock(stored), headerDaHeight: stored.headerDaHeight, dataDaHeight: stored.dataDaHeight }),
  );
}

describe('GetBlock JSON answers', () => {
  it('stay byte-identical to the written JSON, and follow the DA heights as blocks are included', async () => {
    const { store, rpc } = await serve();
    await commit(store, 1n);
    const first = await getBlockJson(rpc, { height: 1 });
    const again = await getBlockJson(rpc, { height: 1 });
    expect(first.status).toBe(200);
    expect(first.text).toBe(await uncachedJson(store, 1n));
    expect(again.text).toBe(first.text);
    expect([first.json.header_da_height, first.json.data_da_height]).toEqual([0, 0]);

    await store.markDaIncluded(1n, 1n, 7n, 8n);
    const included = await getBlockJson(rpc, { height: 1 });
    expect([included.json.header_da_height, included.json.data_da_height]).toEqual([7, 8]);
    expect(included.text).toBe(await uncachedJson(store, 1n));

    await store.setDaHeights(1n, 9n, 10n);
    const moved = await getBlockJson(rpc, { height: 1 });
    expect([moved.json.header_da_height, moved.json.data_da_height]).toEqual([9, 10]);
  });

  it('answer height 0 with the latest block as it changes, and a hash with its block', async () => {
    const { store, rpc } = await serve();
    expect((await getBlockJson(rpc, { height: 0 })).status).toBe(404);
    const hash1 = await commit(store, 1n);
    expect((await getBlockJson(rpc, { height: 0 })).json.block.header.header.height).toBe(1);
    await commit(store, 2n);
    expect((await getBlockJson(rpc, { height: 0 })).json.block.header.header.height).toBe(2);
    const byHash = await getBlockJson(rpc, { hash: Buffer.from(hash1).toString('base64') });
    expect(byHash.text).toBe(await uncachedJson(store, 1n));
    const missing = await getBlockJson(rpc, { height: 3 });
    expect([missing.status, missing.json.message]).toEqual([404, 'no block at height 3 (latest is 2)']);
  });
});

describe('GetBlock with Connect headers', () => {
  const request = (height: bigint) => toBinary(GetBlockRequestSchema, create(GetBlockRequestSchema, { identifier: { case: 'height', value: height } }));
  /** Connect unary: application/proto goes to connect-node, application/json to the spec's JSON path. */
  const post = (rpc: string, contentType: string, headers: Record<string, string>, body: Uint8Array | string) =>
    fetch(rpc + '/node.v1.StoreService/GetBlock', { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });

  it('takes a gzip-compressed binary request (Content-Encoding: gzip)', async () => {
    const { store, rpc } = await serve();
    await commit(store, 1n);
    const res = await post(rpc, 'application/proto', { 'content-encoding': 'gzip' }, gzipSync(request(1n)));
    expect(res.status, res.headers.get('content-type') ?? '').toBe(200);
    const answer = fromBinary(GetBlockResponseSchema, new Uint8Array(await res.arrayBuffer()));
    expect(answer.block?.header?.header?.height).toBe(1n);
    // The same bytes without the header do not decode: invalid_argument (connect-go's answer), not internal.
    const bare = await post(rpc, 'application/proto', {}, gzipSync(request(1n)));
    expect(bare.status).toBe(400);
    expect(await bare.json()).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/^parse binary:/) });
  });

  it('takes a gzip-compressed JSON request and refuses an unknown encoding', async () => {
    const { store, rpc } = await serve();
    await commit(store, 1n);
    const res = await post(rpc, 'application/json', { 'content-encoding': 'gzip' }, gzipSync('{"height":1}'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(await uncachedJson(store, 1n));
    const odd = await post(rpc, 'application/json', { 'content-encoding': 'lz4' }, '{"height":1}');
    expect(odd.status).toBe(501);
    expect(await odd.json()).toMatchObject({ code: 'unimplemented', message: expect.stringMatching(/unknown compression "lz4"/) });
  });

  it('reads connect-timeout-ms, binary and JSON: a deadline is taken, a malformed one refused', async () => {
    const { store, rpc } = await serve();
    await commit(store, 1n);
    for (const [contentType, body] of [
      ['application/proto', request(1n)],
      ['application/json', '{"height":1}'],
    ] as const) {
      expect((await post(rpc, contentType, { 'connect-timeout-ms': '60000' }, body)).status, contentType).toBe(200);
      const bad = await post(rpc, contentType, { 'connect-timeout-ms': 'soon' }, body);
      expect(bad.status, contentType).toBe(400);
      expect(await bad.json()).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/invalid connect timeout value: soon/) });
    }
  });
});

describe('BlockJsonCache', () => {
  const json = (n: number) => new Uint8Array(n);

  it('drops the least recently used answers past its byte bound', () => {
    const cache = new BlockJsonCache(30);
    cache.set(1n, json(10), cache.readStamp());
    cache.set(2n, json(10), cache.readStamp());
    cache.set(3n, json(10), cache.readStamp());
    expect(cache.get(1n)).toBeDefined(); // now the most recent
    cache.set(4n, json(10), cache.readStamp());
    expect([1n, 2n, 3n, 4n].map((h) => cache.get(h) !== undefined)).toEqual([true, false, true, true]);
    cache.set(5n, json(31), cache.readStamp());
    expect(cache.get(5n)).toBeUndefined();
  });

  it('keeps the recency order when the most recent height is asked again', () => {
    const cache = new BlockJsonCache(30);
    cache.set(1n, json(10), cache.readStamp());
    cache.set(2n, json(10), cache.readStamp());
    cache.get(2n);
    cache.get(2n);
    cache.get(1n); // now the most recent: 2 is the oldest
    cache.evict(1n);
    cache.set(3n, json(10), cache.readStamp());
    cache.set(1n, json(10), cache.readStamp());
    cache.set(4n, json(10), cache.readStamp());
    expect([1n, 2n, 3n, 4n].map((h) => cache.get(h) !== undefined)).toEqual([true, false, true, true]);
  });

  it('does not keep an answer read before an eviction', () => {
    const cache = new BlockJsonCache(100);
    const stamp = cache.readStamp();
    cache.evict(1n);
    cache.set(1n, json(10), stamp);
    expect(cache.get(1n)).toBeUndefined();
    cache.set(1n, json(10), cache.readStamp());
    cache.evict(1n);
    expect(cache.get(1n)).toBeUndefined();
  });
});

describe('ParsedRequests', () => {
  /** Counts the parses behind a ParsedRequests of GetBlock requests. */
  function counted(maxEntries?: number, maxBodyBytes?: number) {
    let parses = 0;
    const requests = new ParsedRequests(
      (body) => {
        parses++;
        return parseSpecJsonRequest(GetBlockRequestSchema, body);
      },
      maxEntries,
      maxBodyBytes,
    );
    return { requests, parses: () => parses };
  }

  it('parses a body once and answers the same message for it again', () => {
    const { requests, parses } = counted();
    const first = requests.get(Buffer.from('{"height":7}'));
    expect(requests.get(Buffer.from('{"height":7}'))).toBe(first);
    expect(first.identifier).toEqual({ case: 'height', value: 7n });
    expect(requests.get(Buffer.from('{"height": 7}'))).not.toBe(first); // other bytes, parsed anew
    expect(parses()).toBe(2);
  });

  it('keeps no failed parse, no large body and at most its bound of bodies', () => {
    const { requests, parses } = counted(2, 16);
    for (let i = 0; i < 2; i++) expect(() => requests.get(Buffer.from('{"height":-1}'))).toThrow('height must be a non-negative integer, got -1');
    expect(parses()).toBe(2);
    const large = Buffer.from('{"height":1}'.padEnd(17, ' '));
    requests.get(large);
    requests.get(large);
    expect(parses()).toBe(4);
    const bodies = ['{"height":1}', '{"height":2}', '{"height":3}'].map((b) => Buffer.from(b));
    for (const b of bodies) requests.get(b);
    requests.get(bodies[2]!);
    requests.get(bodies[1]!);
    expect(parses()).toBe(7);
    requests.get(bodies[0]!); // the oldest, dropped for the third
    expect(parses()).toBe(8);
  });
});
