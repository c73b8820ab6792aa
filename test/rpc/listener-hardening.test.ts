/**
 * Slow clients and web pages against both listeners of a running `noded start`
 * (rpc.address and rpc.status_address), with short rpc.* timeouts: connections
 * whose headers never finish, idle keep-alive and HTTP/2 connections are
 * closed, a body announced past the limit is refused before it is sent,
 * another origin may not submit txs, a foreign Host is refused, and a
 * malformed gRPC message is INVALID_ARGUMENT. The connection cap is tried on
 * listen() itself, with a cap small enough to reach.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { nodeListenerMove } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { listen, type Listener } from '../../src/rpc/index.js';
import { Daemon, killAll, latestHeight, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';

const homes = new Homes();
let node: Daemon;
const GOOD = 'http://good.example';
const EVIL = 'http://evil.example';
/** Far beyond the 1s timeouts the node runs with, so a loaded machine never fails a test that holds. */
const DEADLINE_MS = 15_000;

beforeAll(async () => {
  const home = await homes.create('listener-hardening', true);
  node = await Daemon.start(home, [
    ...['--node.node.block_time', '200ms', '--node.log.level', 'debug'],
    ...['--node.rpc.header_timeout', '1s', '--node.rpc.request_timeout', '2s', '--node.rpc.idle_timeout', '1s'],
    ...['--node.rpc.cors_allowed_origins', GOOD],
  ]);
  await waitFor(async () => (await latestHeight(node.rpc)) >= 1, 'the first block', 20_000);
});

afterAll(async () => {
  await killAll();
  homes.cleanup();
});

const portOf = (url: string) => Number(new URL(url).port);
const listenerUrl = (which: 'rpc' | 'status') => (which === 'rpc' ? node.rpc : node.status);

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One HTTP/1.1 request on a connection of its own, with exactly these headers. */
function send(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A raw TCP connection: what it has received, and a promise of its closing. */
function rawConnection(url: string, write?: string): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(portOf(url), '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d) => (received += d.toString())); // a string after setEncoding; typed Buffer
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  if (write !== undefined) socket.write(write);
  return { socket, received: () => received, closed };
}

/** Resolves when `closed` does, or fails naming `what` once the deadline passes. */
async function closesBeforeDeadline(closed: Promise<unknown>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still open after ${DEADLINE_MS}ms`)), DEADLINE_MS);
  });
  try {
    await Promise.race([closed, late]);
  } finally {
    clearTimeout(timer);
  }
}

const hex = (text: string) => Buffer.from(text).toString('hex');
const kv = (key: string) => send(`${node.rpc}/kv/${key}`);

describe.each(['rpc', 'status'] as const)('the %s listener', (which) => {
  it('closes 50 connections whose headers never finish, and keeps answering GetBlock meanwhile', async () => {
    const url = listenerUrl(which);
    const slow = Array.from({ length: 50 }, (_, i) =>
      // Half send part of a request's headers, half nothing at all.
      rawConnection(url, i % 2 === 0 ? `GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ` : undefined),
    );
    try {
      expect(await latestHeight(node.rpc)).toBeGreaterThanOrEqual(1);
      await Promise.all(slow.map((c, i) => closesBeforeDeadline(c.closed, `slow connection ${i}`)));
      // None was answered as if its request had been whole.
      for (const c of slow) expect(c.received()).not.toContain(' 200 ');
      expect(await latestHeight(node.rpc)).toBeGreaterThanOrEqual(1);
    } finally {
      for (const c of slow) c.socket.destroy();
    }
  });

  it('closes a kept-alive connection that stays idle after its answer', async () => {
    const path = which === 'rpc' ? '/health/live' : '/health';
    const c = rawConnection(listenerUrl(which), `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    try {
      await waitFor(() => c.received().includes(' 200 '), 'the answer');
      expect(c.received()).not.toMatch(/connection: close/i);
      await closesBeforeDeadline(c.closed, 'the idle connection');
    } finally {
      c.socket.destroy();
    }
  });

  it('closes an HTTP/2 connection that never sends a request, and one idle after its answer', async () => {
    const sessions: ClientHttp2Session[] = [];
    const open = () => {
      const s = http2Connect(listenerUrl(which));
      s.on('error', () => {});
      sessions.push(s);
      return { session: s, closed: new Promise<void>((resolve) => s.once('close', () => resolve())) };
    };
    try {
      const silent = open();
      const used = open();
      const status = await new Promise<number>((resolve, reject) => {
        const req = used.session.request({ ':path': which === 'rpc' ? '/health/live' : '/health' });
        req.on('response', (h) => resolve(Number(h[':status'])));
        req.on('error', reject);
        req.resume();
        req.end();
      });
      expect(status).toBe(200);
      await closesBeforeDeadline(silent.closed, 'the silent HTTP/2 connection');
      await closesBeforeDeadline(used.closed, 'the idle HTTP/2 connection');
    } finally {
      for (const s of sessions) s.destroy();
    }
  });

  it('cuts off a request whose body does not arrive within request_timeout, on HTTP/1.1 and HTTP/2', async () => {
    const path = which === 'rpc' ? '/tx' : '/';
    const c = rawConnection(listenerUrl(which), `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nk=`);
    const session = http2Connect(listenerUrl(which));
    session.on('error', () => {});
    try {
      const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'text/plain' });
      stream.on('error', () => {});
      stream.resume();
      // Part of the body, and never its end.
      stream.write('k=');
      const reset = new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? -1)));
      await closesBeforeDeadline(c.closed, 'the HTTP/1.1 connection with a body that never ends');
      expect(c.received()).toMatch(/^(HTTP\/1\.1 408 |$)/);
      await closesBeforeDeadline(reset, 'the HTTP/2 stream with a body that never ends');
      expect(await reset).toBe(8); // NGHTTP2_CANCEL
    } finally {
      c.socket.destroy();
      session.destroy();
    }
  });

  it('refuses a Host that does not name it (DNS rebinding), and takes localhost and IP addresses', async () => {
    const url = listenerUrl(which);
    const path = which === 'rpc' ? '/health/live' : '/health';
    const bad = await send(`${url}${path}`, { headers: { host: `evil.example:${portOf(url)}` } });
    expect(bad.status).toBe(403);
    expect(bad.text).toContain('Host \\"evil.example:');
    expect(bad.text).toContain('rpc.allowed_hosts');
    for (const host of [`localhost:${portOf(url)}`, `127.0.0.1:${portOf(url)}`, `[::1]:${portOf(url)}`]) {
      expect((await send(`${url}${path}`, { headers: { host } })).status, host).toBe(200);
    }
  });
});

