import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Config } from '../config/index.js';
import { daNamespaces, forcedInclusionNamespace, formatHostPort, nodeListenerMove, parsePeerList } from '../config/index.js';
import { CELESTIA_MEMPOOL_TTL_BLOCKS, DaCache, DaClient, DaRetriever, DaSubmitter, LocalDa, clearCache, type DaActivity, type DaNamespaces } from '../da/index.js';
import { AbciExecutor, KvExecutor, Mempool, TxBackpressureError, TxRejectedError, createExecutor, instrumentExecutor, type Executor } from '../exec/index.js';
import { createNodeMetrics, type NodeReadings } from '../metrics/index.js';
import { P2PNetwork, type EncodedBlockAt, type EncodedBlockSource } from '../p2p/index.js';
import { readHome, type Home } from '../home/index.js';
import type { Logger } from '../log/index.js';
import type { ChildStatus } from '../supervise/index.js';
import {
  RpcServer,
  StatusServer,
  accessPolicy,
  guardHandler,
  instrumentHandler,
  listenerLimits,
  listen,
  metricsHandler,
  MAX_REQUEST_BYTES,
  type CheckResult,
  type HealthReport,
  type Listener,
  type RpcBackend,
} from '../rpc/index.js';
import { BlockStore } from '../store/index.js';
import { ForcedInclusionQueue, ForcedInclusionVerifier } from '../forced/index.js';
import type { SignedHeader } from '../types/index.js';
import { Chain } from './chain.js';
import { daInfo, nodeInfo } from './info.js';
import { StatusNotifier } from './notifier.js';
import { BlockIntake } from './intake.js';
import { GenesisGuard, type HeardFrom } from './genesis-guard.js';
import { BlockProducer } from './producer.js';
import { BasedProducer } from './based.js';

export interface NodeOptions {
  home: string;
  config: Config;
  logger: Logger;
  version: string;
  /** Empty data/cache before starting (`start --node.clear_cache`). */
  clearCache?: boolean;
  /** The supervised children beside the node (`noded status`, the dashboard). */
  children?: () => ChildStatus[];
}

/** A loop the node runs until its signal aborts. */
interface BackgroundService {
  start(signal: AbortSignal, onFatal: (err: Error) => void): void;
  stopped(): Promise<void>;
}

/** Everything `init()` builds, in the order it builds them. */
interface NodeComponents {
  home: Home;
  store: BlockStore;
  localDa: LocalDa | null;
  da: DaClient;
  namespaces: DaNamespaces;
  mempool: Mempool;
  executor: Executor;
  chain: Chain;
  genesisGuard: GenesisGuard;
  producer: BlockProducer | null;
  submitter: DaSubmitter | null;
  retriever: DaRetriever | null;
  /** Forced txs still to take, on an aggregator or based node with forced inclusion on. */
  forcedQueue: ForcedInclusionQueue | null;
  /** A full node's forced-inclusion check, when forced inclusion is on. */
  verifier: ForcedInclusionVerifier | null;
  /** A based node's block loop (node.based). */
  based: BasedProducer | null;
  p2p: P2PNetwork;
  /** `metrics` is null unless instrumentation.prometheus is on. */
  listeners: { rpc: Listener; status: Listener; metrics: Listener | null };
}

/** How many block times an aggregator may go without a block before it is not ready. */
const PRODUCTION_STALL_BLOCKS = 5;
/** Largest share of a DA blob a block's txs may take; the rest is header and framing. */
const BLOB_OVERHEAD_BYTES = 4096;
const maxBlockTxBytes = (config: Config) => config.da.max_blob_size - BLOB_OVERHEAD_BYTES;

/**
 * The blocks this node holds in [from, to] as stored (protobuf bytes, served to
 * peers as they are), ascending, stopping at the first it lacks: one pass over the store.
 */
function storedBlocks(store: BlockStore): EncodedBlockSource {
  return async (from, to) => {
    const last = to < store.height() ? to : store.height();
    const blocks: EncodedBlockAt[] = [];
    for await (const batch of store.blocksInRange(from, last)) blocks.push(...batch);
    return blocks;
  };
}

