import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { DaClient, type Blob } from '../../src/da/client.js';
import { DaError } from '../../src/da/errors.js';
import { DaErrorText, type TxConfig } from '../../src/da/types.js';
import { daNamespace, nodeListenerMove } from '../../src/config/index.js';
import { silentLogger, type Logger } from '../../src/log/index.js';
import { BLOCK_LOG_FILE, LocalDa, LocalDaError, localCommitment, type LocalDaOptions } from '../../src/da/local/index.js';
import { tempHome, waitFor } from '../helpers/daemon.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function newDir(): string {
  const h = tempHome('noded-localda-');
  cleanups.push(h.cleanup);
  return join(h.dir, 'data', 'local-da');
}

async function startDa(opts: Partial<LocalDaOptions> & { dir: string }): Promise<LocalDa> {
  const da = await LocalDa.start({ listen: '127.0.0.1:0', blockTimeMs: 50, maxBlobSize: 1_974_272, logger: silentLogger(), ...opts });
  cleanups.push(() => da.close());
  return da;
}

function clientOf(da: LocalDa, opts: { authToken?: string; requestTimeoutMs?: number } = {}): DaClient {
  const client = new DaClient({ address: da.address, authToken: opts.authToken ?? '', requestTimeoutMs: opts.requestTimeoutMs ?? 10_000 });
  cleanups.push(() => client.close());
  return client;
}

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

const HEADERS = daNamespace('local-da-test');
const DATA = daNamespace('local-da-test-data');
const OTHER = daNamespace('someone-else');
const txConfig = (gasPrice = 0.002): TxConfig => ({ gas_price: gasPrice, is_gas_price_set: true, max_gas_price: 1, gas: 0, tx_priority: 0 });

function blob(namespace: Uint8Array, text: string): Blob {
  const data = Buffer.from(text);
  return { namespace, data, commitment: localCommitment(namespace, data) };
}

const texts = (blobs: Blob[]) => blobs.map((b) => Buffer.from(b.data).toString());

async function expectDaError(p: Promise<unknown>): Promise<DaError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DaError);
    return err as DaError;
  }
  throw new Error('expected the DA call to fail');
}

async function rpc(da: LocalDa, body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(da.address, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) };
}

