import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { ListenerMove } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import { BodyTooLargeError, readBody } from '../../rpc/http.js';
import { listen, type Handler, type Listener } from '../../rpc/listen.js';
import { ServerReflection } from '../../rpc/reflection.js';
import { nanosOfTimestamp } from '../../types/index.js';
import { ExecutorService, ExecuteTxsResponseSchema } from '../../types/gen/node/v1/execution_pb.js';
import { TxRejectedError } from '../executor.js';
import type { ServedMachine } from './machine.js';
import { decodeTxBatch, encodeTxBatch } from './tx-batch.js';

/** Largest request taken: a block's txs (8 MiB) and the batch's framing. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

function invalid(message: string): never {
  throw new ConnectError(message, Code.InvalidArgument);
}

function txsOf(batch: Parameters<typeof decodeTxBatch>[0]): Uint8Array[] {
  try {
    return decodeTxBatch(batch);
  } catch (err) {
    return invalid(`invalid tx_batch: ${(err as Error).message}`);
  }
}

/**
 * The ExecutorService handlers over a machine, with the argument checks of
 * ev-node's execution/grpc/server.go (genesis_time, initial_height > 0,
 * chain_id; block_height > 0, timestamp, prev_state_root) answered
 * INVALID_ARGUMENT as there.
 */
function routes(machine: ServedMachine) {
  return (router: ConnectRouter) => {
    router.service(ExecutorService, {
      async initChain(req) {
        if (!req.genesisTime) invalid('genesis_time is required');
        if (req.initialHeight === 0n) invalid('initial_height must be > 0');
        if (req.chainId === '') invalid('chain_id is required');
        return { stateRoot: await machine.initChain(nanosOfTimestamp(req.genesisTime), req.initialHeight, req.chainId) };
      },
      async getTxs() {
        return { txBatch: encodeTxBatch(await machine.getTxs()) };
      },
      async executeTxs(req) {
        if (req.blockHeight === 0n) invalid('block_height must be > 0');
        if (!req.timestamp) invalid('timestamp is required');
        if (req.prevStateRoot.length === 0) invalid('prev_state_root is required');
        const root = await machine.executeTxs(txsOf(req.txBatch), req.blockHeight, nanosOfTimestamp(req.timestamp), req.prevStateRoot);
        return create(ExecuteTxsResponseSchema, { updatedStateRoot: root });
      },
      async setFinal(req) {
        if (req.blockHeight === 0n) invalid('block_height must be > 0');
        await machine.setFinal(req.blockHeight);
        return {};
      },
      async getExecutionInfo() {
        return { maxGas: machine.maxGas() };
      },
      async filterTxs(req) {
        return { statuses: machine.filterTxs(txsOf(req.txBatch), req.maxBytes, req.maxGas, req.hasForceIncludedTransaction) };
      },
    });
    new ServerReflection([ExecutorService]).register(router);
  };
}

/** "Authorization: Bearer <token>" on every call, compared in constant time. */
function bearer(token: string): Interceptor {
  const want = Buffer.from(`Bearer ${token}`);
  return (next) => async (req) => {
    const got = Buffer.from(req.header.get('authorization') ?? '');
    if (got.length !== want.length || !timingSafeEqual(got, want)) {
      throw new ConnectError(got.length ? 'wrong bearer token' : 'missing "Authorization: Bearer <token>"', Code.Unauthenticated);
    }
    return next(req);
  };
}

export interface ExecutorServerOptions {
  listen: string;
  move: ListenerMove;
  machine: ServedMachine;
  /** When set, every RPC needs "Authorization: Bearer <token>". */
  token?: string;
  logger: Logger;
}

const text = (res: ServerResponse, status: number, body: string): void =>
  void res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${body}\n`);

/**
 * `noded exec serve`: a machine as node.v1.ExecutorService over Connect, gRPC
 * and gRPC-Web, HTTP/1.1 and cleartext HTTP/2 on one port (ev-node's
 * execution/grpc/handler.go serves h2c and HTTP/1.1 too), with gRPC reflection
 * as there. Beside it: GET /health (for a supervise `ready:` URL) and POST /tx
 * (a tx for GetTxs to hand out).
 */
export class ExecutorServer {
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly listener: Listener,
    private readonly machine: ServedMachine,
  ) {}

  static async start(opts: ExecutorServerOptions): Promise<ExecutorServer> {
    const adapter = connectNodeAdapter({ readMaxBytes: MAX_REQUEST_BYTES, routes: routes(opts.machine), interceptors: opts.token ? [bearer(opts.token)] : [] });
    const handler: Handler = (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const plain = res as ServerResponse;
      if (path === '/health') return text(plain, 200, 'ok');
      if (path === '/tx') {
        submitTx(opts.machine, req as IncomingMessage, plain).catch((err) => {
          opts.logger.error({ code: 'EXEC_TX_FAILED', err }, 'POST /tx failed');
          if (!plain.headersSent) text(plain, 500, 'internal error');
        });
        return;
      }
      adapter(req, plain);
    };
    return new ExecutorServer(await listen(opts.listen, handler, opts.move), opts.machine);
  }

  get address(): string {
    return `${this.listener.address.host}:${this.listener.address.port}`;
  }

  /** Stops listening, then closes the machine; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= this.listener.close().then(() => this.machine.close());
    return this.closing;
  }
}

async function submitTx(machine: ServedMachine, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') return text(res, 405, 'use POST /tx with the tx bytes as the body');
  let tx: Buffer;
  try {
    tx = await readBody(req, MAX_REQUEST_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return text(res, 413, err.message);
    throw err;
  }
  try {
    await machine.submitTx(new Uint8Array(tx));
  } catch (err) {
    if (err instanceof TxRejectedError) return text(res, err.httpStatus, err.message);
    throw err;
  }
  text(res, 200, 'ok');
}
