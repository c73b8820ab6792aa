import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { Request, Response } from 'cosmjs-types/tendermint/abci/types';
import {
  AbciClient,
  AbciConnection,
  AbciProtocolError,
  AbciServer,
  AbciUnavailableError,
  CODE_MALFORMED_TX,
  FrameBatch,
  FrameReader,
  KvStoreApp,
  decodeRequestOneof,
  decodeResponseOneof,
  encodeFrame,
  encodeRequest,
  encodeResponse,
} from '../../src/exec/abci/index.js';
import { createLogger, recentProblems, silentLogger } from '../../src/log/index.js';
import { freePort, tempHome, waitFor } from '../helpers/daemon.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dirs: Array<ReturnType<typeof tempHome>> = [];
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const d of dirs.splice(0)) d.cleanup();
});

function tempDir(): string {
  const d = tempHome('noded-abci-');
  dirs.push(d);
  return d.dir;
}

async function kvstoreServer(address = 'tcp://127.0.0.1:0', dir = tempDir()): Promise<AbciServer> {
  const server = await AbciServer.listen(address, new KvStoreApp(dir), silentLogger());
  closers.push(() => server.close());
  return server;
}

function client(address: string, callTimeoutMs = 5000): AbciClient {
  const c = new AbciClient({ address, logger: silentLogger(), callTimeoutMs });
  closers.push(() => c.close());
  return c;
}

