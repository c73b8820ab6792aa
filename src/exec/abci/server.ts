import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { DeepPartial } from 'cosmjs-types/helpers';
import type { Logger } from '../../log/index.js';
import { parseAbciAddress } from './connection.js';
import { FrameReader } from './framing.js';
import { FrameBatch, decodeRequestOneof, methodName, type Method, type RequestOf, type ResponseOf } from './messages.js';

/** An ABCI app's handlers; a method it lacks is answered with an exception, as CometBFT's server does for unknown requests. */
export type AbciApplication = {
  [M in Exclude<Method, 'echo' | 'flush'>]?: (request: RequestOf<M>) => DeepPartial<ResponseOf<M>> | Promise<DeepPartial<ResponseOf<M>>>;
};

/** One client connection: the answers waiting for its next Flush, and whether it is closing after an exception. */
interface Client {
  socket: Socket;
  answers: FrameBatch;
  ended: boolean;
}

/**
 * The app side of the ABCI socket protocol, as CometBFT's socket server runs
 * it: requests of every connection handled one at a time, in order; answers
 * written out when a Flush comes; an app error answered with an `exception`,
 * after which the connection is closed. A handler that answers synchronously
 * is answered at once, in the same turn as the frames that carried it (no
 * promise a request); one that returns a promise holds every request behind it.
 */
export class AbciServer {
  private readonly sockets = new Set<Socket>();
  /** Requests read and not yet handled, oldest first from `head`. */
  private queue: Array<{ client: Client; body: Uint8Array } | undefined> = [];
  private head = 0;
  /** A request is being handled (synchronously, or an app's promise is pending). */
  private running = false;

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
    const client: Client = { socket, answers: new FrameBatch(), ended: false };
    socket.on('data', (chunk: Buffer) => {
      let bodies: Buffer[];
      try {
        bodies = frames.push(chunk);
      } catch (err) {
        this.logger.error({ code: 'ABCI_BAD_FRAME', err: (err as Error).message }, 'closing an ABCI connection that sent a malformed frame');
        socket.destroy();
        return;
      }
      for (const body of bodies) this.queue.push({ client, body });
      this.pump();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  /** Handles queued requests in order until none is left, or until an app's promise holds the rest. */
  private pump(): void {
    if (this.running) return;
    this.running = true;
    while (this.head < this.queue.length) {
      const { client, body } = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      if (client.ended || client.socket.destroyed) continue;
      const pending = this.handle(client, body);
      if (pending) {
        const resume = () => {
          this.running = false;
          this.pump();
        };
        pending.then(resume, resume);
        return;
      }
    }
    this.queue = [];
    this.head = 0;
    this.running = false;
  }

  /** Answers one request into its client's batch; a promise while the app's handler has not answered yet. */
  private handle(client: Client, body: Uint8Array): Promise<void> | undefined {
    let method: Method | undefined;
    let request: unknown;
    try {
      ({ method, body: request } = decodeRequestOneof(body));
    } catch (err) {
      return this.exception(client, `request is not an ABCI Request: ${(err as Error).message}`);
    }
    if (method === 'flush') {
      client.answers.response('flush', {});
      return this.writeOut(client);
    }
    if (method === 'echo') return void client.answers.response('echo', { message: (request as { message: string }).message });
    const handler = method && (this.app[method] as ((r: unknown) => unknown) | undefined);
    if (!method || !handler) return this.exception(client, `unknown request${method ? ` ${methodName(method)}` : ''}`);
    let response: unknown;
    try {
      response = handler.call(this.app, request);
    } catch (err) {
      return this.failed(client, method, err as Error);
    }
    if (typeof (response as PromiseLike<unknown> | undefined)?.then === 'function') {
      return Promise.resolve(response).then(
        (answer) => this.respond(client, method, answer),
        (err) => this.failed(client, method, err as Error),
      );
    }
    return this.respond(client, method, response);
  }

  private respond(client: Client, method: Method, response: unknown): undefined {
    try {
      client.answers.response(method, response as never);
    } catch (err) {
      return this.failed(client, method, err as Error);
    }
    return undefined;
  }

  private failed(client: Client, method: Method, err: Error): undefined {
    this.logger.error({ code: 'ABCI_APP_FAILED', method: methodName(method), err: err.message }, 'the app failed a request; answering with an exception');
    return this.exception(client, err.message);
  }

  /** Answers with an exception, writes out what is waiting and closes the connection. */
  private exception(client: Client, error: string): undefined {
    client.answers.response('exception', { error });
    this.writeOut(client);
    client.ended = true;
    client.socket.end();
    return undefined;
  }

  private writeOut(client: Client): undefined {
    if (client.answers.count > 0 && !client.socket.destroyed) client.socket.write(client.answers.take());
    return undefined;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
