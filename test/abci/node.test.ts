import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Comet38Client } from '@cosmjs/tendermint-rpc';
import { Daemon, RUN_JS, freePort, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { KvStoreProcess, abciFlags, postTx, queryKey } from './helpers.js';

// A node driving the reference ABCI app over a real socket (issue 8).

const homes = new Homes();
const appHomes: Array<ReturnType<typeof tempHome>> = [];
const servers: Server[] = [];
/** Pids of apps a node supervises: a node killed with SIGKILL cannot stop them itself. */
const supervisedPids = new Set<number>();
afterEach(async () => {
  await killAll();
  for (const pid of supervisedPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  supervisedPids.clear();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  homes.cleanup();
  for (const h of appHomes.splice(0)) h.cleanup();
});

function appHome(): string {
  const h = tempHome('noded-kvstore-');
  appHomes.push(h);
  return h.dir;
}

/** A kvstore app on a free port of its own: its home, address and process. */
async function startApp(): Promise<{ home: string; address: string; app: KvStoreProcess }> {
  const home = appHome();
  const address = `tcp://127.0.0.1:${await freePort()}`;
  return { home, address, app: await KvStoreProcess.start(home, address) };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const logLines = (d: { stderr: string }, msg: string) =>
  d.stderr
    .split('\n')
    .filter((l) => l.includes(`"${msg}"`))
    .map((l) => JSON.parse(l));

/** Runs `noded start` against the app at `address`, expecting it to fail: its error message, unwrapped. */
async function failedStart(home: string, address: string): Promise<string> {
  const ports = ['--node.rpc.address', '127.0.0.1:0', '--node.rpc.status_address', '127.0.0.1:0', '--node.p2p.listen_address', '/ip4/127.0.0.1/tcp/0'];
  const da = ['--node.da.local', '--node.da.address', 'http://127.0.0.1:0'];
  const res = await runCli(['start', '--home', home, ...abciFlags(address), ...ports, ...da], { OCLIF_COLUMNS: '1000' });
  expect(res.code, res.stderr).toBe(1);
  return res.stderr;
}

/** The header's app_hash at `height`, as hex. */
async function headerAppHash(rpc: string, height: number): Promise<string> {
  const { json } = await getBlockJson(rpc, { height });
  return Buffer.from(json.block.header.header.app_hash, 'base64').toString('hex');
}

describe('a node with execution.type abci and the reference kvstore app', () => {
  it('takes txs through CheckTx into blocks; /abci_query reads them; app hashes agree with the headers', async () => {
    const { address } = await startApp();
    const home = await homes.create('abci-basic', true);
    const node = await Daemon.start(home, [...abciFlags(address), '--node.node.block_time', '100ms']);

    expect((await postTx(node.rpc, 'color=blue')).status).toBe(200);
    const refused = await postTx(node.rpc, 'no-equals-sign');
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body).error).toBe('the app rejected the tx in CheckTx: tx must be key=value with a non-empty key (code 1, codespace kvstore)');

    const client = await Comet38Client.connect(node.status);
    try {
      const ok = await client.broadcastTxSync({ tx: new TextEncoder().encode('shape=round') });
      expect(ok.code).toBe(0);
      const bad = await client.broadcastTxSync({ tx: new TextEncoder().encode('=no-key') });
      expect(bad).toMatchObject({ code: 1, codespace: 'kvstore', log: 'tx must be key=value with a non-empty key' });

      await waitFor(
        async () => (await queryKey(node.status, 'color')) === 'blue' && (await queryKey(node.status, 'shape')) === 'round',
        'both keys in the app',
      );
      const missing = await client.abciQuery({ path: '/store', data: new TextEncoder().encode('nothing') });
      // CometBFT leaves a zero code out of ResponseQuery's JSON: CosmJS reads it as undefined.
      expect(missing).toMatchObject({ code: undefined, log: 'does not exist' });
      const badPath = await client.abciQuery({ path: '/nowhere', data: new Uint8Array() });
      expect(badPath).toMatchObject({ code: 2, codespace: 'kvstore' });

      // The txs are in blocks, and nothing CheckTx refused is.
      const height = await latestHeight(node.rpc);
      const txs: string[] = [];
      for (let h = 1; h <= height; h++) txs.push(...(await getBlockJson(node.rpc, { height: h })).json.block.data.txs);
      expect(txs).toEqual(expect.arrayContaining([b64('color=blue'), b64('shape=round')]));
      expect(txs).not.toContain(b64('no-equals-sign'));

      // The app's hash after block h is the app_hash of block h+1's header.
      const info = await client.abciInfo();
      expect(info.data).toBe('kvstore');
      const appHeight = info.lastBlockHeight!;
      await waitFor(async () => (await latestHeight(node.rpc)) > appHeight, `block ${appHeight + 1}`);
      expect(await headerAppHash(node.rpc, appHeight + 1)).toBe(Buffer.from(info.lastBlockAppHash!).toString('hex'));

      // /status's latest_app_hash is the app's hash at the latest height.
      const status = await client.status();
      const latest = status.syncInfo.latestBlockHeight;
      await waitFor(async () => (await latestHeight(node.rpc)) > latest, `block ${latest + 1}`);
      expect(await headerAppHash(node.rpc, latest + 1)).toBe(Buffer.from(status.syncInfo.latestAppHash).toString('hex'));
    } finally {
      client.disconnect();
    }
  });

  it('kill -9 of the app: the node waits, saying for what; the app back without its data gets every block replayed', async () => {
    const { home: appDir, address, app } = await startApp();
    const home = await homes.create('abci-crash', true);
    const node = await Daemon.start(home, [...abciFlags(address), '--node.node.block_time', '100ms']);
    expect((await postTx(node.rpc, 'before=1')).status).toBe(200);
    await waitFor(async () => (await queryKey(node.status, 'before')) === '1', 'the first tx applied');

    await app.kill('SIGKILL');
    await waitFor(
      () => logLines(node, `waiting for the ABCI app at ${address}: ECONNREFUSED; start the app or check execution.abci_address`).length > 0,
      'the node to say it waits for the app',
    );
    const stalled = await latestHeight(node.rpc);
    const tx = await postTx(node.rpc, 'during=2');
    expect(tx.status).toBe(503);
    expect(JSON.parse(tx.body).error).toMatch(/the ABCI app could not check the tx: the ABCI app at .* \(mempool connection\) is not reachable: ECONNREFUSED/);
    const ready = await fetch(`${node.rpc}/health/ready`);
    expect(ready.status).toBe(503);

    expect(await latestHeight(node.rpc)).toBeLessThanOrEqual(stalled + 1);

    // Back without its data: InitChain again, then every stored block replayed.
    rmSync(join(appDir, 'abci-kvstore'), { recursive: true, force: true });
    await KvStoreProcess.start(appDir, address);
    await waitFor(
      () => logLines(node, 'replaying stored blocks into the ABCI app').some((l) => l.appHeight === 0 && l.blocks >= stalled),
      'the node to replay all its blocks',
    );
    await waitFor(async () => (await queryKey(node.status, 'before')) === '1', 'the replayed tx in the app');
    await waitFor(async () => (await latestHeight(node.rpc)) > stalled + 2, 'blocks after the replay');
    expect((await postTx(node.rpc, 'after=3')).status).toBe(200);
    await waitFor(async () => (await queryKey(node.status, 'after')) === '3', 'a tx after the replay applied');
    expect(node.stderr).not.toContain('"level":60');
  });

  it('supervised (supervise: in node.yml): after kill -9 the app restarts by itself and the handshake brings it back in step', async () => {
    const appDir = appHome();
    const address = `tcp://127.0.0.1:${await freePort()}`;
    const home = await homes.create('abci-supervised', true);
    const configFile = join(home, 'config', 'node.yml');
    const kvstore = {
      name: 'kvstore',
      command: process.execPath,
      args: [RUN_JS, 'abci', 'kvstore', '--home', appDir, '--address', address, '--log-format', 'json'],
      restart: 'always',
    };
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace(/^supervise: \[\]$/m, `supervise: ${JSON.stringify([kvstore])}`));
    const node = await Daemon.start(home, [...abciFlags(address), '--node.node.block_time', '100ms']);
    const appPid = async () => {
      const info = (await (await fetch(`${node.status}/node_info`)).json()) as { result: { children: Array<{ pid: number | null; state: string }> } };
      const child = info.result.children[0]!;
      if (child.pid !== null) supervisedPids.add(child.pid);
      return child.state === 'running' ? child.pid : null;
    };

    expect((await postTx(node.rpc, 'before=1')).status).toBe(200);
    await waitFor(async () => (await queryKey(node.status, 'before')) === '1', 'the first tx applied');
    const first = await waitFor(appPid, 'the supervised app running');
    process.kill(first, 'SIGKILL');
    const second = await waitFor(async () => {
      const pid = await appPid();
      return pid !== first ? pid : null;
    }, 'the app restarted by the supervisor');
    expect(second).not.toBe(first);
    // Without a ready URL the app counts as running before it listens: CheckTx answers 503 until it does.
    await waitFor(async () => (await postTx(node.rpc, 'after=2')).status === 200, 'CheckTx to accept a tx again');
    await waitFor(async () => (await queryKey(node.status, 'after')) === '2', 'a tx after the restart applied');
    expect(await queryKey(node.status, 'before')).toBe('1');
    expect(logLines(node, 'ABCI app in step with the node').length).toBeGreaterThanOrEqual(2);
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
  });

  it('kill -9 of the node: the app is never ahead of it, and the restarted node catches the app up', async () => {
    const { address } = await startApp();
    const home = await homes.create('abci-node-crash', true);
    const args = [...abciFlags(address), '--node.node.block_time', '50ms'];
    const node = await Daemon.start(home, args);
    for (let i = 0; i < 10; i++) expect((await postTx(node.rpc, `n${i}=${i}`)).status).toBe(200);
    await waitFor(async () => (await latestHeight(node.rpc)) >= 10, 'ten blocks');
    await node.kill('SIGKILL');
    const again = await Daemon.start(home, args);
    await waitFor(() => logLines(again, 'ABCI app in step with the node').length > 0, 'the handshake');
    const stored = await latestHeight(again.rpc);
    await waitFor(async () => (await latestHeight(again.rpc)) > stored + 2, 'blocks after the restart');
    for (let i = 0; i < 10; i++) expect(await queryKey(again.status, `n${i}`)).toBe(String(i));
    expect(again.stderr).not.toContain('execution layer out of sync');
  });

  it('full nodes with apps of their own follow over P2P and over DA, with the same app hash at every height', async () => {
    const { aggregator, full } = await homes.chain('abci-follow', 2);
    const [appA, appB, appC] = await Promise.all([startApp(), startApp(), startApp()]);
    // Lazy blocks: the chain stands still between txs, so every node can be compared at one height.
    const a = await Daemon.start(aggregator, [
      ...abciFlags(appA.address),
      '--node.node.block_time',
      '100ms',
      '--node.node.lazy_mode',
      '--node.node.lazy_block_interval',
      '1h',
    ]);
    const noDa = ['--no-node.da.local', '--node.da.address', `http://127.0.0.1:${await freePort()}`, '--node.da.request_timeout', '1s'];
    const [b, c] = await Promise.all([
      Daemon.start(full[0]!, [...abciFlags(appB.address), ...noDa, '--node.p2p.peers', a.p2p]),
      Daemon.start(full[1]!, [...abciFlags(appC.address), '--no-node.da.local', '--node.da.address', a.da]),
    ]);

    // Four rounds of txs, each applied before the next: at least four blocks.
    for (let round = 0; round < 4; round++) {
      for (const key of ['k1', 'k2', 'k3']) expect((await postTx(a.rpc, `${key}=${round}`)).status).toBe(200);
      await waitFor(async () => (await queryKey(a.status, 'k3')) === String(round), `round ${round} applied`);
    }
    const target = await latestHeight(a.rpc);
    expect(target).toBeGreaterThanOrEqual(4);
    for (const [name, node] of [
      ['B (P2P)', b],
      ['C (DA)', c],
    ] as const) {
      await waitFor(async () => (await latestHeight(node.rpc)) >= target, `${name} at ${target}`, 30_000);
      for (let h = 1; h <= target; h++) {
        const [fromA, fromN] = await Promise.all([getBlockJson(a.rpc, { height: h }), getBlockJson(node.rpc, { height: h })]);
        expect(JSON.stringify(fromN.json.block), `${name} block ${h}`).toBe(JSON.stringify(fromA.json.block));
      }
    }
    const infos = await Promise.all(
      [a, b, c].map(async (n) => {
        const client = await Comet38Client.connect(n.status);
        const info = await client.abciInfo();
        client.disconnect();
        return { height: info.lastBlockHeight, hash: Buffer.from(info.lastBlockAppHash!).toString('hex') };
      }),
    );
    expect(infos[1]).toEqual(infos[0]);
    expect(infos[2]).toEqual(infos[0]);
    expect(infos[0]!.height).toBe(target);
    expect(await queryKey(c.status, 'k2')).toBe('3');
  }, 120_000);
});

describe('a node whose app is wrong', () => {
  it('refuses to start when the app is ahead of it, naming both heights and the remedy', async () => {
    const { address } = await startApp();
    const home = await homes.create('abci-ahead', true);
    const node = await Daemon.start(home, [...abciFlags(address), '--node.node.block_time', '100ms']);
    await waitFor(async () => (await latestHeight(node.rpc)) >= 3, 'three blocks');
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
    expect((await runCli(['reset', 'soft', '--home', home, '--yes'])).code).toBe(0);
    expect(await failedStart(home, address)).toMatch(
      /execution layer out of sync: node at 0, app at \d+: the node has no blocks but the app has committed some\. Stop the node and the app, delete the app's data/,
    );
  });

  it('an app that answers with a malformed frame stops the node with a clear message, not a hang', async () => {
    const server = createServer((socket) => socket.once('data', () => socket.write(Buffer.alloc(11, 0xff))));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = `tcp://127.0.0.1:${(server.address() as { port: number }).port}`;
    const home = await homes.create('abci-garbage', true);
    expect(await failedStart(home, address)).toContain(
      `the ABCI app at ${address} (consensus connection) sent a malformed frame: bad length prefix: a varint longer than 10 bytes`,
    );
  });
});