describe('bodies over the limit', () => {
  const announced50MB = (path: string, type: string) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`;

  it.each([
    ['rpc', '/tx', 'text/plain', '"error":"request body of 52428800 bytes exceeds the limit of 1048576 bytes"'],
    [
      'rpc',
      '/node.v1.StoreService/GetBlock',
      'application/json',
      '"code":"resource_exhausted","message":"request body of 52428800 bytes exceeds the limit of 1048576 bytes"',
    ],
    ['status', '/', 'application/json', '"data":"request body of 52428800 bytes exceeds the limit of 1048576 bytes"'],
  ] as const)('%s %s: 50 MB announced is refused with 413 before the body is sent', async (which, path, type, body) => {
    const c = rawConnection(listenerUrl(which), announced50MB(path, type));
    try {
      // Not one byte of the body is written: the answer and the close come on the headers alone.
      await closesBeforeDeadline(c.closed, 'the connection after the 413');
      expect(c.received()).toMatch(/^HTTP\/1\.1 413 /);
      expect(c.received()).toContain(body);
    } finally {
      c.socket.destroy();
    }
  });

  it('a 2 MB GetBlock body without Content-Length is 413 too (Connect alone would answer 429)', async () => {
    const r = await send(`${node.rpc}/node.v1.StoreService/GetBlock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: Buffer.alloc(2 * 1024 * 1024, 0x20),
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text)).toEqual({ code: 'resource_exhausted', message: 'request body exceeds the limit of 1048576 bytes' });
  });
});

