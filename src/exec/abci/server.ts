import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { DeepPartial } from 'cosmjs-types/helpers';
import type { Logger } from '../../log/index.js';
import { serialized } from '../../util/index.js';
import { parseAbciAddress } from './connection.js';
import { FrameReader, encodeFrame } from './framing.js';
import { decodeRequest, encodeResponse, methodName, setField, type Method, type RequestOf, type ResponseOf } from './messages.js';

/** An ABCI app's handlers; a method it lacks is answered with an exception, as CometBFT's server does for unknown requests. */
export type AbciApplication = {
  [M in Exclude<Method, 'echo' | 'flush'>]?: (request: RequestOf<M>) => DeepPartial<ResponseOf<M>> | Promise<DeepPartial<ResponseOf<M>>>;
};

/**
 * The app side of the ABCI socket protocol, as CometBFT's socket server runs
 * it: requests of every connection handled one at a time, in order; answers
 * written out when a Flush comes; an app error answered with an `exception`,
 * after which the connection is closed.
 */
export class AbciServer {
  private readonly sockets = new Set<Socket>();
  private readonly handle = serialized((request: Uint8Array) => this.answer(request));

  private constructor(
    private readonly server: Server,
    private readonly app: AbciApplication,
    private readonly logger: Logger,
    /** Where it listens, with the bound port: tcp://host:port or unix:///path. */
    readonly address: string,
  ) {}

  static async listen(address: string, app: AbciApplication, logger: Logger): Promise<AbciServer> {
    const endpoint = parseAbciAddress(address);
    // A socket file left by an app that was killed would refuse the bind.
    if ('path' in endpoint) rmSync(endpoint.path, { force: true });
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen('path' in endpoint ? endpoint.path : { host: endpoint.host, port: endpoint.port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = server.address();
    const boundAddress =
      'path' in endpoint || typeof bound === 'string' || bound === null
        ? address
        : `tcp://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${bound.port}`;
    const abci = new AbciServer(server, app, logger, boundAddress);
    server.on('connection', (socket) => abci.serve(socket));
    return abci;
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    const frames = new FrameReader();
    let answers: Buffer[] = [];
    let work: Promise<void> = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      let bodies: Buffer[];
      try {
        bodies = frames.push(chunk);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'closing an ABCI connection that sent a malformed frame');
        socket.destroy();
        return;
      }
      work = work.then(async () => {
        for (const body of bodies) {
          if (socket.destroyed) return;
          const { bytes, flush, exception } = await this.handle(body);
          answers.push(encodeFrame(bytes));
          if (flush || exception) {
            socket.write(Buffer.concat(answers));
            answers = [];
          }
          if (exception) {
            socket.end();
            return;
          }
        }
      });
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private async answer(body: Uint8Array): Promise<{ bytes: Uint8Array; flush: boolean; exception: boolean }> {
    const exception = (error: string) => ({ bytes: encodeResponse('exception', { error }), flush: true, exception: true });
    let method: Method | undefined;
    let request;
    try {
      request = decodeRequest(body);
      method = setField(request);
    } catch (err) {
      return exception(`request is not an ABCI Request: ${(err as Error).message}`);
    }
    if (method === 'flush') return { bytes: encodeResponse('flush', {}), flush: true, exception: false };
    if (method === 'echo') return { bytes: encodeResponse('echo', { message: request.echo!.message }), flush: false, exception: false };
    const handler = method && (this.app[method] as ((r: unknown) => unknown) | undefined);
    if (!method || !handler) return exception(`unknown request${method ? ` ${methodName(method)}` : ''}`);
    try {
      const response = await handler.call(this.app, request[method]);
      return { bytes: encodeResponse(method, response as never), flush: false, exception: false };
    } catch (err) {
      this.logger.error({ method: methodName(method), err: (err as Error).message }, 'the app failed a request; answering with an exception');
      return exception((err as Error).message);
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