describe('LocalDa: blobs and heights', () => {
  it('includes submitted blobs in the next DA block and returns exactly them per namespace', async () => {
    const da = await startDa({ dir: newDir() });
    const client = clientOf(da);
    expect(da.height).toBeGreaterThanOrEqual(1);
    const before = da.height;
    const h1 = await client.submit([blob(HEADERS, 'h1'), blob(DATA, 'd1'), blob(HEADERS, 'h2')], txConfig());
    expect(h1).toBeGreaterThan(BigInt(before));
    const h2 = await client.submit([blob(DATA, 'd2')], txConfig());
    expect(h2).toBeGreaterThan(h1);

    expect(texts(await client.getAll(h1, [HEADERS]))).toEqual(['h1', 'h2']);
    expect(texts(await client.getAll(h1, [DATA]))).toEqual(['d1']);
    expect(texts(await client.getAll(h1, [HEADERS, DATA]))).toEqual(['h1', 'd1', 'h2']);
    expect(await client.getAll(h1, [OTHER])).toEqual([]);
    expect(texts(await client.getAll(h2, [DATA]))).toEqual(['d2']);
    expect(await client.getAll(h2, [HEADERS])).toEqual([]);
    // The commitment is sha256(namespace ‖ data), and the wire form is celestia's.
    const [first] = await client.getAll(h1, [DATA]);
    expect(Buffer.from(first!.commitment)).toEqual(localCommitment(DATA, Buffer.from('d1')));
    const wire = await rpc(
      da,
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'blob.GetAll', params: [Number(h1), [Buffer.from(HEADERS).toString('base64')]] }),
    );
    expect(wire.json.id).toBe(7);
    expect(wire.json.result).toEqual([
      {
        namespace: Buffer.from(HEADERS).toString('base64'),
        data: Buffer.from('h1').toString('base64'),
        share_version: 0,
        commitment: expect.any(String),
        index: 0,
      },
      {
        namespace: Buffer.from(HEADERS).toString('base64'),
        data: Buffer.from('h2').toString('base64'),
        share_version: 0,
        commitment: expect.any(String),
        index: 2,
      },
    ]);
    const none = await rpc(da, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'blob.GetAll', params: [Number(h1), [Buffer.from(OTHER).toString('base64')]] }));
    expect(none.json).toEqual({ jsonrpc: '2.0', id: 8, result: null });

    const subs = da.submissions();
    expect(subs).toHaveLength(2);
    expect(subs[0]).toMatchObject({ ok: true, height: Number(h1), bytes: 6, txConfig: txConfig() });
    expect(subs[0]!.blobs).toEqual({ [Buffer.from(HEADERS).toString('base64')]: 2, [Buffer.from(DATA).toString('base64')]: 1 });
  });

  it('seals a block every block time, even empty, and answers the head, sync state, balance and REST endpoints', async () => {
    const da = await startDa({ dir: newDir() });
    const client = clientOf(da);
    const start = await client.networkHead();
    await waitFor(async () => (await client.networkHead()) >= start + 3n, 'three more DA blocks');
    const sync = await client.syncState();
    expect(sync.to_height).toBeLessThanOrEqual(sync.height);
    expect(sync.height).toBeGreaterThanOrEqual(Number(start) + 3);
    expect(await client.balance()).toMatchObject({ denom: 'utia', amount: expect.stringMatching(/^\d{6,}$/) });
    const head = await rpc(da, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'header.NetworkHead', params: [] }));
    expect(head.json.result.header.chain_id).toBe('local-da');
    expect(head.json.result.header.height).toMatch(/^\d+$/);
    expect(new Date(head.json.result.header.time).getTime()).toBeGreaterThan(0);

    const health = await fetch(`${da.address}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', height: expect.any(Number) });
    const rest = await fetch(`${da.address}/header/sync_state`);
    expect(rest.status).toBe(200);
    expect(await rest.json()).toMatchObject({ height: expect.any(Number), from_height: 1, to_height: expect.any(Number), start: expect.any(String) });
  });

  it('answers a height above the head with "given height is from the future"', async () => {
    const da = await startDa({ dir: newDir(), blockTimeMs: 60_000 });
    const client = clientOf(da);
    const err = await expectDaError(client.getAll(BigInt(da.height + 5), [HEADERS]));
    expect(err.message).toContain(DaErrorText.heightFromFuture);
  });

  it('keeps every blob at its height across a restart and carries on from the last height', async () => {
    const dir = newDir();
    const da = await startDa({ dir });
    const client = clientOf(da);
    const sent: Array<[bigint, string]> = [];
    for (let i = 0; i < 5; i++) sent.push([await client.submit([blob(HEADERS, `hdr-${i}`), blob(DATA, `dat-${i}`)], txConfig()), `${i}`]);
    const lastHeight = da.height;
    await da.close();
    await da.close(); // idempotent

    const again = await startDa({ dir });
    expect(again.height).toBeGreaterThanOrEqual(lastHeight);
    const client2 = clientOf(again);
    for (const [height, i] of sent) {
      expect(texts(await client2.getAll(height, [HEADERS]))).toEqual([`hdr-${i}`]);
      expect(texts(await client2.getAll(height, [DATA]))).toEqual([`dat-${i}`]);
    }
    const next = await client2.submit([blob(HEADERS, 'after-restart')], txConfig());
    expect(next).toBeGreaterThan(BigInt(lastHeight));
    // One line per height, contiguous from 1.
    const heights = readFileSync(join(dir, BLOCK_LOG_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).height);
    expect(heights).toEqual(heights.map((_: number, i: number) => i + 1));
  });

  it('ignores a torn last line with a warning and keeps going', async () => {
    const dir = newDir();
    const da = await startDa({ dir });
    const client = clientOf(da);
    const h = await client.submit([blob(HEADERS, 'before-crash')], txConfig());
    await da.close();
    const good = da.height;
    appendFileSync(join(dir, BLOCK_LOG_FILE), `{"height":${good + 1},"time":"2025-01-01T00:00:00.000Z","blobs":[{"namesp`);

    const { logger, lines } = capturingLogger();
    const again = await startDa({ dir, logger });
    expect(lines.some((l) => l.level === 40 && /torn last line/.test(String(l.msg)))).toBe(true);
    expect(again.height).toBeGreaterThanOrEqual(good);
    const client2 = clientOf(again);
    expect(texts(await client2.getAll(h, [HEADERS]))).toEqual(['before-crash']);
    const after = await client2.submit([blob(HEADERS, 'after-crash')], txConfig());
    expect(after).toBeGreaterThan(BigInt(good));
    // Read back from where the torn bytes were cut off.
    expect(texts(await client2.getAll(after, [HEADERS]))).toEqual(['after-crash']);
    await again.close();

    // The torn bytes are gone: a third start replays cleanly.
    const third = await startDa({ dir });
    expect(texts(await clientOf(third).getAll(after, [HEADERS]))).toEqual(['after-crash']);
  });

  it('serves blobs posted before a restart from the log: blocks bigger than a replay chunk, the same header times, and blocks sealed after', async () => {
    const dir = newDir();
    const da = await startDa({ dir });
    const client = clientOf(da);
    // 1.5 MB of blob data: its line spans two of the replay's 1 MiB reads.
    const big = 'b'.repeat(1_500_000);
    const sent: Array<[bigint, string]> = [];
    for (const text of ['small-1', big, 'small-2'])
      sent.push([await client.submit([blob(HEADERS, text), blob(DATA, `data-${text.length}`)], txConfig()), text]);
    const times = await Promise.all(sent.map(([h]) => rpc(da, JSON.stringify({ id: 1, method: 'header.GetByHeight', params: [Number(h)] }))));
    await da.close();

    const again = await startDa({ dir });
    const client2 = clientOf(again);
    for (const [i, [height, text]] of sent.entries()) {
      expect(texts(await client2.getAll(height, [HEADERS]))).toEqual([text]);
      expect(texts(await client2.getAll(height, [DATA, HEADERS]))).toEqual([text, `data-${text.length}`]);
      expect(await client2.getAll(height, [OTHER])).toEqual([]);
      const header = await rpc(again, JSON.stringify({ id: 1, method: 'header.GetByHeight', params: [Number(height)] }));
      expect(header.json.result).toEqual(times[i]!.json.result);
    }
    const next = await client2.submit([blob(DATA, 'after-restart')], txConfig());
    expect(texts(await client2.getAll(next, [DATA]))).toEqual(['after-restart']);
    expect(texts(await client2.getAll(sent[1]![0], [HEADERS]))).toEqual([big]);
  });

  it('cuts off a torn last line bigger than a replay chunk', async () => {
    const dir = newDir();
    const da = await startDa({ dir });
    const h = await clientOf(da).submit([blob(HEADERS, 'before-crash')], txConfig());
    await da.close();
    const good = da.height;
    appendFileSync(join(dir, BLOCK_LOG_FILE), `{"height":${good + 1},"time":"2025-01-01T00:00:00.000Z","blobs":[{"namespace":"${'A'.repeat(1_500_000)}`);

    const { logger, lines } = capturingLogger();
    const again = await startDa({ dir, logger });
    expect(lines.some((l) => l.level === 40 && /torn last line/.test(String(l.msg)))).toBe(true);
    const client = clientOf(again);
    expect(texts(await client.getAll(h, [HEADERS]))).toEqual(['before-crash']);
    const after = await client.submit([blob(HEADERS, 'after-crash')], txConfig());
    expect(texts(await client.getAll(after, [HEADERS]))).toEqual(['after-crash']);
    expect(readFileSync(join(dir, BLOCK_LOG_FILE)).length).toBeLessThan(1_000_000);
  });

  it('carries on from a log whose last line lacks its newline', async () => {
    const dir = newDir();
    mkdirSync(dir, { recursive: true });
    const data = Buffer.from('no-newline');
    const ns = Buffer.from(HEADERS).toString('base64');
    const line = {
      height: 1,
      time: '2025-01-01T00:00:00.000Z',
      blobs: [{ namespace: ns, data: data.toString('base64'), commitment: localCommitment(HEADERS, data).toString('base64') }],
    };
    writeFileSync(join(dir, BLOCK_LOG_FILE), JSON.stringify(line));
    const da = await startDa({ dir });
    const client = clientOf(da);
    const next = await client.submit([blob(HEADERS, 'appended')], txConfig());
    expect(texts(await client.getAll(1n, [HEADERS]))).toEqual(['no-newline']);
    expect(texts(await client.getAll(next, [HEADERS]))).toEqual(['appended']);
  });

  it('loads a log of 10,000 blobs on start', async () => {
    const dir = newDir();
    mkdirSync(dir, { recursive: true });
    const ns = Buffer.from(HEADERS).toString('base64');
    const lines: string[] = [];
    for (let height = 1; height <= 1_000; height++) {
      const blobs = [];
      for (let i = 0; i < 10; i++) {
        const data = Buffer.from(`blob-${height}-${i}-${'x'.repeat(100)}`);
        blobs.push({ namespace: ns, data: data.toString('base64'), commitment: localCommitment(HEADERS, data).toString('base64') });
      }
      lines.push(JSON.stringify({ height, time: new Date().toISOString(), blobs }));
    }
    writeFileSync(join(dir, BLOCK_LOG_FILE), lines.join('\n') + '\n');
    const t0 = performance.now();
    const da = await startDa({ dir, blockTimeMs: 60_000 });
    const loadMs = performance.now() - t0; // reported, not judged: timings belong in the bench
    expect(da.height).toBe(1_000);
    const got = await clientOf(da).getAll(777n, [HEADERS]);
    expect(got).toHaveLength(10);
    expect(Buffer.from(got[3]!.data).toString()).toBe(`blob-777-3-${'x'.repeat(100)}`);
    console.info(`local DA loaded 10,000 blobs in ${loadMs.toFixed(0)} ms`);
  });

  it('refuses a second server on the same directory', async () => {
    const dir = newDir();
    await startDa({ dir });
    await expect(startDa({ dir })).rejects.toSatisfy((err: unknown) => err instanceof LocalDaError && err.code === 'LOCAL_DA_LOCKED');
  });

  it('takes over a lock left by a dead process, or by an earlier process with this pid', async () => {
    for (const pid of [spawnSync(process.execPath, ['-e', '']).pid, process.pid]) {
      const dir = newDir();
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'LOCK'), String(pid));
      const da = await startDa({ dir });
      expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe(String(process.pid));
      await da.close();
      expect(existsSync(join(dir, 'LOCK'))).toBe(false);
    }
  });

  it('names the port and the flag when the port is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => blocker.close(() => r())));
    const port = (blocker.address() as { port: number }).port;
    const err = await startDa({ dir: newDir(), listen: `127.0.0.1:${port}`, move: nodeListenerMove('da.address', `http://127.0.0.1:${port}`) }).catch(
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(`port ${port}`);
    expect((err as Error).message).toContain('--node.da.address');
  });
});

