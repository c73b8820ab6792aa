import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseCheckTx } from 'cosmjs-types/tendermint/abci/types';
import { nodeListenerMove } from '../../src/config/index.js';
import { CheckTxRejectedError, TxBackpressureError, TxRejectedError } from '../../src/exec/index.js';
import { forwardTx } from '../../src/ha/index.js';
import { silentLogger } from '../../src/log/index.js';
import { FORWARDED_HEADER, listen, type Listener, type RpcBackend } from '../../src/rpc/index.js';
import { RpcServer } from '../../src/rpc/rpc-server.js';

/*
 * A follower's forwarding of txs to the leader (src/ha/forward.ts), against a
 * real HTTP server on 127.0.0.1:0 standing in for the leader's /tx.
 */

let server: Server | null = null;
let rpc: Listener | null = null;

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
  await rpc?.close();
  rpc = null;
});

/** A stand-in leader answering /tx with `status`, `body` and `headers`; it records what it was sent. */
async function leaderAnswering(status: number, body: string, headers: Record<string, string> = {}) {
  const seen: Array<{ url: string; header: string | undefined; body: string }> = [];
  server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', header: req.headers[FORWARDED_HEADER] as string | undefined, body: Buffer.concat(chunks).toString() });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { leader: { node_id: 'leader-1', rpc: `http://127.0.0.1:${port}` }, seen };
}

const opts = { from: 'follower-2', forwarded: false, retryAfterSeconds: 4 };
const tx = new TextEncoder().encode('k=v');

describe('forwardTx', () => {
  it("sends the tx bytes to the leader's /tx, naming this node, and resolves on its 200", async () => {
    const { leader, seen } = await leaderAnswering(200, '{"tx_hash":"AB"}');
    await forwardTx(leader, tx, opts);
    expect(seen).toEqual([{ url: '/tx', header: 'follower-2', body: 'k=v' }]);
  });

  it("passes the leader's 503 and Retry-After on", async () => {
    const { leader } = await leaderAnswering(503, '{"error":"mempool full"}', { 'retry-after': '7' });
    const err = await forwardTx(leader, tx, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TxBackpressureError);
    expect(err).toMatchObject({ httpStatus: 503, retryAfterSeconds: 7, message: 'the HA leader leader-1 refused the forwarded tx: mempool full' });
  });

  it("passes the leader's refusal on with its status", async () => {
    const { leader } = await leaderAnswering(400, '{"error":"bad tx"}');
    const err = await forwardTx(leader, tx, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TxRejectedError);
    expect(err).not.toBeInstanceOf(TxBackpressureError);
    expect(err).toMatchObject({ httpStatus: 400, message: 'the HA leader leader-1 refused the forwarded tx: bad tx' });
  });

  it('no leader known: 503, Retry-After of the options, and the reason', async () => {
    const err = await forwardTx(null, tx, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TxBackpressureError);
    expect(err).toMatchObject({ httpStatus: 503, retryAfterSeconds: 4 });
    expect((err as Error).message).toContain('no leader is known');
  });

  it('a tx forwarded here is not forwarded again', async () => {
    const { leader, seen } = await leaderAnswering(200, '{}');
    const err = await forwardTx(leader, tx, { ...opts, forwarded: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TxBackpressureError);
    expect((err as Error).message).toContain('does not lead');
    expect(seen).toEqual([]);
  });

  it('a leader that does not answer: 503 naming it', async () => {
    const { leader } = await leaderAnswering(200, '{}');
    await new Promise((resolve) => server!.close(resolve));
    server = null;
    const err = await forwardTx(leader, tx, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TxBackpressureError);
    expect((err as Error).message).toContain(`the HA leader leader-1 at ${leader.rpc} did not answer`);
  });
});

/** The leader's real RPC listener (rpc-server.ts /tx) over a backend whose app answers CheckTx with `submitTx`. */
async function leaderRpc(submitTx: RpcBackend['submitTx']) {
  // /tx reads no store: the one the server listens to for its block cache is a stand-in.
  const backend = { submitTx, store: { onDaHeightsWritten: () => () => undefined } };
  rpc = await listen('127.0.0.1:0', new RpcServer(backend as unknown as RpcBackend, silentLogger()).handler, nodeListenerMove('rpc.address', '127.0.0.1:0'));
  return { node_id: 'leader-1', rpc: `http://127.0.0.1:${rpc.address.port}` };
}

describe("forwardTx to a leader's /tx", () => {
  const check = ResponseCheckTx.fromPartial({ code: 0, data: new Uint8Array([1, 2]), log: 'fine', gasWanted: 7n, codespace: '' });

  it("carries the app's CheckTx answer back (broadcast_tx_sync answers with it); a sender's own /tx answer stays as it was", async () => {
    const leader = await leaderRpc(async () => check);
    expect(await forwardTx(leader, tx, opts)).toEqual(check);
    const own = await fetch(`${leader.rpc}/tx`, { method: 'POST', body: tx });
    expect(await own.json()).toEqual({ tx_hash: expect.any(String) });
  });

  it("carries the app's CheckTx refusal back as the app's answer", async () => {
    const refusal = ResponseCheckTx.fromPartial({ code: 5, log: 'bad nonce', codespace: 'app' });
    const leader = await leaderRpc(async () => {
      throw new CheckTxRejectedError(refusal);
    });
    const err = await forwardTx(leader, tx, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckTxRejectedError);
    expect((err as CheckTxRejectedError).response).toEqual(refusal);
    expect(err).toMatchObject({ httpStatus: 400 });
  });

  it('an app without CheckTx answers (kv): nothing to carry', async () => {
    const leader = await leaderRpc(async () => undefined);
    expect(await forwardTx(leader, tx, opts)).toBeUndefined();
  });
});
