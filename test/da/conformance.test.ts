import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DaClient, submitOptions, type Blob } from '../../src/da/client.js';
import { DaError, type DaFailureReason } from '../../src/da/errors.js';
import { DaErrorText, DaMethod } from '../../src/da/types.js';
import { daNamespace } from '../../src/config/index.js';
import { initHome } from '../../src/home/index.js';
import { silentLogger } from '../../src/log/index.js';
import { LocalDa, localCommitment } from '../../src/da/local/index.js';
import { Daemon, freePort, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor } from '../helpers/daemon.js';
import { headerPostings } from '../helpers/da.js';
import { CelestiaNodeFixture, INVALID_REQUEST_BODY } from './fixtures/celestia-node.js';

/**
 * The DA client's cases against two servers that must agree: the built-in DA
 * (`da.local`, `noded da serve`) and a fixture that replays celestia-node's
 * answers (fixtures/celestia-node.ts, each answer cited to its source).
 */

const TOKEN = 'conformance-token';
const NS = daNamespace('conformance');

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(killAll);

function newDir(): string {
  const h = tempHome('noded-conformance-');
  cleanups.push(h.cleanup);
  return h.dir;
}

/** A DA server under test: its address, and how to make the next blob.Submit fail with a given celestia text. */
interface Target {
  address: string;
  failNextSubmit(text: typeof DaErrorText.txInCache): Promise<void>;
}

const targets: Record<string, () => Promise<Target>> = {
  'the built-in DA': async () => {
    const da = await LocalDa.start({
      dir: join(newDir(), 'local-da'),
      listen: '127.0.0.1:0',
      blockTimeMs: 50,
      maxBlobSize: 1_974_272,
      authToken: TOKEN,
      logger: silentLogger(),
    });
    cleanups.push(() => da.close());
    return { address: da.address, failNextSubmit: async () => void (await da.setFaults({ submitError: 'already_in_cache', submitErrorCount: 1 })) };
  },
  'the celestia-node fixture': async () => {
    const fixture = await CelestiaNodeFixture.start({ token: TOKEN, blockTimeMs: 50 });
    cleanups.push(() => fixture.close());
    return {
      address: fixture.address,
      failNextSubmit: async (text) => {
        fixture.nextSubmitError = text;
      },
    };
  },
};

function clientOf(address: string, authToken = TOKEN): DaClient {
  const client = new DaClient({ address, authToken, requestTimeoutMs: 10_000 });
  cleanups.push(() => client.close());
  return client;
}

function blob(text: string): Blob {
  const data = Buffer.from(text);
  return { namespace: NS, data, commitment: localCommitment(NS, data) };
}

async function failure(p: Promise<unknown>): Promise<DaError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DaError) return err;
    throw err;
  }
  throw new Error('expected the DA call to fail');
}

const reasonOf = async (p: Promise<unknown>): Promise<DaFailureReason | 'ok'> =>
  p.then(
    () => 'ok' as const,
    (err: DaError) => err.reason,
  );

/** A raw JSON-RPC POST, for the answers whose bytes the two servers must share. */
async function post(address: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
  const res = await fetch(address, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.text() };
}

const submitCall = (txConfig: unknown) => ({
  jsonrpc: '2.0',
  id: 7,
  method: DaMethod.submit,
  params: [[{ namespace: Buffer.from(NS).toString('base64'), data: Buffer.from('raw').toString('base64'), share_version: 0 }], txConfig],
});

describe('TxConfig as celestia-node reads it (state/txclient/tx_config.go)', () => {
  it('leaves out every field at its unset value and never sends a negative cap', () => {
    expect(submitOptions({ gasPrice: -1, maxGasPrice: 0 })).toEqual({});
    expect(submitOptions({ gasPrice: 0.01, maxGasPrice: 0 })).toEqual({ gas_price: 0.01, is_gas_price_set: true });
    expect(submitOptions({ gasPrice: 0, maxGasPrice: 0 })).toEqual({ is_gas_price_set: true });
    expect(submitOptions({ gasPrice: -1, maxGasPrice: 0.5 })).toEqual({ max_gas_price: 0.5 });
    expect(submitOptions({ gasPrice: -1, maxGasPrice: -1 })).toEqual({});
  });
});