describe('LocalDa: token and limits', () => {
  it('enforces the token on JSON-RPC and REST, without echoing it', async () => {
    const da = await startDa({ dir: newDir(), authToken: 's3cret-token' });
    const missing = await expectDaError(clientOf(da).networkHead());
    expect(missing.reason).toBe('unauthorized');
    const wrong = await expectDaError(clientOf(da, { authToken: 'nope' }).submit([blob(HEADERS, 'x')], txConfig()));
    expect(wrong.reason).toBe('unauthorized');
    expect(wrong.message).not.toContain('nope');
    const good = clientOf(da, { authToken: 's3cret-token' });
    const h = await good.submit([blob(HEADERS, 'authorised')], txConfig());
    expect(texts(await good.getAll(h, [HEADERS]))).toEqual(['authorised']);
    expect(da.submissions()).toHaveLength(1);

    // REST: /health is public; /header/sync_state needs the read permission; a wrong token is 401 everywhere, as go-jsonrpc's auth handler answers it.
    expect((await fetch(`${da.address}/health`)).status).toBe(200);
    const restMissing = await fetch(`${da.address}/header/sync_state`);
    expect(restMissing.status).toBe(403);
    expect(await restMissing.text()).toBe("missing permission to invoke 'SyncState' (need 'read')\n");
    const restWrong = await fetch(`${da.address}/header/sync_state`, { headers: { authorization: 'Bearer s3cret-tokeX' } });
    expect(restWrong.status).toBe(401);
    expect(await restWrong.text()).toBe('');
    const restOk = await fetch(`${da.address}/header/sync_state`, { headers: { authorization: 'Bearer s3cret-token' } });
    expect(restOk.status).toBe(200);
  });

  it('rejects a submission above the max blob size as too big', async () => {
    const da = await startDa({ dir: newDir(), maxBlobSize: 1_000 });
    const client = clientOf(da);
    const err = await expectDaError(client.submit([blob(HEADERS, 'a'.repeat(600)), blob(DATA, 'b'.repeat(401))], txConfig()));
    expect(err.reason).toBe('too_big');
    expect(err.message).toContain(DaErrorText.blobTooLarge);
    expect(da.submissions()[0]).toMatchObject({ ok: false, bytes: 1_001 });
    // Exactly at the limit is fine; a body far above it is refused without reading it all into a blob.
    await client.submit([blob(HEADERS, 'a'.repeat(600)), blob(DATA, 'b'.repeat(400))], txConfig());
    const huge = await expectDaError(client.submit([blob(HEADERS, 'c'.repeat(5_000_000))], txConfig()));
    expect(huge.reason).toBe('too_big');
  });
});

