import type { Config } from '../config/index.js';
import { forcedInclusionNamespace, formatHostPort, nodeListenerMove, parsePeerList } from '../config/index.js';
import type { DaActivity, DaClient, DaNamespaces, LocalDa } from '../da/index.js';
import type { Executor, Mempool } from '../exec/index.js';
import type { NodeMetrics, NodeReadings } from '../metrics/index.js';
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
  type CheckResult,
  type HaInfo,
  type HealthReport,
  type Listener,
  type NodeInfo,
} from '../rpc/index.js';
import type { BlockStore } from '../store/index.js';
import type { HaCoordinator, LeaderInfo } from '../ha/index.js';
import { systemClock } from '../util/index.js';
import { createBackend } from './backend.js';
import type { Chain } from './chain.js';
import { daInfo, nodeInfo } from './info.js';
import { StatusNotifier } from './notifier.js';
import { buildComponents, chainNamespaces, checkGenesis, openDa, openExecution, openStore, type Closers, type CoreComponents } from './parts.js';

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
export interface NodeComponents extends CoreComponents {
  home: Home;
  store: BlockStore;
  localDa: LocalDa | null;
  da: DaClient;
  namespaces: DaNamespaces;
  mempool: Mempool;
  executor: Executor;
  p2p: P2PNetwork;
  /** The leader election of an HA node (ha.enabled); null otherwise. */
  ha: HaCoordinator | null;
}

/** `metrics` is null unless instrumentation.prometheus is on. */
export interface NodeListeners {
  rpc: Listener;
  status: Listener;
  metrics: Listener | null;
}

