import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../src/log/index.js';
import { Node } from '../../src/node/index.js';
import { getBlockJson, type tempHome, waitFor } from '../helpers/daemon.js';
import { portZeroHome } from '../helpers/node-parts.js';

// A real node in this process, on real sockets: bad input must never cost it a block or its RPC.
let home: ReturnType<typeof tempHome>;
let node: Node;
let rpc: string;

beforeAll(async () => {
  // Port 0 everywhere: the suite must pass while a devnet holds the default ports.
  const made = portZeroHome('input-1');
  home = made.home;
  const config = made.config;
  node = await Node.init({ home: home.dir, config, logger: silentLogger(), version: 'test' });
  node.start((err) => {
    throw err;
  });
  rpc = `http://127.0.0.1:${node.listeners.rpc.address.port}`;
  await waitFor(() => node.chain.height >= 2n, 'two blocks');
});

afterAll(async () => {
  await node?.close();
  home?.cleanup();
});

async function post(body: string | Uint8Array, contentType = 'application/json') {
  const res = await fetch(`${rpc}/node.v1.StoreService/GetBlock`, { method: 'POST', headers: { 'content-type': contentType }, body });
  const text = await res.text();
  return { status: res.status, text };
}

describe('GetBlock with bad input', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['string height', '{"height":"abc"}', /height must be a non-negative integer, got "abc"/],
    ['negative height', '{"height":-1}', /height must be a non-negative integer, got -1/],
    ['fractional height', '{"height":1.5}', /got 1\.5/],
    ['huge height', '{"height":1e30}', /out of range/],
    ['height above 2^64-1', '{"height":18446744073709551616}', /out of range/],
    ['height and hash', `{"height":1,"hash":"${Buffer.alloc(32).toString('base64')}"}`, /either height or hash, not both/],
    ['short hash', '{"hash":"AAAA"}', /hash must be 32 bytes/],
    ['unknown field', '{"heigth":1}', /unknown field "heigth"/],
    ['not JSON', 'height=2', /not valid JSON/],
    ['JSON array', '[1,2]', /./],
  ];
  for (const [name, body, message] of cases) {
    it(`${name} → invalid_argument (400) with a clear message`, async () => {
      const res = await post(body);
      expect(res.status, res.text).toBe(400);
      const err = JSON.parse(res.text);
      expect(err.code).toBe('invalid_argument');
      expect(err.message).toMatch(message);
    });
  }

  it('a 5 MB body → 4xx naming the limit, and the connection stays usable', async () => {
    const res = await post('{"height":' + ' '.repeat(5 * 1024 * 1024) + '1}');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(JSON.parse(res.text).message).toMatch(/exceeds the limit of 1048576 bytes/);
  });

  it('a wrong content type → 4xx, never 500', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/proto']) {
      const res = await post('{"height":1}', type);
      expect(res.status, `${type}: ${res.text}`).toBeGreaterThanOrEqual(400);
      expect(res.status, type).toBeLessThan(500);
    }
  });

  it('no content type, or a GET → a Connect error naming the content types taken', async () => {
    const none = await fetch(`${rpc}/node.v1.StoreService/GetBlock`, { method: 'POST', body: new Uint8Array(Buffer.from('{"height":1}')) });
    const text = await none.text();
    expect(none.status, text).toBe(415);
    expect(JSON.parse(text)).toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/content type "\(none\)".*application\/json or application\/proto/),
    });
    const get = await fetch(`${rpc}/node.v1.StoreService/GetBlock`);
    expect(get.status).toBe(405);
    expect(((await get.json()) as { message: string }).message).toMatch(/takes POST, not GET; send POST with Content-Type application\/json/);
  });

  it('500 random bodies: each a 4xx Connect error or a block, never 500, and the node keeps serving', async () => {
    const heightBefore = node.chain.height;
    const generators = [
      () => randomBytes(1 + Math.floor(Math.random() * 200)),
      () => JSON.stringify({ height: [Math.random(), -Math.random() * 1e20, 'x', null, true, {}, []][Math.floor(Math.random() * 7)] }),
      () => JSON.stringify({ [randomBytes(4).toString('hex')]: Math.random() }),
      () => JSON.stringify({ hash: randomBytes(Math.floor(Math.random() * 64)).toString('base64') }),
      () => '{"height":' + '9'.repeat(1 + Math.floor(Math.random() * 40)) + '}',
      () => JSON.stringify(JSON.stringify({ height: 1 })),
      () => '{'.repeat(Math.floor(Math.random() * 5000)),
    ];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 500; i++) {
      const body = generators[i % generators.length]!();
      const res = await post(body);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.status, `body ${JSON.stringify(String(body).slice(0, 80))}: ${res.text}`).toBeLessThan(500);
      if (res.status !== 200) expect(JSON.parse(res.text).code).toMatch(/^[a-z_]+$/);
    }
    expect(statuses.get(400)).toBeGreaterThan(0);
    const ok = await getBlockJson(rpc, { height: 1 });
    expect(ok.status).toBe(200);
    await waitFor(() => node.chain.height > heightBefore, 'production to go on');
  });
});

describe('POST /tx and GET /kv with bad input', () => {
  it('rejects a tx that is not key=value, an empty body, and a too-large tx, with clear bodies', async () => {
    const bad = await fetch(`${rpc}/tx`, { method: 'POST', body: 'no-equals-sign' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatch(/key=value/);
    const empty = await fetch(`${rpc}/tx`, { method: 'POST', body: '' });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as any).error).toMatch(/empty body/);
    const big = await fetch(`${rpc}/tx`, { method: 'POST', body: 'k=' + 'x'.repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as any).error).toMatch(/exceeds/);
    const get = await fetch(`${rpc}/tx`);
    expect(get.status).toBe(405);
  });

  it('answers 404 for a missing key and 400 for bad percent-encoding', async () => {
    const missing = await fetch(`${rpc}/kv/never-written`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error).toMatch(/no value for key "never-written"/);
    const badEncoding = await fetch(`${rpc}/kv/%E0%A4%A`);
    expect(badEncoding.status).toBe(400);
  });

  it('names unknown routes with 404', async () => {
    const res = await fetch(`${rpc}/nope`);
    expect(res.status).toBe(404);
  });
});