describe('LocalDa: fault switches', () => {
  it('refuse: connections are refused until cleared, then the same address serves again', async () => {
    const da = await startDa({ dir: newDir() });
    const client = clientOf(da);
    await client.networkHead(); // a pooled keep-alive connection exists
    const address = da.address;
    await da.setFaults({ refuse: true });
    const err = await expectDaError(client.submit([blob(HEADERS, 'refused')], txConfig()));
    expect(err.reason).toBe('connection_refused');
    expect((await expectDaError(client.networkHead())).reason).toBe('connection_refused');
    await da.setFaults({ refuse: false });
    expect(da.address).toBe(address);
    const h = await client.submit([blob(HEADERS, 'recovered')], txConfig());
    expect(texts(await client.getAll(h, [HEADERS]))).toEqual(['recovered']);
  });

  it('refuse: a submission waiting for its block loses its connection and is included all the same; a new call is refused unsent', async () => {
    const da = await startDa({ dir: newDir(), blockTimeMs: 300 });
    const client = clientOf(da);
    const submitting = expectDaError(client.submit([blob(HEADERS, 'in flight')], txConfig()));
    await waitFor(() => da.submissions().length === 1, 'the submission taken');
    await da.setFaults({ refuse: true });
    const dropped = await submitting;
    expect(dropped.delivery).toBe('unknown');
    expect((await expectDaError(client.networkHead())).delivery).toBe('refused');
    await waitFor(() => da.submissions()[0]!.height !== null, 'the dropped submission in a block');
    await da.setFaults({ refuse: false });
    expect(texts(await client.getAll(BigInt(da.submissions()[0]!.height!), [HEADERS]))).toEqual(['in flight']);
  });

  it('dropSubmitAnswers: the submission is included in the next block, its connection dropped without an answer', async () => {
    const da = await startDa({ dir: newDir() });
    const client = clientOf(da);
    await da.setFaults({ dropSubmitAnswers: 1 });
    const err = await expectDaError(client.submit([blob(HEADERS, 'dropped')], txConfig()));
    expect(err.delivery).toBe('unknown');
    expect(err.message).toMatch(/connection dropped before an answer/);
    expect(da.faults.dropSubmitAnswers).toBe(0);
    const included = await waitFor(() => da.submissions()[0]!.height, 'the dropped submission in a block');
    expect(texts(await client.getAll(BigInt(included), [HEADERS]))).toEqual(['dropped']);
    // Counted down: the next one is answered.
    const h = await client.submit([blob(HEADERS, 'answered')], txConfig());
    expect(texts(await client.getAll(h, [HEADERS]))).toEqual(['answered']);
  });

  it('slowSubmitAnswersMs beyond the client timeout: the call times out, the blobs are included', async () => {
    const da = await startDa({ dir: newDir() });
    await da.setFaults({ slowSubmitAnswersMs: 2_000 });
    const err = await expectDaError(clientOf(da, { requestTimeoutMs: 300 }).submit([blob(HEADERS, 'slow')], txConfig()));
    expect(err).toMatchObject({ reason: 'timeout', delivery: 'unknown' });
    const included = await waitFor(() => da.submissions()[0]!.height, 'the submission in a block');
    expect(texts(await clientOf(da).getAll(BigInt(included), [HEADERS]))).toEqual(['slow']);
  });

  it('delayMs: a client that hangs up during the delay cancels the call, as a Go request context does; nothing is submitted', async () => {
    const da = await startDa({ dir: newDir() });
    await da.setFaults({ delayMs: 600 });
    const err = await expectDaError(clientOf(da, { requestTimeoutMs: 200 }).submit([blob(HEADERS, 'gave up')], txConfig()));
    expect(err.reason).toBe('timeout');
    const head = da.height;
    await waitFor(() => da.height > head + 15, 'the delay to pass by far');
    expect(da.submissions()).toEqual([]);
  });

  it('delayMs above the client timeout: the call times out', async () => {
    const da = await startDa({ dir: newDir() });
    await da.setFaults({ delayMs: 2_000 });
    const err = await expectDaError(clientOf(da, { requestTimeoutMs: 200 }).networkHead());
    expect(err.reason).toBe('timeout');
    await da.setFaults({ delayMs: 0 });
    expect(await clientOf(da, { requestTimeoutMs: 2_000 }).networkHead()).toBeGreaterThan(0n);
  });

  it('code 19: "tx already in mempool" with codespace sdk, recorded with its gas price', async () => {
    const da = await startDa({ dir: newDir() });
    const client = clientOf(da);
    await da.setFaults({ submitError: 'already_in_mempool' });
    const err = await expectDaError(client.submit([blob(HEADERS, 'x')], txConfig(0.002)));
    expect(err.reason).toBe('already_in_mempool');
    expect(err.sdkCode).toBe(19);
    expect(err.message).toContain('codespace sdk');
    expect(err.message).toContain('code 19');
    const again = await expectDaError(client.submit([blob(HEADERS, 'x')], txConfig(0.0024)));
    expect(again.reason).toBe('already_in_mempool'); // until cleared
    await da.setFaults({ submitError: null });
    await client.submit([blob(HEADERS, 'x')], txConfig(0.00288));
    expect(da.submissions().map((s) => [s.ok, s.txConfig.gas_price])).toEqual([
      [false, 0.002],
      [false, 0.0024],
      [true, 0.00288],
    ]);
    expect(da.submissions()[0]!.error).toBe(DaErrorText.alreadyInMempool);
  });

  it('code 5: insufficient funds', async () => {
    const da = await startDa({ dir: newDir() });
    await da.setFaults({ submitError: 'insufficient_funds', balance: '0' });
    const client = clientOf(da);
    const err = await expectDaError(client.submit([blob(HEADERS, 'x')], txConfig()));
    expect(err.reason).toBe('insufficient_funds');
    expect(err.sdkCode).toBe(5);
    expect(await client.balance()).toEqual({ denom: 'utia', amount: '0' });
  });

  it('submitErrorCount=2: two failures, then success again', async () => {
    const da = await startDa({ dir: newDir() });
    const client = clientOf(da);
    await da.setFaults({ submitError: 'already_in_mempool', submitErrorCount: 2 });
    const reasons: string[] = [];
    for (let i = 0; i < 3; i++) {
      try {
        await client.submit([blob(HEADERS, `try-${i}`)], txConfig());
        reasons.push('ok');
      } catch (err) {
        reasons.push((err as DaError).reason);
      }
    }
    expect(reasons).toEqual(['already_in_mempool', 'already_in_mempool', 'ok']);
    expect(da.faults).toMatchObject({ submitError: null, submitErrorCount: 0 });
  });

  it('notSynced: sync state reports the node behind, the network head is unaffected', async () => {
    const da = await startDa({ dir: newDir(), blockTimeMs: 60_000 });
    const client = clientOf(da);
    await da.setFaults({ notSynced: true });
    const sync = await client.syncState();
    expect(sync.to_height).toBe(sync.height + 100);
    expect(await client.networkHead()).toBe(BigInt(sync.height));
    const rest = (await (await fetch(`${da.address}/header/sync_state`)).json()) as { height: number; to_height: number };
    expect(rest.to_height).toBe(rest.height + 100);
    await da.setFaults({ notSynced: false });
    const synced = await client.syncState();
    expect(synced.to_height).toBe(synced.height);
  });

  it('rejects bad fault values, naming the field', async () => {
    const da = await startDa({ dir: newDir() });
    await expect(da.setFaults({ delayMs: -1 })).rejects.toThrow(/delayMs/);
    await expect(da.setFaults({ submitError: 'nope' as never })).rejects.toThrow(/submitError/);
  });
});