/** How many block times an aggregator may go without a block before it is not ready. */
const PRODUCTION_STALL_BLOCKS = 5;

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
 * `close()` (after Lodestar's BeaconNode); the build steps are in parts.ts.
 */
export class Node {
  private closing: Promise<void> | null = null;
  private readonly controller = new AbortController();
  readonly startedAt = Date.now();
  /** The periodic status line; started last, with the other services, so it reports a running node. */
  private readonly notifier: StatusNotifier;
  /** Bound by init() once the node exists; null only while it binds them. */
  private bound: NodeListeners | null = null;
  /** What start() was given: production started later (startProducing) reports to it too. */
  private onFatal: ((err: Error) => void) | null = null;
  /** Aborted when an HA leader steps down: the DA submitter runs under it. */
  private leading: AbortController | null = null;
  /** Aborted when an HA node becomes leader: its DA retriever runs under it while it stands by. */
  private following: AbortController | null = null;
  /** A new leader's hand-over of DA from retriever to submitter (takeOverDa), under way or done. */
  private takingOverDa: Promise<void> = Promise.resolve();
  /** A leader's hand-back of DA from submitter to retriever (stopLeading), under way or done. */
  private standingDown: Promise<void> = Promise.resolve();
  /** What a producer error does beside `onFatal`: an HA node's wiring lets a fence refusal pass (ha.ts); no other node's commits are fenced. */
  private unlessFenced = (onFatal: (err: Error) => void) => onFatal;

  private constructor(
    readonly opts: NodeOptions,
    readonly c: NodeComponents,
    private readonly closers: Closers,
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
    // Everything opened so far, closed in reverse if a later step fails (and by close() once the node runs).
    const closers: Closers = [];
    try {
      // HA's wiring, and with it etcd's client (grpc-js, protobufjs: megabytes of heap), is loaded by an HA node only.
      const ha = config.ha.enabled ? await import('./ha.js') : null;
      const etcd = ha ? await ha.openEtcd(config, home.paths.home, home.genesis.chainId, closers) : null;
      const store = await openStore(home.paths, closers, logger, opts.clearCache);
      // prom-client (and the OpenTelemetry API it loads) only for a node that serves metrics.
      const metrics = config.instrumentation.prometheus ? (await import('../metrics/index.js')).createNodeMetrics() : null;
      const { da, localDa, cache } = await openDa(config, home.paths, closers, logger);
      const namespaces = chainNamespaces(config, home.genesis);
      const { mempool, executor, execution } = await openExecution(
        { config, homeDir: home.paths.home, genesis: home.genesis, store, logger, metrics },
        closers,
      );
      const parts = {
        config,
        genesis: home.genesis,
        genesisFile: home.paths.genesisFile,
        signer: home.signer,
        store,
        mempool,
        executor,
        execution,
        da,
        cache,
        namespaces,
        logger,
        metrics,
        clock: systemClock,
      };
      const core = await buildComponents(parts, forcedNamespace);
      const p2p = await openNetwork(parts, core, home, closers);
      const node = new Node(opts, { ...core, home, store, localDa, da, namespaces, mempool, executor, p2p, ha: null }, closers);
      node.bound = await node.bind(metrics);
      if (ha && etcd) {
        const { rpc } = node.bound;
        node.unlessFenced = ha.unlessFenced;
        node.c.ha = ha.buildHaCoordinator(
          {
            etcd,
            config,
            chainId: home.genesis.chainId,
            peerId: p2p.netInfo().id,
            rpcAddress: config.ha.advertise_rpc.replace(/\/+$/, '') || `http://${formatHostPort(rpc.address.host, rpc.address.port)}`,
            logger,
            mempool,
            ...core,
          },
          { startLeading: () => node.startLeading(), stopLeading: () => node.stopLeading() },
        );
      }
      metrics?.observe(readings(node));
      node.logStarted();
      return node;
    } catch (err) {
      for (const close of closers.reverse()) await close();
      throw err;
    }
  }

  /** The RPC and status listeners (and the metrics one when on), each under rpc.*'s limits and access policy. */
  private async bind(metrics: NodeMetrics | null): Promise<NodeListeners> {
    const { config, logger } = this.opts;
    const backend = createBackend({ ...this.c, config, version: this.opts.version, node: this });
    const rpcLogger = logger.child({ module: 'rpc' });
    // Each listener answers refusals in its own error shape.
    const serve = async (key: 'address' | 'status_address', name: string, server: RpcServer | StatusServer) => {
      const address = config.rpc[key];
      const handler = guardHandler(server.handler, server, accessPolicy(config.rpc, address));
      const listener = await listen(
        address,
        instrumentHandler(handler, name, server.routeLabel, metrics),
        nodeListenerMove(`rpc.${key}`, address),
        listenerLimits(config.rpc),
        rpcLogger,
      );
      this.closers.push(() => listener.close());
      return listener;
    };
    const rpc = await serve('address', 'rpc', new RpcServer(backend, rpcLogger));
    const status = await serve('status_address', 'status', new StatusServer(backend, rpcLogger));
    const address = config.instrumentation.prometheus_listen_addr;
    const metricsListener = metrics
      ? await listen(
          address,
          metricsHandler(() => metrics.scrape()),
          nodeListenerMove('instrumentation.prometheus_listen_addr', address),
          listenerLimits(config.rpc),
        )
      : null;
    if (metricsListener) this.closers.push(() => metricsListener.close());
    return { rpc, status, metrics: metricsListener };
  }

  private logStarted(): void {
    const { config } = this.opts;
    const { home, chain, p2p, localDa, based } = this.c;
    const { rpc, status, metrics } = this.listeners;
    this.opts.logger.child({ module: 'node' }).info(
      {
        chainId: home.genesis.chainId,
        height: Number(chain.height),
        role: config.node.aggregator ? 'aggregator' : based ? 'based node' : p2p.configuredPeers > 0 ? 'full node' : 'full node (DA-only sync)',
        p2p: p2p.netInfo().listen_addresses,
        rpc: formatHostPort(rpc.address.host, rpc.address.port),
        status: formatHostPort(status.address.host, status.address.port),
        ...(metrics ? { metrics: `${metrics.address.host}:${metrics.address.port}` } : {}),
        da: localDa ? `${localDa.address} (built-in)` : config.da.address,
      },
      'node started',
    );
  }

  get chain(): Chain {
    return this.c.chain;
  }

  get listeners(): NodeListeners {
    if (!this.bound) throw new Error('the node is still starting');
    return this.bound;
  }

  get store(): BlockStore {
    return this.c.store;
  }

  get executor(): Executor {
    return this.c.executor;
  }

  private get services(): BackgroundService[] {
    // An execution layer with a handshake of its own starts first and stops last.
    const { executor, ha } = this.c;
    const execution = executor.start && executor.stopped ? (executor as Executor & BackgroundService) : null;
    // An HA node produces and submits only while it leads, and follows DA only while it stands by: its role starts and stops them (startLeading).
    const roleBound = ha ? [] : [this.c.submitter, this.c.producer, this.c.retriever];
    return [execution, ...roleBound, this.c.forcedQueue, this.c.p2p, this.c.based, ha, this.notifier].filter((s): s is NonNullable<typeof s> => s !== null);
  }

  /** Starts production, DA submission or DA sync; `onFatal` hears of an error the node cannot go on after. */
  start(onFatal: (err: Error) => void): void {
    this.onFatal = onFatal;
    for (const service of this.services) service.start(this.controller.signal, onFatal);
    // An HA node starts as a follower.
    if (this.c.ha) this.followDa();
  }

  /** The aggregator's producer; an error naming why there is none otherwise. */
  private get producer() {
    if (!this.c.producer) throw new Error('this node does not produce blocks: only an aggregator (node.aggregator) has a block producer');
    return this.c.producer;
  }

  /**
   * Starts block production on a running node (a follower become leader):
   * from the chain's next height, once a stop under way has committed its last
   * block. Does nothing while production runs.
   */
  startProducing(): void {
    if (!this.onFatal) throw new Error('call start() on the node before startProducing()');
    if (this.closing) return;
    this.producer.start(this.controller.signal, this.unlessFenced(this.onFatal));
  }

  /** Stops block production while the node runs on (a leader become follower); resolves once the block under way is committed. */
  stopProducing(): Promise<void> {
    return this.producer.stop();
  }

  /** An HA node become leader: the producer (from the chain's next height), and DA handed from the retriever to the submitter. */
  startLeading(): void {
    if (!this.onFatal || this.closing) return;
    const leading = new AbortController();
    this.leading = leading;
    this.startProducing();
    const onFatal = this.onFatal;
    this.takingOverDa = this.takeOverDa(AbortSignal.any([this.controller.signal, leading.signal])).catch((err: Error) => onFatal(err));
  }

  /**
   * A new leader's DA: the retriever stops (a leader posts to DA, it does not
   * follow it), then the submitter takes over what the old leader may have
   * posted or left in flight (DaSubmitter.inheritSubmission: its start-up
   * search finds those blocks on DA, so none is posted twice or skipped) and starts.
   */
  private async takeOverDa(signal: AbortSignal): Promise<void> {
    this.following?.abort(new Error('leading: this node posts to DA now'));
    this.following = null;
    await this.c.retriever?.stopped();
    const submitter = this.c.submitter;
    if (!submitter || signal.aborted) return;
    await submitter.inheritSubmission();
    if (!signal.aborted) submitter.start(signal, this.onFatal!);
  }

  /**
   * An HA leader stepping down: production stops at once, then the submitter,
   * and the node follows DA again; safe to call when not leading, and a second
   * call while the first is under way waits for it.
   */
  async stopLeading(): Promise<void> {
    const leading = this.leading;
    this.leading = null;
    const producing = this.stopProducing();
    if (leading) {
      leading.abort(new Error('no longer the HA leader'));
      this.standingDown = (async () => {
        await producing;
        await this.takingOverDa;
        await this.c.submitter?.stopped();
        this.followDa();
      })();
    }
    await producing;
    await this.standingDown;
  }

  /**
   * An HA node standing by follows DA as a full node does: its retriever
   * records where DA holds each block, so the DA-included height is current
   * and a takeover's search for what the old leader posted starts near DA's
   * head rather than wherever this node last led (bounded, not a re-read of
   * DA since then). Does nothing while it already follows or the node stops.
   */
  private followDa(): void {
    if (!this.c.retriever || this.following || this.controller.signal.aborted) return;
    this.following = new AbortController();
    this.c.retriever.start(AbortSignal.any([this.controller.signal, this.following.signal]), this.onFatal!);
  }

  /** What the dashboard and `GET /node_info` show; throws while the listeners are still binding. */
  info(): NodeInfo {
    return nodeInfo(this);
  }

  daInfo(): NodeInfo['da'] {
    return daInfo(this);
  }

  haInfo(): HaInfo | null {
    return this.c.ha?.info() ?? null;
  }

  haTxRoute(): { nodeId: string; leader: LeaderInfo | null } | null {
    const { ha } = this.c;
    return !ha || ha.role === 'leader' ? null : { nodeId: ha.nodeId, leader: ha.leader };
  }

  /** What the node last heard from DA, from whichever component talks to it. */
  daActivity(): DaActivity {
    return (this.daSubmitting ? this.c.submitter! : (this.c.retriever ?? this.c.forcedQueue)!).activity;
  }

  /** True when this node's DA work is posting (an aggregator; an HA one while it leads), not reading. */
  private get daSubmitting(): boolean {
    return this.c.submitter !== null && (!this.c.ha || this.c.ha.role === 'leader');
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
    // Production stopped on purpose (stopProducing, an HA follower standing by) is no stall.
    if (producer && (producer.running || (producer.startedAt === 0 && !this.c.ha))) {
      const stallMs = PRODUCTION_STALL_BLOCKS * cfg.node.block_time + (cfg.node.lazy_mode ? cfg.node.lazy_block_interval : 0);
      const since = Date.now() - Math.max(this.chain.lastCommitAt, producer.startedAt || this.startedAt);
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
    const what = this.daSubmitting ? 'DA submissions' : 'DA reads';
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
    return !this.c.p2p.knowsPeerHeads() && !this.daSubmitting && (this.c.retriever?.catchingUp() ?? false);
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
      // An HA node's DA retriever runs under its role: the coordinator, stopped above, has stopped leading.
      if (this.c.ha) await this.c.retriever?.stopped();
      for (const close of this.closers.reverse()) await close();
      this.opts.logger.child({ module: 'node' }).info({ height: Number(this.chain.height) }, 'node stopped');
    })();
    return this.closing;
  }
}

