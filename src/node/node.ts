import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Config } from '../config/index.js';
import { daNamespace, dataNamespace } from '../config/index.js';
import { KvExecutor, Mempool, TxRejectedError } from '../exec/index.js';
import { readHome, type Home } from '../home/index.js';
import type { Logger } from '../log/index.js';
import { RpcServer, StatusServer, listen, MAX_REQUEST_BYTES, type CheckResult, type HealthReport, type Listener, type RpcBackend } from '../rpc/index.js';
import { BlockStore } from '../store/index.js';
import { Chain } from './chain.js';
import { BlockProducer } from './producer.js';

export interface NodeOptions {
  home: string;
  config: Config;
  logger: Logger;
  version: string;
}

/** How many block times an aggregator may go without a block before it is not ready. */
const PRODUCTION_STALL_BLOCKS = 5;

/**
 * The daemon's components, built in order by `init()` and closed in reverse by
 * `close()` (after Lodestar's BeaconNode).
 */
export class Node {
  private closing: Promise<void> | null = null;
  private readonly controller = new AbortController();
  readonly startedAt = Date.now();

  private constructor(
    readonly opts: NodeOptions,
    readonly home: Home,
    readonly store: BlockStore,
    readonly mempool: Mempool,
    readonly executor: KvExecutor,
    readonly chain: Chain,
    private readonly producer: BlockProducer | null,
    readonly listeners: { rpc: Listener; status: Listener },
    private readonly closers: Array<() => Promise<void> | void>,
  ) {}