describe('LocalDa: bad JSON-RPC input', () => {
  it('answers every malformed request with a JSON-RPC error and keeps serving', async () => {
    const da = await startDa({ dir: newDir() });
    const ns = Buffer.from(HEADERS).toString('base64');
    const call = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    // Codes and texts of go-jsonrpc handler.go; our own words only inside a param's decoding error.
    const cases: Array<[string, number, RegExp]> = [
      ['{not json', -32700, /^Parse error$/],
      ['[1,2]', -32700, /^Parse error$/],
      ['[]', -32600, /^Invalid request$/],
      ['{"jsonrpc":"2.0","id":1}', -32601, /^method '' not found$/],
      [call('blob.Nope', []), -32601, /^method 'blob\.Nope' not found$/],
      [call('blob.GetAll', 'x'), -32700, /^unmarshaling param array: json: cannot unmarshal string into Go value of type \[\]jsonrpc\.param$/],
      [call('blob.GetAll', [1]), -32602, /^wrong param count \(method 'blob\.GetAll'\): 1 != 2$/],
      [
        call('blob.GetAll', ['abc', [ns]]),
        -32700,
        /^unmarshaling params for 'blob\.GetAll' \(param: \*uint64\): json: cannot unmarshal string into Go value of type uint64$/,
      ],
      [call('blob.GetAll', [1, 'ns']), -32700, /namespaces/],
      [call('blob.GetAll', [1, ['AAAA']]), -32700, /3 bytes, expected 29/],
      [call('blob.Submit', [[{ namespace: ns, data: 'aGk=' }], null]), -32602, /TxConfig is null/],
      [call('blob.Submit', [[{ namespace: ns, data: 'aGk=' }]]), -32602, /wrong param count/],
      [call('blob.Submit', [[], {}]), -32700, /non-empty array/],
      // What Go's standard base64 refuses: a foreign character, the URL alphabet, a missing pad, a `=` inside.
      ...['!!', 'aG!=', 'a-_k', 'aGk', 'aG=k'].map((data): [string, number, RegExp] => [
        call('blob.Submit', [[{ namespace: ns, data }], {}]),
        -32700,
        /data: expected a base64/,
      ]),
      [call('blob.Submit', [[{ namespace: Buffer.alloc(29, 1).toString('base64'), data: 'aGk=' }], {}]), -32700, /version 1/],
      [call('blob.Submit', [[{ namespace: ns, data: 'aGk=', share_version: 1 }], {}]), -32700, /share_version/],
      // go-square's ValidateForBlob: a primary reserved namespace (PayForBlob's, 0x…04) holds no blobs.
      [
        call('blob.Submit', [[{ namespace: Buffer.from([...Buffer.alloc(28), 4]).toString('base64'), data: 'aGk=' }], {}]),
        -32700,
        /invalid data namespace\(0{56}04\): reserved data is forbidden/,
      ],
      [call('blob.Submit', [[null], {}]), -32700, /blob 0/],
    ];
    for (const [body, code, message] of cases) {
      const res = await rpc(da, body);
      expect(res.json.error?.code, body).toBe(code);
      expect(res.json.error.message, body).toMatch(message);
      expect(res.status, body).toBe(code === -32600 ? 400 : 500);
    }
    // header.GetByHeight refuses as a method (HTTP 200, code 1): height 0, and a height past the head.
    for (const [height, message] of [
      [0, /height must be bigger than zero/],
      [99999, /given height is from the future/],
    ] as const) {
      const res = await rpc(da, call('header.GetByHeight', [height]));
      expect([res.status, res.json.error?.code]).toEqual([200, 1]);
      expect(res.json.error.message).toMatch(message);
    }
    // go-jsonrpc serves every path and reads the body; a GET has none.
    const get = await fetch(da.address);
    expect(get.status).toBe(400);
    expect(await get.text()).toBe('{"error":{"code":-32600,"message":"Invalid request"},"id":null,"jsonrpc":"2.0"}\n');
    expect((await fetch(`${da.address}/nope`)).status).toBe(400);
    expect(da.submissions()).toEqual([]);
    expect((await fetch(`${da.address}/health`)).status).toBe(200);
  });
});

