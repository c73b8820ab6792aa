import type { Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { constants as h2, createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { defaultConfig, moveAdvice, parseHostPort, type Config, type ListenerMove } from '../config/index.js';
import type { Logger } from '../log/index.js';

export type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** A listener could not bind; the message names the port and the flag that moves it, with a free port. */
export class ListenError extends Error {
  readonly code = 'LISTEN_FAILED';
}

/** What a slow or idle client may hold of a listener (the rpc.* keys of the same names, in ms). */
export interface ListenerLimits {
  /** From the first byte of a connection (or of a request on a kept-alive one) to its request's last header. */
  headerTimeoutMs: number;
  /** From a request's first byte to its body's last. */
  requestTimeoutMs: number;
  /** How long a connection with no request in progress stays open. */
  idleTimeoutMs: number;
  /** Open connections; one more is closed as soon as it is accepted. */
  maxConnections: number;
}

export function listenerLimits(rpc: Config['rpc']): ListenerLimits {
  return {
    headerTimeoutMs: rpc.header_timeout,
    requestTimeoutMs: rpc.request_timeout,
    idleTimeoutMs: rpc.idle_timeout,
    maxConnections: rpc.max_connections,
  };
}

const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** Connections refused at the cap are reported at most this often. */
const FULL_WARNING_EVERY_MS = 60_000;

/** Streams one HTTP/2 connection may have open at once (HTTP/1.1 has one request at a time). */
const MAX_STREAMS_PER_CONNECTION = 100;

export interface Listener {
  /** The address actually bound (port 0 resolved). */
  address: { host: string; port: number };
  close(): Promise<void>;
}

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 (h2c, prior knowledge, as gRPC clients
 * use) on one port: the first bytes of each connection decide which server
 * takes it.
 *
 * The HTTP/1.1 server is the one listening, so its own header, request and
 * keep-alive timeouts and its connection cap (net.Server.maxConnections, which
 * closes a connection past the cap as soon as it is accepted) hold for every
 * connection. Until a connection's first bytes arrive it belongs to neither
 * server, so it has header_timeout to send them; an HTTP/2 connection gets the
 * same bounds from watchSession().
 */
export async function listen(
  address: string,
  handler: Handler,
  move: ListenerMove,
  limits: ListenerLimits = listenerLimits(defaultConfig().rpc),
  logger?: Logger,
): Promise<Listener> {
  const { host, port } = parseHostPort(address);
  const http1 = createHttpServer(
    {
      headersTimeout: limits.headerTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.idleTimeoutMs,
      // How often the server looks for requests past their timeouts (its default is 30s).
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headerTimeoutMs / 4))),
    },
    handler,
  );
  http1.maxConnections = limits.maxConnections;
  let refused = 0;
  let warnedAt = -Infinity;
  http1.on('drop', () => {
    refused++;
    if (!logger || Date.now() - warnedAt < FULL_WARNING_EVERY_MS) return;
    warnedAt = Date.now();
    logger.warn(
      { code: 'RPC_CONNECTIONS_FULL', address, maxConnections: limits.maxConnections, refused },
      `${address} refused ${refused} connection(s): ${limits.maxConnections} are open (rpc.max_connections); raise it (below ulimit -n) or find the client holding them`,
    );
    refused = 0;
  });
  const http2 = createHttp2Server({ settings: { maxConcurrentStreams: MAX_STREAMS_PER_CONNECTION } }, handler);
  http2.on('session', (session: ServerHttp2Session) => watchSession(session, limits));

  // The HTTP/1.1 server's own connection handler takes a socket only once its first bytes show it is not HTTP/2.
  const serveHttp1 = http1.listeners('connection')[0] as (socket: Socket) => void;
  http1.removeAllListeners('connection');
  const sockets = new Set<Socket>();
  http1.on('connection', (socket: Socket) => {
    sockets.add(socket);
    const silent = setTimeout(() => socket.destroy(), limits.headerTimeoutMs);
    socket.once('close', () => {
      clearTimeout(silent);
      sockets.delete(socket);
    });
    socket.once('error', () => socket.destroy());
    socket.once('readable', () => {
      clearTimeout(silent);
      const head = (socket.read(H2_PREFACE.length) ?? socket.read()) as Buffer | null;
      if (!head) return socket.destroy();
      socket.unshift(head);
      const n = Math.min(head.length, H2_PREFACE.length);
      if (head.subarray(0, n).equals(H2_PREFACE.subarray(0, n))) http2.emit('connection', socket);
      else serveHttp1.call(http1, socket);
    });
  });

  const failed = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    http1.once('error', resolve);
    http1.listen(port, host, () => resolve(undefined));
  });
  if (failed) {
    const reason =
      failed.code === 'EADDRINUSE'
        ? `port ${port} is already in use by another process`
        : failed.code === 'EACCES'
          ? `no permission to listen on port ${port}`
          : failed.code === 'EADDRNOTAVAIL'
            ? `address ${host} is not an address of this machine`
            : failed.message;
    // Another port helps when this one is taken or privileged; an address that is not this machine's needs another host.
    const advice = failed.code === 'EADDRINUSE' || failed.code === 'EACCES' ? await moveAdvice(move, host, port) : `choose another address with ${move.flag}`;
    throw new ListenError(`cannot listen on ${address}: ${reason}; ${advice}`);
  }
  const bound = http1.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : port;
  let closed: Promise<void> | undefined;
  return {
    address: { host, port: boundPort },
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        http1.close(() => resolve());
        for (const s of sockets) s.destroy();
      })),
  };
}

/**
 * The HTTP/1.1 server's bounds, for an HTTP/2 connection: its first request's
 * headers within header_timeout, each request's body within request_timeout
 * (the stream is cancelled otherwise), and closed once it has had no stream
 * open for idle_timeout.
 */
function watchSession(session: ServerHttp2Session, limits: ListenerLimits): void {
  let open = 0;
  let timer = setTimeout(() => session.destroy(), limits.headerTimeoutMs);
  session.on('stream', (stream) => {
    open++;
    clearTimeout(timer);
    const request = setTimeout(() => {
      // remoteClose: the client has sent its last byte (END_STREAM); only a request still arriving is cut off.
      if (!stream.destroyed && !stream.state.remoteClose) stream.close(h2.NGHTTP2_CANCEL);
    }, limits.requestTimeoutMs);
    stream.once('close', () => {
      clearTimeout(request);
      if (--open === 0 && !session.closed && !session.destroyed) timer = setTimeout(() => session.close(), limits.idleTimeoutMs);
    });
  });
  session.once('close', () => clearTimeout(timer));
}
