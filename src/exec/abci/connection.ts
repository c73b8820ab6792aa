import { connect, type Socket } from 'node:net';
import type { DeepPartial } from 'cosmjs-types/helpers';
import { parseHostPort } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import { retry } from '../../util/index.js';
import { FrameError, FrameReader } from './framing.js';
import { FrameBatch, decodeResponseOneof, methodName, type Method, type RequestOf, type ResponseOf } from './messages.js';

/** The app cannot be reached, or the connection dropped: the call may be tried again once the app is back. */
export class AbciUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbciUnavailableError';
  }
}

/**
 * The app broke the protocol (a malformed frame, a response that does not
 * answer the request, an `exception`) or did not answer in time: the
 * connection is closed, and trying the same call again would not help.
 */
export class AbciProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbciProtocolError';
  }
}

export type ConnectionName = 'consensus' | 'mempool' | 'query';

/** Where the app listens: `tcp://host:port` or `unix:///path`. */
export type AbciEndpoint = { host: string; port: number } | { path: string };

export function parseAbciAddress(address: string): AbciEndpoint {
  if (address.startsWith('unix://') && address.length > 'unix://'.length) return { path: address.slice('unix://'.length) };
  try {
    if (address.startsWith('tcp://')) return parseHostPort(address.slice('tcp://'.length));
  } catch {
    // Named below with the forms an address takes.
  }
  throw new RangeError(`ABCI address: got ${JSON.stringify(address)}, expected tcp://host:port or unix:///path/to/socket`);
}

export interface ConnectionOptions {
  address: string;
  name: ConnectionName;
  /** How long the app has to answer a call once it is sent. */
  callTimeoutMs: number;
  logger: Logger;
  /** Longest wait between two dials while waiting for the app. */
  maxRetryDelayMs?: number;
}

export interface CallOptions {
  /**
   * Dial an unreachable app again with backoff (logged) until it answers or the
   * connection is closed; without, an unreachable app fails the call at once
   * with AbciUnavailableError.
   */
  waitForApp?: boolean;
  /** Only on the socket of this generation: fail with AbciUnavailableError if it was lost since, never dial a new one. */
  generation?: number;
}

/** A call sent (or queued to send) and waiting for its response; a Flush the connection sends itself has no caller. */
interface PendingCall {
  method: Method;
  deadline: number;
  resolve?: (response: unknown) => void;
  reject?: (err: Error) => void;
}

const FIRST_RETRY_DELAY_MS = 100;

/** A dial that failed: tried again while waiting for the app, else told as AbciUnavailableError. */
class AppUnreachable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}
/**
 * Most calls written behind one Flush. Calls made in one turn of the event loop
 * share a write; past this many they go out in slices (about 56 KiB of 100-byte
 * CheckTx), so the app answers the first while the node still writes the rest
 * instead of the two taking turns. On the abci bench, 128 to unbounded measured
 * alike on an idle host; 128 and below did worse under load (more writes).
 */
const BATCH_CALLS = 512;

/** Calls in the order they were queued; taking the oldest is O(1), so thousands of pipelined CheckTx stay cheap. */
class CallQueue {
  private calls: PendingCall[] = [];
  private head = 0;
  /** Calls before this index have been written and have a deadline. */
  private sentUpTo = 0;

  push(call: PendingCall): void {
    this.calls.push(call);
  }

  get oldest(): PendingCall | undefined {
    return this.calls[this.head];
  }

  shift(): void {
    this.head++;
    if (this.head >= 1024 && this.head * 2 >= this.calls.length) {
      this.calls = this.calls.slice(this.head);
      this.sentUpTo = Math.max(0, this.sentUpTo - this.head);
      this.head = 0;
    }
  }

  /** Gives the calls queued since the last write their deadline. */
  markSent(deadline: number): void {
    for (let i = Math.max(this.sentUpTo, this.head); i < this.calls.length; i++) this.calls[i]!.deadline = deadline;
    this.sentUpTo = this.calls.length;
  }