describe("blob.Submit's body", () => {
  it('is the bytes JSON.stringify makes of the call, prepared ahead or not; an array grown since it was prepared is sent whole', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        bodies.push(body);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id, result: 5 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const client = clientOf(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    // A blob whose bytes are a view into a larger buffer: only the view is sent.
    const backing = Buffer.from('xxviewxx');
    const blobs = [blob('a'), { namespace: NS, data: backing.subarray(2, 6), commitment: localCommitment(NS, backing.subarray(2, 6)) }];
    const config = submitOptions({ gasPrice: 0.002, maxGasPrice: 0 });
    const expected = (id: number, sent: Blob[]) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: DaMethod.submit,
        params: [
          sent.map((b) => ({
            namespace: Buffer.from(b.namespace).toString('base64'),
            data: Buffer.from(b.data).toString('base64'),
            share_version: 0,
            commitment: Buffer.from(b.commitment).toString('base64'),
            index: -1,
          })),
          config,
        ],
      });
    expect(await client.submit(blobs, config)).toBe(5n);
    client.prepareSubmit(blobs);
    await client.submit(blobs, config);
    blobs.push(blob('added after'));
    await client.submit(blobs, config);
    expect(bodies).toEqual([expected(1, blobs.slice(0, 2)), expected(2, blobs.slice(0, 2)), expected(3, blobs)]);
  });
});

