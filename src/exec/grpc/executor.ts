import { Code, ConnectError, createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import type { Genesis } from '../../home/index.js';
import type { Logger } from '../../log/index.js';
import { decodeStoredBlock, type BlockStore } from '../../store/index.js';
import { timestampFromNanos } from '../../types/index.js';
import { ExecutorService } from '../../types/gen/node/v1/execution_pb.js';
import { serialized, toHex } from '../../util/index.js';
import { RemoteSession } from '../remote-session.js';
import { ExecutionSyncError } from '../evm/evm.js';
import { type ExecResult, type Executor } from '../executor.js';
import { FilterStatus as Status } from '../filter.js';
import { MAX_BLOCK_TXS, MAX_BLOCK_TX_BYTES } from '../kv/kv.js';
import type { Mempool } from '../mempool.js';
import { decodeTxBatch, encodeTxBatch } from './tx-batch.js';

/** The executor did not answer (down, restarting, a network fault): asked again with backoff, the handshake first. */
export class ExecutorUnreachableError extends Error {
  readonly code = 'EXECUTOR_UNREACHABLE';
}

/** The executor lacks blocks before the one asked (OUT_OF_RANGE): the handshake replays them, then the block goes again. */
class ExecutorBehindError extends Error {}

/** The executor refused or failed a call in a way retrying cannot mend. */
export class ExecutorError extends Error {
  constructor(
    message: string,
    readonly code: 'EXECUTOR_AUTH' | 'EXECUTOR_NOT_AN_EXECUTOR' | 'EXECUTOR_FAILED',
  ) {
    super(message);
    this.name = 'ExecutorError';
  }
}

export interface GrpcExecutorOptions {
  /** execution.grpc_address: http(s)://host:port of the ExecutorService. */
  url: string;
  /** execution.grpc_auth_token: sent as "Authorization: Bearer <token>"; empty = none. */
  token: string;
  store: BlockStore;
  mempool: Mempool;
  genesis: Genesis;
  /** Largest total of tx bytes one block takes (a block must fit one DA blob). */
  maxBlockTxBytes: number;
  logger: Logger;
  /** Longest one call may take. */
  timeoutMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
}

/** Codes a call ends with when no answer came: connect-node's for a refused connection, a timeout, a reset or cancelled stream (node-error.ts). */
const NO_ANSWER = new Set([Code.Unavailable, Code.DeadlineExceeded, Code.Canceled, Code.Aborted]);

/**
 * Whether the call failed for want of an answer rather than by one: one of
 * those codes, or a failure connect-node made from a Node error (a destroyed
 * session, a socket error), which it keeps as the cause; an executor's own
 * error arrives in the trailers with none.
 */
function transportFault(err: ConnectError): boolean {
  if (NO_ANSWER.has(err.code)) return true;
  for (let cause = err.cause; cause instanceof Error; cause = cause.cause) if (typeof (cause as { code?: unknown }).code === 'string') return true;
  return false;
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

const SYNC_REMEDY =
  "stop the node and the executor, delete the executor's data (for `noded exec serve`, its --data directory), then start both: the node replays its blocks into it";

/**
 * A remote execution layer over ev-node's ExecutorService (proto/node/v1/execution.proto,
 * ev-node's execution/grpc client: gRPC protocol, tx batches), driven as the EVM
 * executor drives an Engine API client: calls that fail for want of an answer
 * (UNAVAILABLE, DEADLINE_EXCEEDED, a refused connection) are retried with
 * exponential backoff, and after such an outage the start-up handshake runs
 * again before the next block, since the executor may have restarted behind the node.
 *
 * The handshake: InitChain with the genesis (idempotent by ev-node's contract,
 * core/execution/execution.go) must give the node's genesis state root; then,
 * the protocol having no height query (ev-node's Replayer skips remote
 * executors, block/internal/common/replay.go), the node finds where the
 * executor stands by sending its stored blocks again from its head downward:
 * a block the executor executed already gives the same root again, one beyond
 * its next is OUT_OF_RANGE. From the first it takes, the node replays up to
 * its head, checking each root against its own. A root that differs, or
 * FAILED_PRECONDITION, is a disagreement only an operator can settle.
 */
export class GrpcExecutor implements Executor {
  private readonly client: Client<typeof ExecutorService>;
  /** Backoff while the executor is down or behind, and the handshake after each outage (it may have restarted and lost blocks). */
  private readonly session: RemoteSession;
  /** The executor's height as last heard (the last block it executed for the node). */
  private height: bigint | null = null;
  /** Block work runs one piece at a time. */
  private readonly exclusive = serialized((work: () => Promise<unknown>) => work());

  constructor(private readonly opts: GrpcExecutorOptions) {
    const auth: Interceptor = (next) => (req) => {
      req.header.set('authorization', `Bearer ${opts.token}`);
      return next(req);
    };
    // ev-node's client speaks the gRPC protocol (execution/grpc/client.go, connect.WithGRPC) over h2c or TLS.
    const transport = createGrpcTransport({ baseUrl: opts.url, defaultTimeoutMs: opts.timeoutMs ?? 30_000, interceptors: opts.token ? [auth] : [] });
    this.client = createClient(ExecutorService, transport);
    this.session = new RemoteSession({
      noun: 'executor',
      url: opts.url,
      logger: opts.logger,
      retryBaseMs: opts.retryBaseMs,
      retryMaxMs: opts.retryMaxMs,
      isOutage: (err) => err instanceof ExecutorUnreachableError,
      isRetryable: (err) => err instanceof ExecutorUnreachableError || err instanceof ExecutorBehindError,
      // A block the executor lacks predecessors of is what the handshake's replay is for.
      resyncAfter: (err) => err instanceof ExecutorUnreachableError || err instanceof ExecutorBehindError,
      syncWithNode: () => this.syncWithNode(),
    });
  }

  /** The handshake in the background; `onFatal` hears of a disagreement only an operator can settle. */
  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.session.start(signal, onFatal);
  }

  async stopped(): Promise<void> {
    await this.session.stopped();
  }

  status(): { reachable: boolean; height: bigint | null } {
    return { reachable: this.session.reachable, height: this.height };
  }

  async initChain(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array> {
    const root = await this.retrying('initialise the chain', () => this.callInitChain(genesisTime, initialHeight, chainId));
    this.height = 0n;
    return root;
  }

  /**
   * The executor's own txs (GetTxs), then the node's mempool's in the room
   * left, judged by the executor's FilterTxs against the block's byte and gas
   * budget as ev-node's single sequencer does each batch
   * (pkg/sequencers/single/sequencer.go): removed txs are dropped, postponed
   * mempool txs go back to the head of the mempool.
   */
  async getTxs(_time?: bigint, budget = Infinity): Promise<Uint8Array[]> {
    const maxBytes = Math.min(MAX_BLOCK_TX_BYTES, this.opts.maxBlockTxBytes, budget);
    const own = await this.retrying('hand out its txs', async () => decodeTxBatch((await this.call('GetTxs', (o) => this.client.getTxs({}, o))).txBatch));
    const ownBytes = own.reduce((n, tx) => n + tx.length, 0);
    await this.opts.mempool.settled();
    const queued = this.opts.mempool.take(Math.max(0, MAX_BLOCK_TXS - own.length), Math.max(0, maxBytes - ownBytes));
    const txs = [...own, ...queued];
    if (txs.length === 0) return txs;
    let statuses: Status[];
    try {
      const { maxGas } = await this.retrying('tell its gas limit', () => this.call('GetExecutionInfo', (o) => this.client.getExecutionInfo({}, o)));
      statuses = await this.filterTxs(txs, maxBytes, maxGas, false);
    } catch (err) {
      this.opts.mempool.requeue(queued);
      throw err;
    }
    this.opts.mempool.requeue(queued.filter((_, i) => statuses[own.length + i] === Status.postpone));
    const removed = statuses.filter((s) => s === Status.remove).length;
    if (removed > 0) this.opts.logger.debug({ removed }, 'the executor filtered txs out of the block');
    return txs.filter((_, i) => statuses[i] === Status.ok);
  }

  /** The executor's FilterTxs; its statuses are ev-node's numbers, as ours are. */
  async filterTxs(txs: Uint8Array[], maxBytes: number, maxGas: number | bigint, hasForceIncludedTransaction: boolean): Promise<Status[]> {
    const statuses = await this.retrying('filter txs', async () => {
      const answer = await this.call('FilterTxs', (o) =>
        this.client.filterTxs(
          { txBatch: encodeTxBatch(txs), maxBytes: BigInt(Number.isFinite(maxBytes) ? maxBytes : 0), maxGas: BigInt(maxGas), hasForceIncludedTransaction },
          o,
        ),
      );
      return answer.statuses;
    });
    if (statuses.length !== txs.length) {
      throw new ExecutorError(`the executor at ${this.opts.url} answered FilterTxs with ${statuses.length} statuses for ${txs.length} txs`, 'EXECUTOR_FAILED');
    }
    return statuses.map((s) => s as number as Status);
  }

  /** Txs sent to the node wait in its mempool; the executor judges them in FilterTxs and ExecuteTxs. */
  submitTx(tx: Uint8Array): Promise<void> {
    return this.opts.mempool.add(tx);
  }

  executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult> {
    return this.run(() =>
      this.retrying(`execute block ${height}`, async () => ({ stateRoot: await this.execute(txs, height, time, prevStateRoot) }), { resync: true }),
    );
  }

  /** Tells the executor the block is final (DA included); a failure waits for the next. */
  async setFinal(height: bigint): Promise<void> {
    try {
      await this.call('SetFinal', (o) => this.client.setFinal({ blockHeight: height }, o));
    } catch (err) {
      this.opts.logger.debug({ err: (err as Error).message, height: Number(height) }, 'could not tell the executor the block is final yet');
    }
  }

  private async run<T>(work: () => Promise<T>): Promise<T> {
    return (await this.exclusive(work)) as T;
  }

  private async callInitChain(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array> {
    const answer = await this.call('InitChain', (o) => this.client.initChain({ genesisTime: timestampFromNanos(genesisTime), initialHeight, chainId }, o));
    return answer.stateRoot;
  }

  private async execute(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<Uint8Array> {
    const answer = await this.call('ExecuteTxs', (o) =>
      this.client.executeTxs({ txBatch: encodeTxBatch(txs), blockHeight: height, timestamp: timestampFromNanos(time), prevStateRoot }, o),
    );
    this.height = height;
    return answer.updatedStateRoot;
  }

  /** One RPC, its failure classified (see the class comment); the node's signal cancels it. */
  private async call<T>(rpc: string, fn: (options: { signal: AbortSignal }) => Promise<T>): Promise<T> {
    try {
      return await fn({ signal: this.session.signal });
    } catch (err) {
      if (this.session.signal.aborted) throw this.session.signal.reason;
      throw this.classify(rpc, ConnectError.from(err));
    }
  }

  private classify(rpc: string, err: ConnectError): Error {
    const { url } = this.opts;
    if (transportFault(err)) return new ExecutorUnreachableError(`executor unreachable at ${url}: ${err.rawMessage}`);
    switch (err.code) {
      case Code.OutOfRange:
        return new ExecutorBehindError(`the executor lacks earlier blocks: ${err.rawMessage}`);
      case Code.FailedPrecondition:
        return new ExecutionSyncError(`execution layer out of sync: the executor at ${url} refused ${rpc}: ${err.rawMessage}; ${SYNC_REMEDY}`);
      case Code.Unauthenticated:
      case Code.PermissionDenied:
        return new ExecutorError(
          `the executor at ${url} refused ${rpc}: ${err.rawMessage}; set execution.grpc_auth_token to the token it was started with (\`noded exec serve --token\`)`,
          'EXECUTOR_AUTH',
        );
      case Code.Unimplemented:
        return new ExecutorError(
          `${url} does not serve node.v1.ExecutorService (${rpc}: ${err.rawMessage}); set execution.grpc_address to the executor's address`,
          'EXECUTOR_NOT_AN_EXECUTOR',
        );
      default:
        return new ExecutorError(`the executor at ${url} failed ${rpc}: ${err.rawMessage} (${Code[err.code]})`, 'EXECUTOR_FAILED');
    }
  }

  private retrying<T>(what: string, fn: () => Promise<T>, opts: { resync?: boolean } = {}): Promise<T> {
    return this.session.retrying(what, fn, opts);
  }

  private async stateRootAfter(height: bigint, nodeHeight: bigint, nodeRoot: Uint8Array): Promise<Uint8Array> {
    if (height === nodeHeight) return nodeRoot;
    const next = height === 0n ? this.opts.genesis.initialHeight : height + 1n;
    const stored = await this.opts.store.getBlock(next);
    if (!stored) throw new ExecutionSyncError(`the node's store lacks block ${next}, which the executor needs`);
    return decodeStoredBlock(stored).header!.header!.appHash;
  }

  private async syncWithNode(): Promise<void> {
    const { store, genesis, logger, url } = this.opts;
    const state = await store.getState();
    const nodeHeight = state?.lastBlockHeight ?? 0n;
    const nodeRoot = state?.appHash ?? new Uint8Array(0);
    const genesisRoot = await this.callInitChain(genesis.startTime, genesis.initialHeight, genesis.chainId);
    if (state) {
      const expected = await this.stateRootAfter(0n, nodeHeight, nodeRoot);
      if (!sameBytes(genesisRoot, expected)) {
        throw new ExecutionSyncError(
          `execution layer out of sync: the executor at ${url} gives genesis state root ${toHex(genesisRoot)}, the node's is ${toHex(expected)} (another chain or another genesis); ${SYNC_REMEDY}`,
        );
      }
    }
    if (nodeHeight > 0n) {
      // Down from the head, twice as far each time, to the first block the executor takes.
      let from = nodeHeight;
      for (let step = 1n; ; step *= 2n) {
        try {
          await this.replay(from, nodeHeight, nodeRoot);
          break;
        } catch (err) {
          if (!(err instanceof ExecutorBehindError) || from === genesis.initialHeight) throw err;
          from = from - step > genesis.initialHeight ? from - step : genesis.initialHeight;
        }
      }
      if (from < nodeHeight) logger.info({ from: Number(from), to: Number(nodeHeight) }, 'replaying stored blocks into the executor');
      for (let height = from + 1n; height <= nodeHeight; height++) await this.replay(height, nodeHeight, nodeRoot);
    }
    this.height = nodeHeight;
    this.session.synced();
    logger.info({ height: Number(nodeHeight), appHash: toHex(nodeRoot) }, 'executor in step with the node');
  }

  /** Sends stored block `height` to the executor again and checks the root it gives against the node's. */
  private async replay(height: bigint, nodeHeight: bigint, nodeRoot: Uint8Array): Promise<void> {
    const stored = await this.opts.store.getBlock(height);
    if (!stored) throw new ExecutionSyncError(`the node's store lacks block ${height}, which the executor needs`);
    const block = decodeStoredBlock(stored);
    const header = block.header!.header!;
    const root = await this.execute(block.data!.txs, height, header.time, header.appHash);
    const expected = await this.stateRootAfter(height, nodeHeight, nodeRoot);
    if (!sameBytes(root, expected)) {
      throw new ExecutionSyncError(
        `execution layer out of sync: block ${height} gave state root ${toHex(root)} on the executor at ${this.opts.url}, the node's is ${toHex(expected)}; ${SYNC_REMEDY}`,
      );
    }
  }
}
