import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TxBackpressureError, TxRejectedError } from '../../src/exec/index.js';
import { forwardTx } from '../../src/ha/index.js';
import { FORWARDED_HEADER } from '../../src/rpc/index.js';

/*
 * A follower's forwarding of txs to the leader (src/ha/forward.ts), against a
 * real HTTP server on 127.0.0.1:0 standing in for the leader's /tx.
 */

let server: Server | null = null;

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
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