  static async init(opts: NodeOptions): Promise<Node> {
    const { config, logger } = opts;
    const home = readHome(opts.home);
    if (config.execution.type !== 'kv') {
      throw new Error(`execution.type ${config.execution.type} is not available in this version; use kv (the built-in key/value machine)`);
    }
    if (config.node.aggregator && Buffer.compare(home.signer.address, home.genesis.proposerAddress) !== 0) {
      throw new Error(
        `node.aggregator is true but config/signer.json is not the genesis proposer; run as a full node (--no-node.node.aggregator) or use the proposer's key`,
      );
    }
    // Everything opened so far, closed in reverse if a later step fails.
    const closers: Array<() => Promise<void> | void> = [];
    const unwind = async () => {
      for (const close of closers.reverse()) await close();
    };
    try {
      const store = await BlockStore.open(home.paths.storeDir, home.paths.pidFile);
      closers.push(() => store.close());
      writeFileSync(home.paths.pidFile, `${process.pid}\n`);
      closers.push(() => removePidFile(home.paths.pidFile));

      const mempool = new Mempool({ maxTxs: config.node.mempool_max_txs, maxTxBytes: MAX_REQUEST_BYTES });
      const executor = new KvExecutor(store, mempool);
      await executor.load();
      const chain = await Chain.load(store, executor, home.genesis, logger.child({ module: 'chain' }));
      const producer = config.node.aggregator
        ? new BlockProducer(
            chain,
            executor,
            home.signer,
            {
              blockTimeMs: config.node.block_time,
              lazyMode: config.node.lazy_mode,
              lazyBlockIntervalMs: config.node.lazy_block_interval,
              pendingTxs: () => mempool.size,
            },
            logger.child({ module: 'producer' }),
          )
        : null;

      // The backend reads `node` lazily: the servers bind before the Node object exists.
      let node: Node | undefined;
      const backend = createBackend(() => node, opts, home, store, chain, mempool, executor);
      const rpcLogger = logger.child({ module: 'rpc' });
      const rpc = await listen(config.rpc.address, new RpcServer(backend, rpcLogger).handler, 'node.rpc.address');
      closers.push(() => rpc.close());
      const status = await listen(config.rpc.status_address, new StatusServer(backend).handler, 'node.rpc.status_address');
      closers.push(() => status.close());

      node = new Node(opts, home, store, mempool, executor, chain, producer, { rpc, status }, closers);
      logger.info(
        {
          chainId: home.genesis.chainId,
          height: Number(chain.height),
          role: config.node.aggregator ? 'aggregator' : 'full node',
          rpc: `${rpc.address.host}:${rpc.address.port}`,
          status: `${status.address.host}:${status.address.port}`,
        },
        'node started',
      );
      return node;
    } catch (err) {
      await unwind();
      throw err;
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts block production; `onFatal` hears of an error the node cannot go on after. */
  start(onFatal: (err: Error) => void): void {
    this.producer?.start(this.controller.signal, onFatal);
  }

  health(): HealthReport {
    const cfg = this.opts.config.node;
    const checks: Record<string, CheckResult> = {};
    const height = this.chain.height;
    checks.blocks = height > 0n ? { ok: true } : { ok: false, reason: 'no blocks yet' };
    if (this.producer) {
      const stallMs = PRODUCTION_STALL_BLOCKS * cfg.block_time + (cfg.lazy_mode ? cfg.lazy_block_interval : 0);
      const since = Date.now() - (this.chain.lastCommitAt || this.startedAt);
      checks.producing = since <= stallMs ? { ok: true } : { ok: false, reason: `aggregator has not produced a block for ${(since / 1000).toFixed(1)}s` };
    }
    const best = this.bestKnownHeight();
    checks.sync = height >= best ? { ok: true } : { ok: false, reason: `behind best-known height ${best} by ${best - height} blocks` };
    const failed = Object.values(checks).find((c) => !c.ok);
    return {
      live: this.closing ? { ok: false, reason: 'shutting down' } : { ok: true },
      ready: failed ?? { ok: true },
      checks,
    };
  }

  bestKnownHeight(): bigint {
    return this.chain.height;
  }

  /** True once close() has begun: the node takes no new txs, since it would not commit them. */
  get isClosing(): boolean {
    return this.closing !== null;
  }

  /** Stops production, then closes listeners and the store; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.controller.abort(new Error('node shutting down'));
      await this.producer?.stopped();
      for (const close of this.closers.reverse()) await close();
      this.opts.logger.info({ height: Number(this.chain.height) }, 'node stopped');
    })();
    return this.closing;
  }
}

function removePidFile(pidFile: string): void {
  try {
    if (readFileSync(pidFile, 'utf8').trim() === String(process.pid)) rmSync(pidFile);
  } catch {
    // Already gone: nothing to clean.
  }
}

function createBackend(
  node: () => Node | undefined,
  opts: NodeOptions,
  home: Home,
  store: BlockStore,
  chain: Chain,
  mempool: Mempool,
  executor: KvExecutor,
): RpcBackend {
  const nsName = opts.config.da.namespace || home.genesis.chainId;
  return {
    chainId: home.genesis.chainId,
    version: opts.version,
    aggregator: opts.config.node.aggregator,
    store,
    signer: home.signer,
    nodeKey: { publicKey: home.nodeKey.key.publicKey, peerId: home.nodeKey.peerId },
    namespaces: { header: Buffer.from(daNamespace(nsName)).toString('hex'), data: Buffer.from(dataNamespace(nsName)).toString('hex') },
    genesisDaHeight: home.genesis.daStartHeight,
    p2pListenAddress: opts.config.p2p.listen_address,
    statusAddress: opts.config.rpc.status_address,
    startedAt: Date.now(),
    state: () => chain.currentState,
    bestKnownHeight: () => node()?.bestKnownHeight() ?? chain.height,
    health: () => node()?.health() ?? { live: { ok: true }, ready: { ok: false, reason: 'starting' }, checks: {} },
    mempoolSize: () => mempool.size,
    submitTx: (tx) => {
      if (node()?.isClosing) throw new TxRejectedError('node shutting down; send the tx again once it is back', 503);
      if (!opts.config.node.aggregator) {
        throw new TxRejectedError('this node is a full node and does not produce blocks; send txs to the aggregator', 503);
      }
      executor.submitTx(tx);
    },
    kv: { get: (key) => executor.get(key) },
  };
}