/**
 * The daemon's components, built in order by `init()` and closed in reverse by
 * `close()` (after Lodestar's BeaconNode).
 */
export class Node {
  private closing: Promise<void> | null = null;
  private readonly controller = new AbortController();
  readonly startedAt = Date.now();
  /** The periodic status line; started last, with the other services, so it reports a running node. */
  private readonly notifier: StatusNotifier;

  private constructor(
    readonly opts: NodeOptions,
    readonly c: NodeComponents,
    private readonly closers: Array<() => Promise<void> | void>,
  ) {
    this.notifier = new StatusNotifier(() => nodeInfo(this), opts.config.log.status_interval, opts.logger.child({ module: 'status' }));
  }

  static async init(opts: NodeOptions): Promise<Node> {
    const { config, logger } = opts;
    const home = readHome(opts.home);
    // Before anything opens: a forced-inclusion namespace on the chain's own, or based mode without one, is refused.
    const forcedNamespace = forcedInclusionNamespace(config, home.genesis.chainId);
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
      if (opts.clearCache) {
        clearCache(home.paths.cacheDir);
        logger.child({ module: 'node' }).info({ dir: home.paths.cacheDir }, 'cleared the cache');
      }

      const metrics = config.instrumentation.prometheus ? createNodeMetrics() : null;
      const daAddress = new URL(config.da.address);
      const localDa = config.da.local
        ? await LocalDa.start({
            dir: home.paths.localDaDir,
            listen: `${daAddress.hostname}:${daAddress.port || 80}`,
            blockTimeMs: config.da.block_time,
            authToken: config.da.auth_token || undefined,
            maxBlobSize: config.da.max_blob_size,
            logger: logger.child({ module: 'local-da' }),
            move: nodeListenerMove('da.address', config.da.address),
          })
        : null;
      if (localDa) closers.push(() => localDa.close());
      const da = new DaClient({ address: localDa?.address ?? config.da.address, authToken: config.da.auth_token, requestTimeoutMs: config.da.request_timeout });
      closers.push(() => da.close());
      const namespaces = daNamespaces(config.da.namespace || home.genesis.chainId, config.da.data_namespace);
      const cache = new DaCache(home.paths.cacheDir, logger.child({ module: 'da' }));

      const mempool = new Mempool(
        { maxTxs: config.node.mempool_max_txs, maxTxBytes: MAX_REQUEST_BYTES, retryAfterSeconds: retryAfterSeconds(config.node.block_time) },
        store,
      );
      // Txs acknowledged before the node last stopped, in no block yet: they wait for the next blocks again.
      const restored = await mempool.restore();
      if (restored > 0) logger.child({ module: 'node' }).info({ txs: restored }, `re-admitted ${restored} acknowledged txs kept in the store into the mempool`);
      const executor = await createExecutor({
        config,
        home: home.paths.home,
        store,
        mempool,
        initialHeight: home.genesis.initialHeight,
        genesis: home.genesis,
        maxBlockTxBytes: maxBlockTxBytes(config),
        logger: logger.child({ module: 'execution' }),
      });
      if (executor.close) closers.push(() => executor.close!());
      // What the block path calls, timed when metrics are on; the rest of the node uses the executor itself.
      const execution = metrics ? instrumentExecutor(executor, metrics) : executor;
      const chain = await Chain.load(store, execution, home.genesis, logger.child({ module: 'chain' }));
      chain.onBlock(() => mempool.blockCommitted());
      if (executor.blockCommitted) chain.onBlock((block) => executor.blockCommitted!(block.header!.header!.height));

      const daRetryMaxMs = Math.min(30_000, Math.max(1000, 5 * config.da.block_time));
      const aggregator = config.node.aggregator;
      const forcedRules = { daStartHeight: home.genesis.daStartHeight, epochSize: home.genesis.daEpochForcedInclusion };
      const daPollMs = Math.max(10, Math.min(1000, Math.floor(config.da.block_time / 2)));
      // The aggregator takes forced txs into its blocks; a based node derives its blocks from them alone.
      const forcedQueue =
        forcedNamespace && (aggregator || config.node.based)
          ? await ForcedInclusionQueue.open(
              da,
              store,
              { rules: forcedRules, namespace: forcedNamespace, pollMs: daPollMs, retryMaxMs: daRetryMaxMs, withEndTime: config.node.based },
              logger.child({ module: 'forced-inclusion' }),
            )
          : null;
      const submitter = aggregator
        ? new DaSubmitter(
            store,
            da,
            cache,
            namespaces,
            execution,
            {
              chainId: home.genesis.chainId,
              maxBlobSize: config.da.max_blob_size,
              gasPrice: config.da.gas_price,
              maxGasPrice: config.da.max_gas_price,
              gasMultiplier: config.da.gas_multiplier,
              retryBaseMs: Math.min(250, config.da.block_time),
              retryMaxMs: daRetryMaxMs,
              signer: home.signer,
              inclusionWindow: config.da.inclusion_window || (config.da.local ? 1 : CELESTIA_MEMPOOL_TTL_BLOCKS),
              daBlockTimeMs: config.da.block_time,
            },
            logger.child({ module: 'da-submitter' }),
            metrics,
          )
        : null;
      if (submitter) chain.onBlock(() => submitter.notify());
      const producer = aggregator
        ? new BlockProducer(
            chain,
            execution,
            home.signer,
            {
              blockTimeMs: config.node.block_time,
              lazyMode: config.node.lazy_mode,
              lazyBlockIntervalMs: config.node.lazy_block_interval,
              pendingTxs: () => mempool.size,
              pendingBlocks: () => store.blocksNotOnDa(),
              maxPendingBlocks: config.node.max_pending_blocks,
              ...(forcedQueue ? { forced: { queue: forcedQueue, maxBlockTxBytes: maxBlockTxBytes(config), censor: process.env.NODED_TEST_CENSOR_FORCED_TXS === '1' } } : {}),
            },
            logger.child({ module: 'producer' }),
            metrics,
          )
        : null;
      const genesisGuard = new GenesisGuard(home.genesis, home.paths.genesisFile, logger.child({ module: 'chain' }));
      const checkGenesis = (from: HeardFrom) => (signed: SignedHeader) => genesisGuard.check(signed, from);
      // A full node checks that the aggregator includes forced txs (ev-node syncer.go, VerifyForcedInclusionTxs).
      const verifier =
        forcedNamespace && !aggregator && !config.node.based
          ? await ForcedInclusionVerifier.open(
              da,
              store,
              executor,
              { rules: forcedRules, namespace: forcedNamespace, maxBlockTxBytes: maxBlockTxBytes(config), maxBlobSize: config.da.max_blob_size, proposerAddress: home.genesis.proposerAddress },
              logger.child({ module: 'forced-inclusion' }),
            )
          : null;
      const intake = new BlockIntake(chain, store, metrics, genesisGuard, verifier);
      const lastApplied = chain.height > 0n ? await store.getBlock(chain.height) : null;
      // A based node has no aggregator's blocks to read: it derives its own from the forced-inclusion namespace.
      const based = config.node.based ? new BasedProducer(chain, execution, forcedQueue!, { proposerAddress: home.genesis.proposerAddress, maxBlockTxBytes: maxBlockTxBytes(config) }, logger.child({ module: 'based' })) : null;
      const retriever = aggregator || based
        ? null
        : new DaRetriever(
            da,
            cache,
            namespaces,
            intake.from('da'),
            {
              chainId: home.genesis.chainId,
              proposerAddress: home.genesis.proposerAddress,
              startDaHeight: home.genesis.daStartHeight,
              lastAppliedDaHeight: lastApplied?.headerDaHeight ?? 0n,
              pollMs: daPollMs,
              retryMaxMs: daRetryMaxMs,
              checkGenesis: checkGenesis('da'),
            },
            logger.child({ module: 'da-retriever' }),
          );

      const peers = parsePeerList(config.p2p.peers);
      const p2p = await P2PNetwork.create({
        seed: home.nodeKey.key.seed,
        listen: config.p2p.listen_address,
        peers,
        chainId: home.genesis.chainId,
        proposerAddress: home.genesis.proposerAddress,
        checkGenesis: checkGenesis('p2p'),
        sink: intake.from('p2p'),
        source: storedBlocks(store),
        head: () => chain.height,
        follow: !aggregator && !based,
        logger,
        metrics,
      });
      closers.push(() => p2p.close());
      // The aggregator gossips each block right after committing it; a full node tells gossip the chain moved.
      chain.onBlock(aggregator ? (block) => p2p.publish(block) : () => p2p.chainAdvanced());

      // The backend reads `node` lazily: the servers bind before the Node object exists.
      let node: Node | undefined;
      const parts = { home, store, chain, mempool, executor, namespaces, p2p, producer };
      const backend = createBackend(() => node, opts, parts);
      const rpcLogger = logger.child({ module: 'rpc' });
      // Both listeners under the same limits and access policy (rpc.*), each answering refusals in its own error shape.
      const serve = async (key: 'address' | 'status_address', name: string, server: RpcServer | StatusServer) => {
        const address = config.rpc[key];
        const handler = guardHandler(server.handler, server, accessPolicy(config.rpc, address));
        const listener = await listen(address, instrumentHandler(handler, name, server.routeLabel, metrics), nodeListenerMove(`rpc.${key}`, address), listenerLimits(config.rpc), rpcLogger);
        closers.push(() => listener.close());
        return listener;
      };
      const rpc = await serve('address', 'rpc', new RpcServer(backend, rpcLogger));
      const status = await serve('status_address', 'status', new StatusServer(backend, rpcLogger));
      const metricsListener = metrics
        ? await listen(config.instrumentation.prometheus_listen_addr, metricsHandler(() => metrics.scrape()), nodeListenerMove('instrumentation.prometheus_listen_addr', config.instrumentation.prometheus_listen_addr), listenerLimits(config.rpc))
        : null;
      if (metricsListener) closers.push(() => metricsListener.close());

      node = new Node(
        opts,
        { ...parts, localDa, da, genesisGuard, producer, submitter, retriever, forcedQueue, verifier, based, listeners: { rpc, status, metrics: metricsListener } },
        closers,
      );
      metrics?.observe(readings(node));
      logger.child({ module: 'node' }).info(
        {
          chainId: home.genesis.chainId,
          height: Number(chain.height),
          role: aggregator ? 'aggregator' : based ? 'based node' : peers.length > 0 ? 'full node' : 'full node (DA-only sync)',
          p2p: p2p.netInfo().listen_addresses,
          rpc: formatHostPort(rpc.address.host, rpc.address.port),
          status: formatHostPort(status.address.host, status.address.port),
          ...(metricsListener ? { metrics: `${metricsListener.address.host}:${metricsListener.address.port}` } : {}),
          da: localDa ? `${localDa.address} (built-in)` : config.da.address,
        },
        'node started',
      );
      return node;
    } catch (err) {
      await unwind();
      throw err;
    }
  }

  get chain(): Chain {
    return this.c.chain;
  }

  get listeners() {
    return this.c.listeners;
  }

  get store(): BlockStore {
    return this.c.store;
  }

  get executor(): Executor {
    return this.c.executor;
  }

  private get services(): BackgroundService[] {
    // An execution layer with a handshake of its own starts first and stops last.
    const { executor } = this.c;
    const execution = executor.start && executor.stopped ? (executor as Executor & BackgroundService) : null;
    return [execution, this.c.submitter, this.c.retriever, this.c.forcedQueue, this.c.p2p, this.c.producer, this.c.based, this.notifier].filter((s): s is NonNullable<typeof s> => s !== null);
  }

  /** Starts production, DA submission or DA sync; `onFatal` hears of an error the node cannot go on after. */
  start(onFatal: (err: Error) => void): void {
    for (const service of this.services) service.start(this.controller.signal, onFatal);
  }

  /** What the node last heard from DA, from whichever component talks to it. */
  daActivity(): DaActivity {
    return (this.c.submitter ?? this.c.retriever ?? this.c.forcedQueue)!.activity;
  }

  health(): HealthReport {
    const cfg = this.opts.config;
    const checks: Record<string, CheckResult> = {};
    const height = this.chain.height;
    // A censoring aggregator first: this node has stopped following its chain, and nothing else matters until that is settled.
    const violation = this.c.verifier?.violation;
    if (violation) checks.forced_inclusion = { ok: false, reason: violation.message };
    // The execution client first: while it is down nothing else moves, and it is what to fix.
    const execution = this.c.executor.status?.();
    if (execution) checks.execution = execution.reachable ? { ok: true } : { ok: false, reason: 'execution client unreachable' };
    // Peers first: a full node cut off from its peers has no blocks either, and the peers are what to fix.
    // Another genesis first: nothing else comes right until the home has the chain's.
    const mismatch = this.c.genesisGuard.mismatch;
    if (mismatch && this.chain.lastCommitAt < mismatch.at) checks.genesis = { ok: false, reason: `genesis mismatch: ${mismatch.differences}` };
    const p2p = this.c.p2p;
    if (p2p.configuredPeers > 0) checks.peers = p2p.peerInfo().length > 0 ? { ok: true } : { ok: false, reason: 'no peers connected' };
    checks.blocks = height > 0n ? { ok: true } : { ok: false, reason: 'no blocks yet' };
    // Before production: at the pending cap a failing DA is what paused it, and what to fix.
    checks.da = this.daCheck();
    const producer = this.c.producer;
    if (producer) {
      const stallMs = PRODUCTION_STALL_BLOCKS * cfg.node.block_time + (cfg.node.lazy_mode ? cfg.node.lazy_block_interval : 0);
      const since = Date.now() - (this.chain.lastCommitAt || this.startedAt);
      checks.producing = producer.pausedReason
        ? { ok: false, reason: producer.pausedReason }
        : since <= stallMs
          ? { ok: true }
          : { ok: false, reason: `aggregator has not produced a block for ${(since / 1000).toFixed(1)}s` };
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

  /**
   * DA fails readiness once every call has failed for da.unready_after, whatever
   * the cause: even a cause the node works around itself (raising the gas price
   * after code 19, splitting a batch too big, finding an earlier attempt on DA)
   * has had that long to clear, and blocks still are not reaching DA. Counted
   * from the first failure of the run, so a node that never reached DA is not
   * ready after that long either.
   */
  private daCheck(): CheckResult {
    const da = this.daActivity();
    if (!da.lastError || da.failingSince === 0) return { ok: true };
    const failingMs = Date.now() - da.failingSince;
    if (failingMs < this.opts.config.da.unready_after) return { ok: true };
    const what = this.c.submitter ? 'DA submissions' : 'DA reads';
    return { ok: false, reason: `${what} failing for ${Math.floor(failingMs / 1000)}s: ${da.lastError.message}` };
  }

  /** The highest height this node knows of: its own, a peer's head, or a header seen on DA. */
  bestKnownHeight(): bigint {
    return [this.c.retriever?.bestSeenHeight() ?? 0n, this.c.p2p.bestKnownHeight()].reduce((a, b) => (b > a ? b : a), this.chain.height);
  }

  /**
   * Behind the best-known height; or, while no peer has told its head, still
   * reading DA heights this node has not seen (DA is then the only measure).
   */
  catchingUp(): boolean {
    if (this.chain.height < this.bestKnownHeight()) return true;
    return !this.c.p2p.knowsPeerHeads() && (this.c.retriever?.catchingUp() ?? false);
  }

  /** True once close() has begun: the node takes no new txs, since it would not commit them. */
  get isClosing(): boolean {
    return this.closing !== null;
  }

  /** Stops production and DA work, then closes listeners, DA and the store; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.controller.abort(new Error('node shutting down'));
      for (const service of this.services.reverse()) await service.stopped();
      for (const close of this.closers.reverse()) await close();
      this.opts.logger.child({ module: 'node' }).info({ height: Number(this.chain.height) }, 'node stopped');
    })();
    return this.closing;
  }
}

/** What the scrape-time gauges read from a running node. */
function readings(node: Node): NodeReadings {
  const { store, chain, mempool, p2p, retriever } = node.c;
  return {
    chainHeight: () => chain.height,
    daIncludedHeight: () => store.daIncludedHeight(),
    da: retriever
      ? {
          mode: 'follow',
          scanHeight: () => retriever.scannedHeight(),
          headHeight: () => retriever.headHeight(),
          behindBlocks: () => store.blocksNotOnDa(),
        }
      : { mode: 'submit', pendingBlocks: () => store.blocksNotOnDa(), maxPendingBlocks: node.opts.config.node.max_pending_blocks },
    mempoolSize: () => mempool.size,
    connectedPeers: () => p2p.peerInfo().length,
    bestKnownHeight: () => node.bestKnownHeight(),
    catchingUp: () => node.catchingUp(),
    children: () => node.opts.children?.() ?? [],
  };
}

/** Retry-After for a sender to wait about `ms` (a block time): whole seconds, at least 1. */
const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

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
  parts: Pick<NodeComponents, 'home' | 'store' | 'chain' | 'mempool' | 'executor' | 'namespaces' | 'p2p' | 'producer'>,
): RpcBackend {
  const { home, store, chain, mempool, executor, namespaces, p2p, producer } = parts;
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  return {
    chainId: home.genesis.chainId,
    version: opts.version,
    aggregator: opts.config.node.aggregator,
    store,
    signer: home.signer,
    nodeKey: { publicKey: home.nodeKey.key.publicKey, peerId: home.nodeKey.peerId },
    namespaces: { header: hex(namespaces.header), data: hex(namespaces.data) },
    genesisDaHeight: home.genesis.daStartHeight,
    statusAddress: opts.config.rpc.status_address,
    startedAt: Date.now(),
    state: () => chain.currentState,
    bestKnownHeight: () => node()?.bestKnownHeight() ?? chain.height,
    catchingUp: () => node()?.catchingUp() ?? false,
    netInfo: () => p2p.netInfo(),
    health: () => node()?.health() ?? { live: { ok: true }, ready: { ok: false, reason: 'starting' }, checks: {} },
    mempool,
    genesis: home.genesis,
    genesisJson: readFileSync(home.paths.genesisFile, 'utf8'),
    maxBlockTxBytes: maxBlockTxBytes(opts.config),
    onBlock: (listener) => chain.onBlock((block) => listener(block.header!.header!.height)),
    blockResults: executor.blockResults ? (height, txs) => executor.blockResults!(height, txs) : null,
    info: () => {
      const n = node();
      // The listeners bind a moment before the Node exists; the status server answers this with an error.
      if (!n) throw new Error('the node is still starting');
      return nodeInfo(n);
    },
    daInfo: () => {
      const n = node();
      return n ? daInfo(n) : null;
    },
    submitTx: (tx) => {
      if (node()?.isClosing) throw new TxRejectedError('node shutting down; send the tx again once it is back', 503);
      if (opts.config.node.based) {
        throw new TxRejectedError('this node is a based node: its blocks come from the DA forced-inclusion namespace alone; post the tx there with `noded tx post`', 503);
      }
      if (!opts.config.node.aggregator) {
        throw new TxRejectedError('this node is a full node and does not produce blocks; send txs to the aggregator', 503);
      }
      // A tx taken now would wait for blocks that are not being made: the sender is told to come back instead.
      const paused = producer?.pendingCapReason();
      if (paused) throw new TxBackpressureError(`${paused}; retry once DA catches up`, retryAfterSeconds(opts.config.da.block_time));
      return executor.submitTx(tx);
    },
    kv: executor instanceof KvExecutor ? { get: (key) => executor.get(key) } : null,
    abci: executor instanceof AbciExecutor ? executor : null,
  };
}
