import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { parseHostPort } from '../config/index.js';

export type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** A listener could not bind; the message names the port and the flag that moves it. */
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
export async function listen(address: string, handler: Handler, flag: string): Promise<Listener> {
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const reason =
        err.code === 'EADDRINUSE'
          ? `port ${port} is already in use by another process`
          : err.code === 'EACCES'
            ? `no permission to listen on port ${port}`
            : err.code === 'EADDRNOTAVAIL'
              ? `address ${host} is not an address of this machine`
              : err.message;
      reject(new ListenError(`cannot listen on ${address}: ${reason}; choose another address with --${flag} (e.g. --${flag} ${host}:${port + 1})`));
    });
    server.listen(port, host, () => resolve());
  });
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
