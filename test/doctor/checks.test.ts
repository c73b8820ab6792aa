import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { execSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initHome } from '../../src/home/index.js';
import { CHECKS, UnknownCheckError, buildContext, runCheck, selectChecks, type Check, type DoctorContext } from '../../src/doctor/index.js';
import { tempHome } from '../helpers/daemon.js';
import { CelestiaNodeFixture } from '../da/fixtures/celestia-node.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function home(config: Parameters<typeof initHome>[0]['config'] = {}): string {
  const h = tempHome('noded-checks-');
  cleanups.push(h.cleanup);
  initHome({ home: h.dir, chainId: 'checks-1', aggregator: false, force: false, config });
  return h.dir;
}

/** A stand-in HTTP server in this process, for shapes no real process here takes (named in each test). */
async function standIn(handler: (req: IncomingMessage, body: string, res: ServerResponse) => unknown): Promise<string> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => void handler(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const check = (id: string): Check => CHECKS.find((c) => c.id === id)!;

describe('doctor checks in-process', () => {
  it('a celestia-node (the fixture: its RPC port answers a GET with HTTP 400): da-health and da-sync fall back to JSON-RPC and say so; a slow answer warns', async () => {
    const da = await CelestiaNodeFixture.start({ token: 'doctor-token' });
    cleanups.push(() => da.close());
    // A 10 s bound: however loaded the machine, the fixture's answers come within it (and, undelayed, under the 1 s slow mark).
    const ctx = buildContext({ home: home({ 'da.address': da.address, 'da.auth_token': 'doctor-token', 'da.request_timeout': '10s' }), env: {} });
    expect(await runCheck(check('da-health'), ctx)).toMatchObject({
      status: 'ok',
      message: expect.stringMatching(/\(JSON-RPC header\.NetworkHead: height \d+ in \d+ ms; GET \/health: HTTP 400\)$/),
    });
    expect(await runCheck(check('da-sync'), ctx)).toMatchObject({
      status: 'ok',
      message: expect.stringMatching(/^DA node synced at height \d+ \(JSON-RPC header\.SyncState in \d+ ms; GET \/header\/sync_state answered HTTP 400\)$/),
    });
    expect(await runCheck(check('da-balance'), ctx)).toMatchObject({ status: 'ok', message: expect.stringMatching(/^balance 5000000 utia/) });
    da.delayMs = 1_100; // above da-sync's slow mark, min(1 s, da.request_timeout / 2): slow whatever the load
    const slow = await runCheck(check('da-sync'), ctx);
    expect(slow).toMatchObject({ status: 'warn', message: expect.stringMatching(/synced at height \d+, but slow: JSON-RPC header\.SyncState took \d+ ms/) });
    expect(slow.remedy).toContain('raise --node.da.request_timeout (now 10s)');
  });

  it('a DA node without state.Balance (a stand-in): da-balance warns', async () => {
    const da = await standIn((_req, body, res) => {
      const { id, method } = JSON.parse(body || '{}') as { id: number; method: string };
      json(res, 500, { jsonrpc: '2.0', id, error: { code: -32601, message: `method '${method}' not found` } });
    });
    const ctx = buildContext({ home: home({ 'da.address': da, 'da.request_timeout': '1s' }), env: {} });
    expect(await runCheck(check('da-balance'), ctx)).toMatchObject({ status: 'warn', message: expect.stringMatching(/does not serve state\.Balance/) });
  });

  it('node: while catching up, warns "falling behind" when the height rises slower than the chain (a stand-in node), ok when faster', async () => {
    let height = 100;
    let step = 1;
    const node = await standIn((req, _body, res) => {
      if (req.url === '/health/live') return res.end('OK');
      if (req.url === '/health/ready') return res.end('READY');
      height += step;
      json(res, 200, {
        result: {
          node_info: { network: 'checks-1' },
          sync_info: { latest_block_height: String(height), catching_up: true },
          validator_info: { voting_power: '0' },
        },
      });
    });
    const address = node.replace('http://', '');
    const h = home({ 'rpc.address': address, 'rpc.status_address': address, 'node.block_time': '100ms' });
    writeFileSync(join(h, 'data', 'node.pid'), `${process.pid}\n`); // "running": this process answers for it
    // The check samples the height 2 × block_time apart (500 ms at least); a 20 s bound leaves a loaded machine room for its requests.
    const ctx: DoctorContext = buildContext({ home: h, env: {}, timeoutMs: 20_000 });
    const behind = await runCheck(check('node'), ctx);
    expect(behind.status, behind.message).toBe('warn');
    expect(behind.message).toMatch(
      /^falling behind: catching up, but height 101 → 102 in \d\.\d s \(\d+\.\d blocks\/s; the chain makes 10\.0 at node\.block_time 100ms\)/,
    );
    step = 1000;
    const gaining = await runCheck(check('node'), ctx);
    expect(gaining).toMatchObject({ status: 'ok', message: expect.stringMatching(/^live, ready, catching up: height \d+ → \d+/) });
  });

  it('data-dir: a node.yml holding da.auth_token readable by group or others warns; its chmod remedy, run as given, makes it ok', async () => {
    const withToken = home({ 'da.auth_token': 'celestia-token' });
    const file = join(withToken, 'config', 'node.yml');
    const ctx = buildContext({ home: withToken, env: {} });
    expect(await runCheck(check('data-dir'), ctx)).toMatchObject({ status: 'ok' });
    for (const [mode, who] of [
      [0o644, 'every user'],
      [0o640, 'its group'],
    ] as const) {
      chmodSync(file, mode);
      const open = await runCheck(check('data-dir'), ctx);
      expect(open).toEqual({
        id: 'data-dir',
        status: 'warn',
        message: `${file} holds da.auth_token and is readable by ${who} (mode 0${mode.toString(8)})`,
        remedy: `\`chmod 600 ${file}\``,
      });
    }
    execSync(/^`(.*)`$/.exec((await runCheck(check('data-dir'), ctx)).remedy)![1]!);
    expect(await runCheck(check('data-dir'), ctx)).toMatchObject({ status: 'ok' });

    // Without a token in it, a readable node.yml holds nothing secret.
    const noToken = home();
    chmodSync(join(noToken, 'config', 'node.yml'), 0o644);
    expect(await runCheck(check('data-dir'), buildContext({ home: noToken, env: {} }))).toMatchObject({ status: 'ok' });
  });

  it('the runner: a check that overruns its bound or throws becomes a failed result, never a crash', async () => {
    const ctx = buildContext({ home: home(), env: {}, timeoutMs: 200 });
    const hangs: Check = { id: 'peers', verifies: '', run: () => new Promise(() => undefined) };
    const throws: Check = {
      id: 'engine',
      verifies: '',
      run: async () => {
        throw new TypeError('boom');
      },
    };
    expect(await runCheck(hangs, ctx)).toEqual({
      id: 'peers',
      status: 'fail',
      message: 'no answer within 200ms',
      remedy: 'raise --timeout (now 200ms) if the service is just slow',
    });
    expect(await runCheck(throws, ctx)).toMatchObject({ id: 'engine', status: 'fail', message: 'the check could not finish: boom' });
  });

  it('--check takes ids repeated or comma-separated, in report order; unknown ones are named', () => {
    expect(selectChecks(['node,config', 'peers'])).toEqual(['config', 'peers', 'node']);
    expect(selectChecks(['ha', 'genesis'])).toEqual(['genesis', 'ha']);
    expect(selectChecks(undefined)).toHaveLength(CHECKS.length);
    expect(() => selectChecks(['config', 'dns,disk'])).toThrow(UnknownCheckError);
    expect(() => selectChecks(['dns'])).toThrow(/unknown check "dns"; the checks are config, data-dir, ports/);
  });
});
