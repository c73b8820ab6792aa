import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { DaClient } from '../../src/da/client.js';
import { DaError } from '../../src/da/errors.js';
import type { TxConfig } from '../../src/da/types.js';
import { daNamespace } from '../../src/config/index.js';
import { localCommitment } from '../../src/da/local/index.js';
import { killAll, runCli, tempHome, waitFor } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await killAll();
  for (const c of cleanups.splice(0).reverse()) await c();
});

function newHome(): string {
  const h = tempHome('noded-da-serve-');
  cleanups.push(h.cleanup);
  return h.dir;
}

function client(address: string, authToken: string): DaClient {
  const c = new DaClient({ address, authToken, requestTimeoutMs: 5_000 });
  cleanups.push(() => c.close());
  return c;
}

const NS = daNamespace('serve-test');
const blob = (text: string) => {
  const data = Buffer.from(text);
  return { namespace: NS, data, commitment: localCommitment(NS, data) };
};
const txConfig = (gasPrice: number): TxConfig => ({ gas_price: gasPrice, is_gas_price_set: true, max_gas_price: 1, gas: 0, tx_priority: 0 });
const reasonOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof DaError ? err.reason : String(err)),
  );

describe('noded da serve', () => {
  it('serves the DA with a token, flips faults through --admin, keeps blobs across restarts, exits 0 on SIGTERM', async () => {
    const home = newHome();
    const da = await DaServer.start(home, ['--token', 't0k']);
    expect(da.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(da.admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    expect(await reasonOf(client(da.address, '').networkHead())).toBe('unauthorized');
    const c = client(da.address, 't0k');
    const start = await c.networkHead();
    await waitFor(async () => (await c.networkHead()) >= start + 2n, 'two more DA blocks at 100ms');
    const height = await c.submit([blob('through the CLI')], txConfig(0.002));
    expect((await c.getAll(height, [NS])).map((b) => Buffer.from(b.data).toString())).toEqual(['through the CLI']);

    // With --token the admin listener wants it too.
    const unauthorised = await fetch(`${da.admin}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"refuse":true}' });
    expect(unauthorised.status).toBe(401);
    expect(((await unauthorised.json()) as { error: string }).error).toContain('Authorization: Bearer');
    expect((await fetch(`${da.admin}/faults`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect(await c.networkHead()).toBeGreaterThanOrEqual(height); // the refusal above was not applied
    const admin = { authorization: 'Bearer t0k' };
    const post = (body: unknown) =>
      fetch(`${da.admin}/faults`, { method: 'POST', headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify(body) });
    expect((await post({ submitError: 'already_in_mempool', submitErrorCount: 1 })).status).toBe(200);
    expect(await reasonOf(c.submit([blob('again')], txConfig(0.002)))).toBe('already_in_mempool');
    expect(await reasonOf(c.submit([blob('again')], txConfig(0.0024)))).toBe('ok');
    // A busy network: the estimate rises above celestia-node's default cap (0.4), so the defaults are refused until max_gas_price allows it.
    expect((await post({ estimatedGasPrice: 0.5 })).status).toBe(200);
    expect(await reasonOf(c.submit([blob('busy')], {}))).toBe('gas_price_above_cap');
    expect(await reasonOf(c.submit([blob('busy')], { max_gas_price: 1 }))).toBe('ok');
    expect((await post({ estimatedGasPrice: null })).status).toBe(200);
    const subs = (await (await fetch(`${da.admin}/submissions`, { headers: admin })).json()) as Array<{
      ok: boolean;
      txConfig: TxConfig;
      gasPrice: number | null;
    }>;
    expect(subs.map((s) => [s.ok, s.txConfig.gas_price, s.gasPrice])).toEqual([
      [true, 0.002, 0.002],
      [false, 0.002, null],
      [true, 0.0024, 0.0024],
      [false, undefined, null],
      [true, undefined, 0.5],
    ]);

    expect((await post({ refuse: true })).status).toBe(200);
    expect(await reasonOf(c.networkHead())).toBe('connection_refused');
    const bad = await post({ refuse: 'yes' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { field: string }).field).toBe('refuse');
    expect((await post({ refuse: false })).status).toBe(200);
    expect(await c.networkHead()).toBeGreaterThan(height);

    expect(existsSync(join(home, 'data', 'local-da', 'blocks.log'))).toBe(true);
    da.child.kill('SIGTERM');
    expect(await da.exited).toBe(0);
    expect(da.stderr).toContain('local DA stopped');
    expect(da.stderr).not.toContain('t0k');

    // Same home, new process: the blob is still at its height.
    const again = await DaServer.start(home, ['--token', 't0k']);
    const c2 = client(again.address, 't0k');
    expect((await c2.getAll(height, [NS])).map((b) => Buffer.from(b.data).toString())).toEqual(['through the CLI']);
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  it('exits 1 naming the port and --listen when the port is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => blocker.close(() => r())));
    const port = (blocker.address() as { port: number }).port;
    const res = await runCli(['da', 'serve', '--home', newHome(), '--listen', `127.0.0.1:${port}`]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`port ${port}`);
    expect(res.stderr).toContain('--listen');
  });

  it('exits 2 on bad flag values, saying the expected form', async () => {
    const home = newHome();
    const blockTime = await runCli(['da', 'serve', '--home', home, '--block-time', 'fast']);
    expect(blockTime.code).toBe(2);
    expect(blockTime.stderr).toContain('--block-time');
    expect(blockTime.stderr).toMatch(/a duration like 500ms/);
    const listen = await runCli(['da', 'serve', '--home', home, '--listen', 'nope']);
    expect(listen.code).toBe(2);
    expect(listen.stderr).toMatch(/--listen: got "nope", expected host:port/);
    const size = await runCli(['da', 'serve', '--home', home, '--max-blob-size', 'big']);
    expect(size.code).toBe(2);
    expect(size.stderr).toContain('--max-blob-size');
  });

  it('refuses (exit 2) an admin listener beyond loopback without a token; with one, it serves there and wants it', async () => {
    const home = newHome();
    const open = await runCli(['da', 'serve', '--home', home, '--listen', '127.0.0.1:0', '--admin', '0.0.0.0:0']);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('--admin');
    expect(open.stderr).toContain('not a loopback address');
    expect(open.stderr).toContain('--admin 127.0.0.1:0');
    const da = await DaServer.start(home, ['--admin', '0.0.0.0:0', '--token', 's3cret']);
    const port = new URL(da.admin).port;
    expect((await fetch(`http://127.0.0.1:${port}/faults`)).status).toBe(401);
    const faults = await fetch(`http://127.0.0.1:${port}/faults`, { headers: { authorization: 'Bearer s3cret' } });
    expect(faults.status).toBe(200);
    expect(await faults.json()).toMatchObject({ refuse: false });
  });

  it('has help with examples', async () => {
    const res = await runCli(['da', 'serve', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('EXAMPLES');
    expect(res.stdout).toContain('--block-time');
    expect(res.stdout).toContain('da.block_time');
  });
});