  /** Removes and returns every call waiting. */
  drain(): PendingCall[] {
    const waiting = this.calls.slice(this.head);
    this.calls = [];
    this.head = 0;
    this.sentUpTo = 0;
    return waiting;
  }
}

/**
 * One socket to the app, as CometBFT's socket client keeps it: requests are
 * written in order and answered in order; the app writes its answers out when
 * it reads a Flush, so every batch of requests written in one turn of the event
 * loop (up to BATCH_CALLS of them) ends with one Flush, in one socket write
 * (CheckTx calls arriving together share it).
 * A dropped socket is dialled again on the next call.
 */
export class AbciConnection {
  private socket: Socket | null = null;
  private dialing: Promise<Socket> | null = null;
  private readonly pending = new CallQueue();
  /** Requests queued since the last write, framed into one buffer. */
  private outgoing = new FrameBatch();
  private flushScheduled = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly closed = new AbortController();
  private readonly endpoint: AbciEndpoint;
  /** Sockets opened so far; a caller sees from it that the app may have restarted. */
  generation = 0;

  constructor(private readonly opts: ConnectionOptions) {
    this.endpoint = parseAbciAddress(opts.address);
  }

  /** Whether a socket to the app is open now. */
  get connected(): boolean {
    return this.socket !== null;
  }

  private get what(): string {
    return `the ABCI app at ${this.opts.address} (${this.opts.name} connection)`;
  }

  /** Sends one request and resolves with its response. */
  call<M extends Method>(method: M, body: DeepPartial<RequestOf<M>>, opts: CallOptions = {}): Promise<ResponseOf<M>> {
    if (opts.generation !== undefined && (!this.socket || opts.generation !== this.generation)) {
      return Promise.reject(new AbciUnavailableError(`${this.what} was lost since the app was last in step with the node`));
    }
    // With a socket open (the usual case: thousands of CheckTx a second) the request is queued at once.
    if (this.socket) return this.send(this.socket, method, body);
    return this.open(opts.waitForApp ?? false).then((socket) => this.send(socket, method, body));
  }