describe.each(Object.keys(targets))('the DA client against %s', (name) => {
  const start = targets[name]!;

  it('submits with the defaults (the DA node estimates under its default cap) and reads the blobs back', async () => {
    const client = clientOf((await start()).address);
    const height = await client.submit([blob('defaults')], submitOptions({ gasPrice: -1, maxGasPrice: 0 }));
    expect((await client.getAll(height, [NS])).map((b) => Buffer.from(b.data).toString())).toEqual(['defaults']);
  });

  it('submits blobs whose body was prepared ahead, and an array grown since it was prepared, and reads them back', async () => {
    const client = clientOf((await start()).address);
    const blobs = [blob('prepared one'), blob('prepared two')];
    client.prepareSubmit(blobs);
    const first = await client.submit(blobs, {});
    const grown = [blob('grown one')];
    client.prepareSubmit(grown);
    grown.push(blob('grown two'));
    const second = await client.submit(grown, {});
    const texts = async (height: bigint) => (await client.getAll(height, [NS])).map((b) => Buffer.from(b.data).toString());
    expect([...(await texts(first)), ...(second === first ? [] : await texts(second))]).toEqual(['prepared one', 'prepared two', 'grown one', 'grown two']);
  });

  it('with a gas price set it is paid as set, even above the cap (celestia-node caps only its own estimate)', async () => {
    const client = clientOf((await start()).address);
    expect(await reasonOf(client.submit([blob('set')], submitOptions({ gasPrice: 0.01, maxGasPrice: 0 })))).toBe('ok');
    expect(await reasonOf(client.submit([blob('set high')], submitOptions({ gasPrice: 1, maxGasPrice: 0.001 })))).toBe('ok');
  });

  it('with a max gas price: above the estimate it submits; below it the DA node refuses, and the remedy names both keys', async () => {
    const client = clientOf((await start()).address);
    expect(await reasonOf(client.submit([blob('cap')], submitOptions({ gasPrice: -1, maxGasPrice: 1 })))).toBe('ok');
    const err = await failure(client.submit([blob('low cap')], submitOptions({ gasPrice: -1, maxGasPrice: 0.001 })));
    expect(err.reason).toBe('gas_price_above_cap');
    expect(err.message).toContain(DaErrorText.gasPriceExceedsLimit);
    expect(err.remedy).toMatch(/raise --node\.da\.max_gas_price .* or set --node\.da\.gas_price/);
  });

  it('negative values: a negative cap refuses every estimate; a negative gas is a Go decoding error', async () => {
    const client = clientOf((await start()).address);
    // What noded sent before: max_gas_price -1.
    expect(await reasonOf(client.submit([blob('neg cap')], { max_gas_price: -1 }))).toBe('gas_price_above_cap');
    const gas = await failure(client.submit([blob('neg gas')], { gas: -1 }));
    expect(gas.reason).toBe('other');
    expect(gas.message).toContain('json: cannot unmarshal number -1 into Go struct field jsonTxConfig.gas of type uint64');
  });

  it('without a token: "missing permission" (HTTP 200), read as unauthorized, saying the token is missing and how to make one', async () => {
    const client = clientOf((await start()).address, '');
    const head = await failure(client.networkHead());
    expect(head.reason).toBe('unauthorized');
    expect(head.message).toMatch(/missing permission to invoke 'NetworkHead' \(need 'read'\): no auth token is set \(da\.auth_token is empty\)$/);
    const submit = await failure(client.submit([blob('no token')], {}));
    expect(submit.message).toContain("missing permission to invoke 'Submit' (need 'write')");
    expect(submit.remedy).toContain('celestia <light|bridge> auth write --p2p.network <network>');
    expect(submit.remedy).toContain('da.auth_token');
  });

  it('with a wrong token: HTTP 401, read as unauthorized, never echoing the token', async () => {
    const err = await failure(clientOf((await start()).address, 'not-the-token').submit([blob('wrong')], {}));
    expect(err.reason).toBe('unauthorized');
    expect(err.message).toMatch(/HTTP 401: the DA node rejected the token in da\.auth_token/);
    expect(err.message).not.toContain('not-the-token');
  });

  it('a height without blobs is an empty list (null on the wire)', async () => {
    const target = await start();
    expect(await clientOf(target.address).getAll(1n, [NS])).toEqual([]);
    const raw = await post(target.address, { jsonrpc: '2.0', id: 3, method: DaMethod.getAll, params: [1, [Buffer.from(NS).toString('base64')]] });
    expect(raw).toEqual({ status: 200, body: '{"id":3,"jsonrpc":"2.0","result":null}\n' });
  });

  it('"tx already exists in cache": its own reason, without raising the gas price', async () => {
    const target = await start();
    await target.failNextSubmit(DaErrorText.txInCache);
    const err = await failure(clientOf(target.address).submit([blob('cached')], {}));
    expect(err.reason).toBe('already_in_cache');
    expect(err.remedy).toMatch(/looks for it on DA before posting again/);
  });

  it('a GET on the RPC port is go-jsonrpc\'s HTTP 400 "Invalid request"', async () => {
    const res = await fetch(`${(await start()).address}/`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe(INVALID_REQUEST_BODY);
  });

  it('header.NetworkHead, header.SyncState and state.Balance', async () => {
    const client = clientOf((await start()).address);
    expect(await client.networkHead()).toBeGreaterThanOrEqual(1n);
    const sync = await client.syncState();
    expect(sync.to_height).toBeLessThanOrEqual(sync.height);
    expect(await client.balance()).toMatchObject({ denom: 'utia', amount: expect.stringMatching(/^\d+$/) });
  });
});

describe('the two servers answer byte for byte alike', () => {
  it('errors, refusals and an empty height', async () => {
    const [local, fixture] = await Promise.all(Object.values(targets).map((start) => start()));
    const cases: Array<[string, (address: string) => Promise<{ status: number; body: string }>]> = [
      ['GET /', async (a) => fetch(a).then(async (r) => ({ status: r.status, body: await r.text() }))],
      ['no token', (a) => post(a, { jsonrpc: '2.0', id: 1, method: DaMethod.networkHead, params: [] }, {})],
      ['no token, Submit', (a) => post(a, submitCall({}), {})],
      ['wrong token', (a) => post(a, { jsonrpc: '2.0', id: 1, method: DaMethod.networkHead, params: [] }, { authorization: 'Bearer nope' })],
      ['negative cap', (a) => post(a, submitCall({ max_gas_price: -1 }))],
      ['cap below the estimate', (a) => post(a, submitCall({ max_gas_price: 0.001 }))],
      ['negative gas', (a) => post(a, submitCall({ gas: -1 }))],
      ['gas_price as a string', (a) => post(a, submitCall({ gas_price: '0.1', is_gas_price_set: true }))],
      ['unknown method', (a) => post(a, { jsonrpc: '2.0', id: 'x', method: 'blob.Nope', params: [] })],
      ['wrong param count', (a) => post(a, { jsonrpc: '2.0', id: 2, method: DaMethod.submit, params: [] })],
      ['empty height', (a) => post(a, { jsonrpc: '2.0', id: 4, method: DaMethod.getAll, params: [1, [Buffer.from(NS).toString('base64')]] })],
    ];
    for (const [what, run] of cases) expect(await run(local!.address), what).toEqual(await run(fixture!.address));
  });

  it('blob: not found from a celestia-node before v0.15 is read as no blobs', async () => {
    const fixture = await CelestiaNodeFixture.start({ token: TOKEN, legacyBlobNotFound: true });
    cleanups.push(() => fixture.close());
    expect(await clientOf(fixture.address).getAll(1n, [NS])).toEqual([]);
  });
});

describe('an aggregator against the celestia-node fixture (default config)', () => {
  /** A fresh aggregator home whose node.yml points at `da` (with `token`, when given) on free ports, as doctor reads it. */
  async function aggregatorHome(da: string, token: string): Promise<{ home: string; args: string[] }> {
    const home = newDir();
    const config = {
      'rpc.address': `127.0.0.1:${await freePort()}`,
      'rpc.status_address': `127.0.0.1:${await freePort()}`,
      'p2p.listen_address': `/ip4/127.0.0.1/tcp/${await freePort()}`,
      'da.address': da,
      ...(token ? { 'da.auth_token': token } : {}),
    } as const;
    initHome({ home, chainId: 'conformance-1', aggregator: true, force: false, config });
    const args = [
      '--node.rpc.address',
      config['rpc.address'],
      '--node.rpc.status_address',
      config['rpc.status_address'],
      '--no-node.da.local',
      '--node.da.address',
      da,
    ];
    return { home, args };
  }

  it('with the token: posts every block, and noded doctor is all ok', async () => {
    const fixture = await CelestiaNodeFixture.start({ token: TOKEN });
    cleanups.push(() => fixture.close());
    const { home, args } = await aggregatorHome(fixture.address, TOKEN);
    const node = await Daemon.start(home, [...args, '--node.node.block_time', '100ms']);
    cleanups.push(() => node.kill());
    await waitFor(async () => (await latestHeight(node.rpc)) >= 5, 'five blocks', 30_000);
    await waitFor(
      async () => {
        for (let h = 1; h <= 5; h++) if ((await getBlockJson(node.rpc, { height: h })).json?.header_da_height <= 0) return false;
        return true;
      },
      'blocks 1-5 on DA',
      30_000,
    );
    // Default config: the DA node estimates under its own cap, so every TxConfig went out empty.
    expect(fixture.accepted.length).toBeGreaterThan(0);
    for (const config of fixture.accepted) expect(config).toEqual({});

    const doctor = await runCli(['doctor', '--home', home, '--json', '--timeout', '3s']);
    const results = JSON.parse(doctor.stdout) as Array<{ id: string; status: string; message: string }>;
    for (const r of results) expect(r.status, `${r.id}: ${r.message}`).toBe('ok');
    expect(doctor.code).toBe(0);
    const byId = Object.fromEntries(results.map((r) => [r.id, r.message]));
    expect(byId['da-health']).toMatch(/JSON-RPC header\.NetworkHead: height \d+ in \d+ ms; GET \/health: HTTP 400/);
    expect(byId['da-sync']).toMatch(/\(JSON-RPC header\.SyncState in \d+ ms; GET \/header\/sync_state answered HTTP 400\)/);
  });

  it('answers lost after the PFB was broadcast (included blocks later): every block posted once', async () => {
    const fixture = await CelestiaNodeFixture.start({ token: TOKEN, blockTimeMs: 50 });
    cleanups.push(() => fixture.close());
    fixture.dropSubmitAnswers = 2;
    fixture.mempoolBlocks = 5;
    const { home, args } = await aggregatorHome(fixture.address, TOKEN);
    // The default inclusion window (celestia's mempool TTL, 36 blocks), watched at the fixture's block time.
    const node = await Daemon.start(home, [...args, '--node.node.block_time', '100ms', '--node.da.block_time', '50ms', '--node.da.request_timeout', '2s']);
    cleanups.push(() => node.kill());
    const lines = (message: string) => node.stderr.split('\n').filter((l) => l.includes(`"${message}"`)).length;
    await waitFor(
      () => fixture.dropSubmitAnswers === 0 && lines('found blocks already on DA from an earlier attempt; not posting them again') >= 2,
      'both dropped submissions found on DA',
      30_000,
    );
    const head = await latestHeight(node.rpc);
    await waitFor(async () => (await getBlockJson(node.rpc, { height: head })).json?.header_da_height > 0, `block ${head} on DA`, 30_000);
    await node.kill('SIGTERM');
    const postings = await headerPostings(fixture.address, 'conformance-1', TOKEN);
    for (let h = 1n; h <= BigInt(head); h++) expect(postings.get(h), `postings of block ${h}`).toBe(1);
  });

  it('without the token: the log line and doctor --check da-auth say the token is missing and how to make one', async () => {
    const fixture = await CelestiaNodeFixture.start({ token: TOKEN });
    cleanups.push(() => fixture.close());
    const { home, args } = await aggregatorHome(fixture.address, '');
    const node = await Daemon.start(home, args);
    cleanups.push(() => node.kill());
    const line = await waitFor(
      () => node.stderr.split('\n').find((l) => l.includes('"DA layer submission failed"')),
      'a DA submission failure in the log',
      30_000,
    );
    const logged = JSON.parse(line) as { error: string; reason: string; remedy: string };
    expect(logged.reason).toBe('unauthorized');
    expect(logged.error).toMatch(/missing permission to invoke '\w+' \(need '\w+'\): no auth token is set \(da\.auth_token is empty\)/);
    expect(logged.remedy).toContain('celestia <light|bridge> auth write --p2p.network <network>');

    const doctor = await runCli(['doctor', '--home', home, '--json', '--timeout', '3s', '--check', 'da-auth']);
    const [auth] = JSON.parse(doctor.stdout) as Array<{ status: string; message: string; remedy: string }>;
    expect(auth).toMatchObject({ status: 'fail', message: expect.stringMatching(/^DA token missing: .*no auth token is set/) });
    expect(auth!.remedy).toContain('celestia <light|bridge> auth write --p2p.network <network>');
    expect(doctor.code).toBe(1);
  });
});