/** A fake app on a free port that answers every chunk it reads with `reply(chunk)`. */
async function fakeApp(reply: (socket: Socket) => void): Promise<string> {
  const server: Server = createServer((socket) => socket.once('data', () => reply(socket)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `tcp://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('ABCI framing', () => {
  it('prefixes each message with its length as an unsigned varint, as CometBFT 0.38 (protoio) writes it', () => {
    // A Flush request is field 3 (0x12) with an empty body: 2 bytes, so the prefix is 0x02.
    const flush = encodeFrame(new Uint8Array([0x12, 0x00]));
    expect([...flush]).toEqual([0x02, 0x12, 0x00]);
    // 150 is 0x96 0x01 as a uvarint; a signed zigzag varint would be 0xac 0x02.
    expect([...encodeFrame(new Uint8Array(150)).subarray(0, 2)]).toEqual([0x96, 0x01]);
  });

  it('reassembles frames cut anywhere across chunks', () => {
    const bodies = [new Uint8Array(0), new Uint8Array(300).fill(7), enc('hello')];
    const stream = Buffer.concat(bodies.map(encodeFrame));
    for (let cut = 0; cut <= stream.length; cut += 37) {
      const reader = new FrameReader();
      const got = [...reader.push(stream.subarray(0, cut)), ...reader.push(stream.subarray(cut))];
      expect(got.map((b) => Buffer.from(b).toString('hex'))).toEqual(bodies.map((b) => Buffer.from(b).toString('hex')));
    }
  });

  it('writes batched frames byte for byte as cosmjs-types encodes them, and reads them back the same', () => {
    const big = new Uint8Array(20_000).fill(0x78);
    const requests: Array<[Parameters<FrameBatch['request']>[0], object]> = [
      ['checkTx', { tx: enc('k=v') }],
      ['checkTx', { tx: new Uint8Array(0) }],
      ['checkTx', { tx: big, type: 1 }],
      ['flush', {}],
      ['info', { version: '0.38.0', blockVersion: 11n, p2pVersion: 8n, abciVersion: '2.0.0' }],
      ['finalizeBlock', { height: 7n, txs: [enc('a=1'), big], time: { seconds: 3n, nanos: 9 } }],
    ];
    const responses: Array<[Parameters<FrameBatch['response']>[0], object]> = [
      ['checkTx', { code: 0 }],
      ['checkTx', {}],
      ['checkTx', { code: 300, codespace: 'kvstore', log: 'tx must be key=value — ünïcode' }],
      ['checkTx', { code: 5, gasWanted: 10n, gasUsed: 3n, events: [{ type: 'tx', attributes: [{ key: 'k', value: 'v', index: true }] }] }],
      ['checkTx', { code: 0, data: enc('d'), info: 'i' }],
      ['commit', { retainHeight: 0n }],
      ['exception', { error: 'boom' }],
    ];
    const out = new FrameBatch();
    for (const [method, body] of requests) out.request(method, body);
    const stream = out.take();
    expect(stream.toString('hex')).toBe(Buffer.concat(requests.map(([m, b]) => encodeFrame(encodeRequest(m, b as never)))).toString('hex'));
    const read = new FrameReader().push(stream).map((b) => decodeRequestOneof(b));
    expect(read).toEqual(requests.map(([m, b]) => ({ method: m, body: Request.fromPartial({ [m]: b } as never)[m] })));

    for (const [method, body] of responses) out.response(method, body);
    const answers = out.take();
    expect(answers.toString('hex')).toBe(Buffer.concat(responses.map(([m, b]) => encodeFrame(encodeResponse(m, b as never)))).toString('hex'));
    const back = new FrameReader().push(answers).map((b) => decodeResponseOneof(b));
    expect(back).toEqual(responses.map(([m, b]) => ({ method: m, body: Response.fromPartial({ [m]: b } as never)[m as 'checkTx'] })));
    expect(out.take()).toHaveLength(0);
  });

  it('refuses a varint longer than 10 bytes and a length above the limit', () => {
    expect(() => new FrameReader().push(Buffer.alloc(11, 0xff))).toThrow(/bad length prefix: a varint longer than 10 bytes/);
    expect(() => new FrameReader(1000).push(encodeFrame(new Uint8Array(1001)))).toThrow(
      /bad length prefix: a message of 1001 bytes, above the 1000-byte limit/,
    );
  });
});

describe('ABCI client against the reference kvstore app', () => {
  it('runs InitChain, CheckTx, FinalizeBlock, Commit, Info and Query over tcp', async () => {
    const server = await kvstoreServer();
    const c = client(server.address);
    expect((await c.info()).lastBlockHeight).toBe(0n);
    const genesis = await c.consensus.call('initChain', { chainId: 'kv-1', initialHeight: 1n, time: { seconds: 1n, nanos: 0 } });
    expect(genesis.appHash).toHaveLength(32);
    expect((await c.mempool.call('checkTx', { tx: enc('a=1') })).code).toBe(0);
    const bad = await c.mempool.call('checkTx', { tx: enc('no-equals-sign') });
    expect(bad).toMatchObject({ code: CODE_MALFORMED_TX, codespace: 'kvstore', log: 'tx must be key=value with a non-empty key' });
    const block = await c.consensus.call('finalizeBlock', { height: 1n, txs: [enc('a=1'), enc('bad'), enc('b=2')], time: { seconds: 2n, nanos: 0 } });
    expect(block.txResults.map((r) => r.code)).toEqual([0, CODE_MALFORMED_TX, 0]);
    await c.consensus.call('commit', {});
    const info = await c.info();
    expect(info.lastBlockHeight).toBe(1n);
    expect(Buffer.from(info.lastBlockAppHash).equals(Buffer.from(block.appHash))).toBe(true);
    const found = await c.query.call('query', { path: '/store', data: enc('b') });
    expect(Buffer.from(found.value).toString()).toBe('2');
    expect(found).toMatchObject({ code: 0, log: 'exists', height: 1n });
    expect(await c.query.call('query', { path: '/store', data: enc('zzz') })).toMatchObject({ code: 0, log: 'does not exist' });
  });

  it('answers pipelined CheckTx calls in order, many behind one Flush', async () => {
    const server = await kvstoreServer();
    const c = client(server.address);
    const txs = Array.from({ length: 2000 }, (_, i) => enc(i % 7 === 0 ? `bad${i}` : `k${i}=v`));
    const results = await Promise.all(txs.map((tx) => c.mempool.call('checkTx', { tx })));
    expect(results.map((r) => r.code)).toEqual(txs.map((_, i) => (i % 7 === 0 ? CODE_MALFORMED_TX : 0)));
  });

  it('an app that answers with promises: requests still handled one at a time, answered in order', async () => {
    let running = 0;
    let overlapped = false;
    const app = {
      async checkTx(request: { tx: Uint8Array }) {
        overlapped ||= running++ > 0;
        await new Promise((resolve) => setTimeout(resolve, request.tx[0]! % 3));
        running--;
        return { code: request.tx[0]! % 2 };
      },
      info: () => ({ data: 'async' }),
    };
    const server = await AbciServer.listen('tcp://127.0.0.1:0', app, silentLogger());
    closers.push(() => server.close());
    const c = client(server.address);
    const txs = Array.from({ length: 300 }, (_, i) => new Uint8Array([i % 256]));
    const [results, info] = await Promise.all([Promise.all(txs.map((tx) => c.mempool.call('checkTx', { tx }))), c.info()]);
    expect(results.map((r) => r.code)).toEqual(txs.map((tx) => tx[0]! % 2));
    expect(info.data).toBe('async');
    expect(overlapped).toBe(false);
  });

  it('speaks over a unix socket too', async () => {
    const path = join(tempDir(), 'app.sock');
    await kvstoreServer(`unix://${path}`);
    expect((await client(`unix://${path}`).info()).data).toBe('kvstore');
  });

  it('keeps its state across restarts, and drops a torn last line', async () => {
    const dir = tempDir();
    const first = await kvstoreServer('tcp://127.0.0.1:0', dir);
    const c = client(first.address);
    await c.consensus.call('initChain', { chainId: 'kv-2', initialHeight: 1n });
    let hash: Uint8Array = new Uint8Array();
    for (let h = 1n; h <= 3n; h++) {
      hash = (await c.consensus.call('finalizeBlock', { height: h, txs: [enc(`k${h}=v${h}`)] })).appHash;
      await c.consensus.call('commit', {});
    }
    c.close();
    await first.close();
    const { appendFileSync } = await import('node:fs');
    appendFileSync(join(dir, 'kvstore.log'), '{"height":4,"app_hash":"ab');
    const again = new KvStoreApp(dir);
    const info = again.info();
    expect(info.lastBlockHeight).toBe(3n);
    expect(Buffer.from(info.lastBlockAppHash as Uint8Array).toString('hex')).toBe(Buffer.from(hash).toString('hex'));
    expect(Buffer.from(again.query({ path: '/store', data: enc('k2'), height: 0n, prove: false }).value as Uint8Array).toString()).toBe('v2');
  });
});

