import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initHome, readHome } from '../../src/home/index.js';
import { runToExit } from '../helpers/script.js';
import { Ed25519Key, libp2pPeerId } from '../../src/types/index.js';
import { CHAIN_ID, Hosts, addressOf, silent, waitFor } from './helpers.js';

const hosts = new Hosts();
afterEach(() => hosts.closeAll());

describe('P2PHost', () => {
  it("takes its identity from the home's node key: libp2p's peer id is the one the home computes", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'noded-p2p-'));
    try {
      initHome({ home: dir, chainId: CHAIN_ID, aggregator: false, force: false });
      const home = readHome(dir);
      const host = await hosts.start({ key: home.nodeKey.key });
      expect(host.peerId).toBe(home.nodeKey.peerId);
      expect(host.peerId).toBe(libp2pPeerId(home.nodeKey.key.publicKey));
      expect(host.node.peerId.toString()).toBe(home.nodeKey.peerId);
      const [addr] = host.listenAddresses();
      expect(addr).toMatch(new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/[1-9]\\d*/p2p/${home.nodeKey.peerId}$`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a bad peer address before it binds anything', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const bare = libp2pPeerId(Ed25519Key.generate().publicKey);
    await expect(hosts.start({ listen: `/ip4/127.0.0.1/tcp/${port}`, peers: [bare] })).rejects.toThrow(
      new RegExp(`peer address "${bare}" is a bare peer id.*expected /ip4/<ip>/tcp/<port>/p2p/<peer_id>`),
    );
    // The port is still free: nothing was bound.
    await new Promise<void>((resolve, reject) => {
      const server = createServer()
        .once('error', reject)
        .listen(port, '127.0.0.1', () => server.close(() => resolve()));
    });
  });

  it('names the listen address when its port is taken', async () => {
    const a = await hosts.start();
    const port = addressOf(a).split('/')[4];
    await expect(hosts.start({ listen: `/ip4/127.0.0.1/tcp/${port}` })).rejects.toThrow(`cannot listen for peers on /ip4/127.0.0.1/tcp/${port}`);
  });

  it('dials its peers, reports them, and redials a peer that restarts on the same port', async () => {
    const keyB = Ed25519Key.generate();
    let b = await hosts.start({ key: keyB });
    const addrB = addressOf(b);
    const a = await hosts.start({ peers: [addrB] });
    await waitFor('A to connect to B', () => a.isConnected(b.peerId));
    await waitFor('B to see A', () => b.isConnected(a.peerId));

    expect(a.peerInfo()).toEqual([{ id: b.peerId, address: addrB }]);
    const info = a.netInfo();
    expect(info.id).toBe(a.peerId);
    expect(info.listen_addresses).toEqual(a.listenAddresses());
    expect(info.connected_peers).toEqual([{ id: b.peerId, address: addrB }]);
    expect(b.peerInfo().map((p) => p.id)).toEqual([a.peerId]);

    await b.close();
    await waitFor('A to notice B is gone', () => !a.isConnected(b.peerId));
    expect(a.peerInfo()).toEqual([]);

    // Same key, same port: a restarted B.
    b = await hosts.start({ key: keyB, listen: addrB.replace(/\/p2p\/.*$/, '') });
    expect(addressOf(b)).toBe(addrB);
    await waitFor('A to redial the restarted B', () => a.isConnected(b.peerId), 15_000);
    expect(a.peerInfo()).toEqual([{ id: b.peerId, address: addrB }]);
  });

  it('close() is idempotent, closes every connection and stops libp2p', async () => {
    const b = await hosts.start();
    const a = await hosts.start({ peers: [addressOf(b)] });
    await waitFor('A and B to connect', () => a.connectionCount > 0 && b.connectionCount > 0);
    await Promise.all([a.close(), a.close()]);
    await a.close();
    expect(a.connectionCount).toBe(0);
    expect(a.node.status).toBe('stopped');
    await waitFor('B to see the connection closed', () => b.connectionCount === 0);
  });

  it('closes when its signal aborts', async () => {
    const controller = new AbortController();
    const a = await hosts.start({ signal: controller.signal });
    controller.abort();
    await waitFor('the host to stop', () => a.node.status === 'stopped');
    expect(a.closed).toBe(true);
  });

  it('leaves nothing that keeps the process alive once closed', async () => {
    // A separate process runs two connected hosts, closes them and returns from main without process.exit():
    // it ends by itself only if no socket, timer or handle is left.
    const { code, out } = await runToExit(new URL('./fixtures/close-exits.ts', import.meta.url), 20_000);
    expect(out).toContain('closed: connections=0 status=stopped');
    expect(code, `the process did not exit by itself:\n${out}`).toBe(0);
  });

  it('keeps running when a configured peer is unreachable', async () => {
    const ghost = libp2pPeerId(Ed25519Key.generate().publicKey);
    const a = await hosts.start({ peers: [`/ip4/127.0.0.1/tcp/1/p2p/${ghost}`], logger: silent() });
    expect(a.peerInfo()).toEqual([]);
    expect(a.node.status).toBe('started');
  });
});