describe('web pages', () => {
  it('of another origin cannot submit a tx by POST /tx, GET /broadcast_tx_sync or a JSON-RPC call', async () => {
    const refused = [
      await send(`${node.rpc}/tx`, { method: 'POST', headers: { origin: EVIL, 'content-type': 'text/plain' }, body: 'evil1=x' }),
      await send(`${node.status}/broadcast_tx_sync?tx=0x${hex('evil2=x')}`, { headers: { origin: EVIL } }),
      await send(`${node.status}/broadcast_tx_async?tx=0x${hex('evil3=x')}`, { method: 'POST', headers: { origin: EVIL } }),
      await send(node.status, {
        method: 'POST',
        headers: { origin: EVIL, 'content-type': 'text/plain' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'broadcast_tx_sync', params: { tx: Buffer.from('evil4=x').toString('base64') } }),
      }),
    ];
    for (const r of refused) {
      expect(r.status, r.text).toBe(403);
      expect(r.text).toContain('rpc.cors_allowed_origins');
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
    // A tx sent after them lands; none of theirs did.
    expect((await send(`${node.rpc}/tx`, { method: 'POST', body: 'after=1' })).status).toBe(200);
    await waitFor(async () => (await kv('after')).status === 200, 'the tx sent after the refused ones in a block');
    for (const key of ['evil1', 'evil2', 'evil3', 'evil4']) expect((await kv(key)).status, key).toBe(404);
  });

  it('of another origin still read, without CORS headers (the browser keeps the answer from the page)', async () => {
    const r = await send(`${node.status}/status`, { headers: { origin: EVIL } });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('of an allowed origin submit, with CORS headers, and their preflight is answered', async () => {
    const tx = await send(`${node.rpc}/tx`, { method: 'POST', headers: { origin: GOOD, 'content-type': 'text/plain' }, body: 'good1=x' });
    expect(tx.status, tx.text).toBe(200);
    expect(tx.headers['access-control-allow-origin']).toBe(GOOD);
    const uri = await send(`${node.status}/broadcast_tx_sync?tx=0x${hex('good2=x')}`, { headers: { origin: GOOD } });
    expect(uri.status).toBe(200);
    expect(JSON.parse(uri.text).result.code).toBe(0);
    expect(uri.headers['access-control-allow-origin']).toBe(GOOD);
    await waitFor(async () => (await kv('good1')).status === 200 && (await kv('good2')).status === 200, 'both allowed txs in a block');

    const preflight = (origin: string) =>
      send(`${node.rpc}/node.v1.StoreService/GetBlock`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
    const ok = await preflight(GOOD);
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe(GOOD);
    expect(ok.headers['access-control-allow-methods']).toBe('HEAD, GET, POST');
    expect(ok.headers['access-control-allow-headers']).toContain('Content-Type');
    expect((await preflight(EVIL)).status).toBe(403);
  });
});

describe('gRPC and aborted requests', () => {
  it('a malformed gRPC message is INVALID_ARGUMENT, not INTERNAL', async () => {
    const session = http2Connect(node.rpc);
    session.on('error', () => {});
    try {
      const status = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ':method': 'POST', ':path': '/node.v1.StoreService/GetBlock', 'content-type': 'application/grpc', te: 'trailers' });
        let headers: Record<string, unknown> = {};
        req.on('response', (h) => (headers = h));
        // A trailers-only answer carries the status in its headers.
        req.on('trailers', (t) => resolve(String(t['grpc-status'])));
        req.on('end', () => resolve(String(headers['grpc-status'])));
        req.on('error', reject);
        req.resume();
        // One uncompressed message of 1 byte: field 1's tag with its varint missing.
        req.end(Buffer.from([0, 0, 0, 0, 1, 0x08]));
      });
      expect(status).toBe('3');
    } finally {
      session.destroy();
    }
  });

  it.each([
    ['rpc', '/node.v1.StoreService/GetBlock'],
    ['status', '/?gone'],
  ] as const)('a client gone mid-body on the %s listener is a debug line without a stack, never an error', async (which, path) => {
    const c = rawConnection(
      listenerUrl(which),
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"hei`,
    );
    await new Promise((r) => setTimeout(r, 50));
    c.socket.destroy();
    const line = await waitFor(() => node.stderr.split('\n').find((l) => l.includes('RPC_CLIENT_GONE') && l.includes(path)), 'the RPC_CLIENT_GONE line');
    expect(JSON.parse(line)).toMatchObject({ code: 'RPC_CLIENT_GONE', url: path });
    expect(line).not.toContain('stack');
    expect(node.stderr).not.toContain('RPC_REQUEST_FAILED');
  });
});

describe('listen() with max_connections 3', () => {
  let listener: Listener;
  let log = '';
  beforeAll(async () => {
    const limits = { headerTimeoutMs: 10_000, requestTimeoutMs: 10_000, idleTimeoutMs: 10_000, maxConnections: 3 };
    const logger = createLogger({ level: 'info', format: 'json', destination: { write: (l: string) => (log += l) } });
    listener = await listen('127.0.0.1:0', (_req, res) => res.end('ok'), nodeListenerMove('rpc.address', '127.0.0.1:0'), limits, logger);
  });
  afterAll(() => listener?.close());

  it('closes a fourth connection as soon as it is accepted, and takes one again once another closes', async () => {
    const url = `http://127.0.0.1:${listener.address.port}`;
    const request = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const held = [rawConnection(url, request), rawConnection(url, request), rawConnection(url, request)];
    try {
      // All three answered and kept alive: each counts as open.
      await waitFor(() => held.every((c) => c.received().includes('ok')), 'three kept-alive answers');
      const fourth = rawConnection(url, request);
      // Closed long before any of the 10s timeouts could close it, with no answer.
      await closesBeforeDeadline(fourth.closed, 'the fourth connection');
      expect(fourth.received()).toBe('');
      // The operator learns why, and which key raises the cap.
      expect(JSON.parse(log.split('\n').find((l) => l.includes('RPC_CONNECTIONS_FULL'))!)).toMatchObject({
        level: 40, // warn
        code: 'RPC_CONNECTIONS_FULL',
        maxConnections: 3,
        msg: expect.stringContaining('rpc.max_connections'),
      });
      held.shift()!.socket.destroy();
      await waitFor(async () => {
        const next = rawConnection(url, request);
        await closesBeforeDeadline(Promise.race([next.closed, waitFor(() => next.received().includes('ok'), 'an answer')]), 'a new connection');
        next.socket.destroy();
        return next.received().includes('ok');
      }, 'a connection taken after one of the three closed');
    } finally {
      for (const c of held) c.socket.destroy();
    }
  });
});
