import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { moveAdvice, parseHostPort, type ListenerMove } from '../config/index.js';

export type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** A listener could not bind; the message names the port and the flag that moves it, with a free port. */
export class ListenError extends Error {
  readonly code = 'LISTEN_FAILED';
}

const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface Listener {
  /** The address actually bound (port 0 resolved). */
  address: { host: string; port: number };
  close(): Promise<void>;
}

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 (h2c, prior knowledge, as gRPC clients
 * use) on one port: the first bytes of each connection decide which server
 * takes it.
 */
export async function listen(address: string, handler: Handler, move: ListenerMove): Promise<Listener> {
  const { host, port } = parseHostPort(address);
  const http1 = createHttpServer({ keepAliveTimeout: 65_000 }, handler);
  const http2 = createHttp2Server({}, handler);
  const sockets = new Set<Socket>();
  const server: Server = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.once('error', () => socket.destroy());
    socket.once('readable', () => {
      const head: Buffer | null = socket.read(H2_PREFACE.length) ?? socket.read();
      if (!head) return socket.destroy();
      socket.unshift(head);
      const n = Math.min(head.length, H2_PREFACE.length);
      const isH2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      (isH2 ? http2 : http1).emit('connection', socket);
    });
  });
  const failed = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    server.once('error', resolve);
    server.listen(port, host, () => resolve(undefined));
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
  const bound = server.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : port;
  return {
    address: { host, port: boundPort },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        http1.closeIdleConnections();
        for (const s of sockets) s.destroy();
      }),
  };
}