describe('ABCI client: a misbehaving or absent app fails clearly, never hangs', () => {
  const cases: Array<[string, (socket: Socket) => void, RegExp]> = [
    ['a bad length prefix', (s) => s.write(Buffer.alloc(11, 0xff)), /sent a malformed frame: bad length prefix: a varint longer than 10 bytes/],
    [
      'a length above the limit',
      (s) => s.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])),
      /sent a malformed frame: bad length prefix: a message of \d+ bytes, above the 104857600-byte limit/,
    ],
    ['a frame that is not protobuf', (s) => s.write(encodeFrame(Buffer.from([0xff, 0xff, 0xff]))), /sent a frame that is not an ABCI Response/],
    ['an unknown response type', (s) => s.write(encodeFrame(Buffer.from([0xfa, 0x06, 0x00]))), /sent an unknown response \(no ABCI 2\.0 response type set\)/],
    ['a response to another request', (s) => s.write(encodeFrame(encodeResponse('commit', {}))), /answered Info with a Commit response/],
    [
      'an exception',
      (s) => s.write(encodeFrame(Response.encode(Response.fromPartial({ exception: { error: 'boom' } })).finish())),
      /answered to Info with an exception: boom/,
    ],
    ['no answer at all', () => undefined, /did not answer Info within 0\.3s; is the app stuck\?/],
  ];
  for (const [what, reply, message] of cases) {
    it(`${what}: AbciProtocolError naming it`, async () => {
      const c = client(await fakeApp(reply), 300);
      const err = await c.info().catch((e) => e);
      expect(err).toBeInstanceOf(AbciProtocolError);
      expect(err.message).toMatch(/the ABCI app at tcp:\/\/127\.0\.0\.1:\d+ \(query connection\)/);
      expect(err.message).toMatch(message);
    });
  }

  it('an app that is not there: a call fails at once, or waits (logging what for) until the app comes up', async () => {
    const port = await freePort();
    const address = `tcp://127.0.0.1:${port}`;
    const quiet = client(address);
    await expect(quiet.info()).rejects.toThrow(AbciUnavailableError);
    await expect(quiet.info()).rejects.toThrow(/is not reachable: ECONNREFUSED/);

    const logger = createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, done) => done() }) });
    const waiting = new AbciConnection({ address, name: 'consensus', callTimeoutMs: 5000, logger, maxRetryDelayMs: 50 });
    closers.push(() => waiting.close());
    const info = waiting.call('info', {}, { waitForApp: true });
    await waitFor(
      () => recentProblems(logger).some((p) => p.msg.includes(`waiting for the ABCI app at ${address}: ECONNREFUSED`)),
      'a warning naming the app it waits for',
    );
    await kvstoreServer(address);
    expect((await info).data).toBe('kvstore');
  });

  it('a dropped connection fails the calls on it as unavailable; the next call dials again', async () => {
    const server = await kvstoreServer();
    const c = client(server.address);
    await c.info();
    const generation = c.query.generation;
    await server.close();
    await expect(c.info()).rejects.toThrow(AbciUnavailableError);
    const port = server.address.split(':').pop();
    await kvstoreServer(`tcp://127.0.0.1:${port}`);
    expect((await c.info()).data).toBe('kvstore');
    expect(c.query.generation).toBe(generation + 1);
    await expect(c.query.call('info', {}, { generation })).rejects.toThrow(/was lost since the app was last in step/);
  });
});