describe('LocalDa: admin listener', () => {
  it('flips faults, lists submissions and keeps answering while refusing', async () => {
    const da = await startDa({ dir: newDir(), adminListen: '127.0.0.1:0' });
    const admin = da.adminAddress!;
    expect(admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const client = clientOf(da);
    await client.submit([blob(HEADERS, 'one')], txConfig());
    const subs = (await (await fetch(`${admin}/submissions`)).json()) as unknown[];
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({ ok: true, bytes: 3 });

    const post = (body: string) => fetch(`${admin}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const refused = await post('{"refuse":true}');
    expect(refused.status).toBe(200);
    expect(((await refused.json()) as { refuse: boolean }).refuse).toBe(true);
    expect((await expectDaError(client.networkHead())).reason).toBe('connection_refused');
    expect(await (await fetch(`${admin}/faults`)).json()).toMatchObject({ refuse: true });
    expect(await (await fetch(`${admin}/health`)).json()).toMatchObject({ refusing: true });

    const bad = await post('{"delayMs":"soon"}');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ field: 'delayMs', error: expect.stringContaining('delayMs') });
    const unknown = await post('{"explode":true}');
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { field: string }).field).toBe('explode');
    expect((await post('nope')).status).toBe(400);

    expect((await post('{"refuse":false}')).status).toBe(200);
    expect(await client.networkHead()).toBeGreaterThan(0n);
  });

  it('with a token it wants "Authorization: Bearer <token>" on every admin endpoint', async () => {
    const da = await startDa({ dir: newDir(), adminListen: '127.0.0.1:0', authToken: 'adm1n' });
    const admin = da.adminAddress!;
    for (const [path, init] of [
      ['/faults', {}],
      ['/submissions', {}],
      ['/health', {}],
      ['/faults', { method: 'POST', body: '{"refuse":true}' }],
    ] as const) {
      for (const authorization of [undefined, 'Bearer wrong', 'adm1n']) {
        const res = await fetch(`${admin}${path}`, { ...init, headers: authorization ? { authorization } : {} });
        expect(res.status, `${init.method ?? 'GET'} ${path} with ${authorization ?? 'no token'}`).toBe(401);
        expect(((await res.json()) as { error: string }).error).toContain('Authorization: Bearer <token>');
      }
    }
    expect(da.faults.refuse).toBe(false);
    const ok = await fetch(`${admin}/faults`, { method: 'POST', headers: { authorization: 'Bearer adm1n' }, body: '{"delayMs":5}' });
    expect(ok.status).toBe(200);
    expect(da.faults.delayMs).toBe(5);
  });

  it('without a token only a loopback address: another one is refused naming the fix', async () => {
    await expect(startDa({ dir: newDir(), adminListen: '0.0.0.0:0' })).rejects.toMatchObject({
      code: 'LOCAL_DA_ADMIN_EXPOSED',
      message: expect.stringContaining('--admin 127.0.0.1:0'),
    });
    await expect(startDa({ dir: newDir(), adminListen: '[::]:0' })).rejects.toThrow(LocalDaError);
    for (const loopback of ['127.0.0.1:0', 'localhost:0', '127.0.0.2:0']) {
      const da = await startDa({ dir: newDir(), adminListen: loopback });
      expect(da.adminAddress).toBeDefined();
    }
  });
});