  private send<M extends Method>(socket: Socket, method: M, body: DeepPartial<RequestOf<M>>): Promise<ResponseOf<M>> {
    return new Promise<ResponseOf<M>>((resolve, reject) => {
      // A socket lost since open() resolved: say so, as a call on a dead socket would.
      if (socket !== this.socket) throw new AbciUnavailableError(`lost ${this.what}`);
      this.outgoing.request(method, body);
      this.pending.push({ method, deadline: 0, resolve: resolve as (r: unknown) => void, reject });
      // A long run of calls goes out in slices, so the app works on one while the node writes the next.
      if (this.outgoing.count >= BATCH_CALLS) this.writeBatch(socket);
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush(socket));
      }
    });
  }

  private flush(socket: Socket): void {
    this.flushScheduled = false;
    this.writeBatch(socket);
  }

  /** Writes the queued requests and a Flush in one write. */
  private writeBatch(socket: Socket): void {
    if (socket !== this.socket || this.outgoing.count === 0) return;
    this.pending.push({ method: 'flush', deadline: 0 });
    this.outgoing.request('flush', {});
    this.pending.markSent(Date.now() + this.opts.callTimeoutMs);
    socket.write(this.outgoing.take());
    this.armTimer();
  }

  private async open(waitForApp: boolean): Promise<Socket> {
    const { address, name } = this.opts;
    const signal = this.closed.signal;
    try {
      return await retry(
        async (attempt) => {
          if (signal.aborted) throw new AbciUnavailableError(`${this.what}: connection closed`);
          if (this.socket) return this.socket;
          try {
            const socket = await (this.dialing ??= this.dial().finally(() => (this.dialing = null)));
            if (attempt > 1) this.opts.logger.info({ address, connection: name }, 'connected to the ABCI app');
            return socket;
          } catch (err) {
            throw new AppUnreachable((err as NodeJS.ErrnoException).code ?? (err as Error).message);
          }
        },
        {
          baseMs: FIRST_RETRY_DELAY_MS,
          maxMs: this.opts.maxRetryDelayMs ?? 2000,
          signal,
          retryable: (err) => waitForApp && err instanceof AppUnreachable,
          onRetry: ({ err, attempt, delayMs }) => {
            const { reason } = err as AppUnreachable;
            this.opts.logger.warn(
              { address, connection: name, reason, attempt, retryInMs: delayMs },
              `waiting for the ABCI app at ${address}: ${reason}; start the app or check execution.abci_address`,
            );
          },
        },
      );
    } catch (err) {
      if (signal.aborted) throw new AbciUnavailableError(`${this.what}: connection closed`);
      if (err instanceof AppUnreachable) throw new AbciUnavailableError(`${this.what} is not reachable: ${err.reason}`);
      throw err;
    }
  }

  private dial(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.endpoint);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.setNoDelay(true);
        this.attach(socket);
        resolve(socket);
      });
    });
  }

  private attach(socket: Socket): void {
    this.socket = socket;
    this.generation++;
    const frames = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const body of frames.push(chunk)) this.receive(body);
      } catch (err) {
        const message = err instanceof FrameError ? `${this.what} sent a malformed frame: ${err.message}` : (err as Error).message;
        this.fail(socket, new AbciProtocolError(message));
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(socket, new AbciUnavailableError(`lost ${this.what}: ${err.code ?? err.message}`)));
    socket.on('close', () => this.fail(socket, new AbciUnavailableError(`lost ${this.what}: the app closed the connection`)));
  }

  /** Matches one response to the oldest call waiting; throws AbciProtocolError when it does not answer it. */
  private receive(body: Buffer): void {
    let response;
    try {
      response = decodeResponseOneof(body);
    } catch (err) {
      throw new AbciProtocolError(`${this.what} sent a frame that is not an ABCI Response: ${(err as Error).message}`);
    }
    const { method } = response;
    const call = this.pending.oldest;
    if (method === 'exception') {
      const waiting = call ? ` to ${methodName(call.method)}` : '';
      throw new AbciProtocolError(`${this.what} answered${waiting} with an exception: ${(response.body as { error: string }).error}`);
    }
    if (method === undefined) throw new AbciProtocolError(`${this.what} sent an unknown response (no ABCI 2.0 response type set)`);
    if (!call) throw new AbciProtocolError(`${this.what} sent a ${methodName(method)} response nobody asked for`);
    if (method !== call.method) {
      throw new AbciProtocolError(`${this.what} answered ${methodName(call.method)} with a ${methodName(method)} response`);
    }
    this.pending.shift();
    call.resolve?.(response.body);
    // The timer runs on for the next call: it looks again when it fires (a timer a response would cost more than the answer).
    if (!this.pending.oldest && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /**
   * One timer, for the oldest call sent: the app answers in order, so it is the
   * first to be late. When it fires it checks the call oldest by then, and
   * waits on for that one's deadline if it was answered meanwhile.
   */
  private armTimer(): void {
    if (this.timer) return;
    const oldest = this.pending.oldest;
    if (!oldest || oldest.deadline === 0) return;
    const socket = this.socket!;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        if (socket !== this.socket) return;
        const late = this.pending.oldest;
        if (!late || late.deadline === 0) return;
        if (late.deadline > Date.now()) return this.armTimer();
        const seconds = this.opts.callTimeoutMs / 1000;
        this.fail(socket, new AbciProtocolError(`${this.what} did not answer ${methodName(late.method)} within ${seconds}s; is the app stuck?`));
      },
      Math.max(0, oldest.deadline - Date.now()),
    );
  }

  /** Ends the socket and fails every call on it with `err` (once: later errors of the same socket are ignored). */
  private fail(socket: Socket, err: Error): void {
    if (socket !== this.socket) return;
    this.socket = null;
    socket.destroy();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.outgoing = new FrameBatch();
    for (const call of this.pending.drain()) call.reject?.(err);
  }

  close(): void {
    this.closed.abort();
    if (this.socket) this.fail(this.socket, new AbciUnavailableError(`${this.what}: connection closed`));
  }
}