/** The P2P network: gossip and catch-up into the intake, blocks served from the store; the aggregator gossips each block it commits. */
async function openNetwork(
  p: { config: Config; genesis: Home['genesis']; store: BlockStore; logger: Logger; metrics: NodeMetrics | null },
  core: CoreComponents,
  home: Pick<Home, 'nodeKey'>,
  closers: Closers,
): Promise<P2PNetwork> {
  const { config, genesis } = p;
  const { chain, intake, genesisGuard, based, producer } = core;
  const aggregator = config.node.aggregator;
  // An HA aggregator follows its peers while it stands by, and publishes only the blocks it produces as leader.
  const ha = config.ha.enabled;
  const publishes = () => !ha || (producer?.running ?? false);
  const p2p = await P2PNetwork.create({
    seed: home.nodeKey.key.seed,
    listen: config.p2p.listen_address,
    peers: parsePeerList(config.p2p.peers),
    chainId: genesis.chainId,
    proposerAddress: genesis.proposerAddress,
    checkGenesis: checkGenesis(genesisGuard, 'p2p'),
    sink: intake.from('p2p'),
    source: storedBlocks(p.store),
    head: () => chain.height,
    follow: (!aggregator || ha) && !based,
    logger: p.logger,
    metrics: p.metrics,
  });
  closers.push(() => p2p.close());
  // The aggregator gossips each block right after committing it; a full node tells gossip the chain moved.
  chain.onBlock(aggregator ? (block) => (publishes() ? p2p.publish(block) : p2p.chainAdvanced()) : () => p2p.chainAdvanced());
  return p2p;
}

/** What the scrape-time gauges read from a running node. */
function readings(node: Node): NodeReadings {
  const { store, chain, mempool, p2p, retriever, ha } = node.c;
  return {
    chainHeight: () => chain.height,
    daIncludedHeight: () => store.daIncludedHeight(),
    // An HA node's DA figures are a submitter's, as they were before it followed DA while standing by.
    da:
      retriever && !node.c.ha
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
    ha: ha && {
      isLeader: () => ha.role === 'leader',
      hasLeader: () => ha.leader !== null,
      leaderChanges: () => ha.leaderChanges,
      fenceRefusals: () => ha.fenceRefusals,
      deadlineLeftMs: () => ha.deadlineLeftMs(),
    },
  };
}
