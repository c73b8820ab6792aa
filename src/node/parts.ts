import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Config } from '../config/index.js';
import { daNamespaces, nodeListenerMove } from '../config/index.js';
import { CELESTIA_MEMPOOL_TTL_BLOCKS, DaCache, DaClient, DaRetriever, DaSubmitter, LocalDa, clearCache, type BlobApi, type DaNamespaces } from '../da/index.js';
import { Mempool, createExecutor, instrumentExecutor, type Executor } from '../exec/index.js';
import { ForcedInclusionQueue, ForcedInclusionVerifier } from '../forced/index.js';
import type { HomePaths } from '../config/index.js';
import type { Genesis } from '../home/index.js';
import type { Logger } from '../log/index.js';
import type { NodeMetrics } from '../metrics/index.js';
import { MAX_REQUEST_BYTES } from '../rpc/index.js';
import { BlockStore } from '../store/index.js';
import type { Ed25519Key, SignedHeader } from '../types/index.js';
import { BasedProducer } from './based.js';
import type { Clock } from '../util/index.js';
import { Chain } from './chain.js';
import { GenesisGuard, type HeardFrom } from './genesis-guard.js';
import { BlockIntake } from './intake.js';
import { BlockProducer } from './producer.js';

/*
 * The node's build steps (after Lodestar's BeaconNode.init, which is handed its
 * db and logger): the steps that open something (store, DA, execution) read
 * the home and register how to close it; the steps that build a component take
 * the parts it needs and open nothing, so a test builds them over a store in a
 * temp dir, without sockets.
 */

/** What a failed start, or close(), runs in reverse. */
export type Closers = Array<() => Promise<void> | void>;

/** Largest share of a DA blob a block's txs may take; the rest is header and framing. */
const BLOB_OVERHEAD_BYTES = 4096;
export const maxBlockTxBytes = (config: Config) => config.da.max_blob_size - BLOB_OVERHEAD_BYTES;
/** Retry-After for a sender to wait about `ms` (a block time): whole seconds, at least 1. */
export const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
const daRetryMaxMs = (config: Config) => Math.min(30_000, Math.max(1000, 5 * config.da.block_time));
const daPollMs = (config: Config) => Math.max(10, Math.min(1000, Math.floor(config.da.block_time / 2)));
const forcedRules = (genesis: Genesis) => ({ daStartHeight: genesis.daStartHeight, epochSize: genesis.daEpochForcedInclusion });

/** The store, with this process's pid file beside it (the store's lock names the holder by it). */
export async function openStore(paths: HomePaths, closers: Closers, logger: Logger, clear = false): Promise<BlockStore> {
  const store = await BlockStore.open(paths.storeDir, paths.pidFile);
  closers.push(() => store.close());
  writeFileSync(paths.pidFile, `${process.pid}\n`);
  closers.push(() => removePidFile(paths.pidFile));
  if (clear) {
    clearCache(paths.cacheDir);
    logger.child({ module: 'node' }).info({ dir: paths.cacheDir }, 'cleared the cache');
  }
  return store;
}

function removePidFile(pidFile: string): void {
  try {
    if (readFileSync(pidFile, 'utf8').trim() === String(process.pid)) rmSync(pidFile);
  } catch {
    // Already gone: nothing to clean.
  }
}

/** The DA client, and the built-in DA server it talks to when da.local is on. */
export async function openDa(
  config: Config,
  paths: HomePaths,
  closers: Closers,
  logger: Logger,
): Promise<{ da: DaClient; localDa: LocalDa | null; cache: DaCache }> {
  const daAddress = new URL(config.da.address);
  const localDa = config.da.local
    ? await LocalDa.start({
        dir: paths.localDaDir,
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
  return { da, localDa, cache: new DaCache(paths.cacheDir, logger.child({ module: 'da' })) };
}

/** The mempool (with the txs acknowledged before the last stop) and the execution layer execution.type names. */
export async function openExecution(
  p: { config: Config; homeDir: string; genesis: Genesis; store: BlockStore; logger: Logger; metrics: NodeMetrics | null },
  closers: Closers,
): Promise<{ mempool: Mempool; executor: Executor; execution: Executor }> {
  const { config, genesis, store, logger, metrics } = p;
  const mempool = new Mempool(
    { maxTxs: config.node.mempool_max_txs, maxTxBytes: MAX_REQUEST_BYTES, retryAfterSeconds: retryAfterSeconds(config.node.block_time) },
    store,
  );
  // Txs acknowledged before the node last stopped, in no block yet: they wait for the next blocks again.
  const restored = await mempool.restore();
  if (restored > 0) logger.child({ module: 'node' }).info({ txs: restored }, `re-admitted ${restored} acknowledged txs kept in the store into the mempool`);
  const executor = await createExecutor({
    config,
    home: p.homeDir,
    store,
    mempool,
    initialHeight: genesis.initialHeight,
    genesis,
    maxBlockTxBytes: maxBlockTxBytes(config),
    logger: logger.child({ module: 'execution' }),
  });
  if (executor.close) closers.push(() => executor.close!());
  // What the block path calls, timed when metrics are on; the rest of the node uses the executor itself.
  return { mempool, executor, execution: metrics ? instrumentExecutor(executor, metrics) : executor };
}

/** What the components are built from; none of it is opened by the build steps below. */
export interface CoreParts {
  config: Config;
  genesis: Genesis;
  /** config/genesis.json, named in the genesis guard's messages. */
  genesisFile: string;
  signer: Ed25519Key;
  store: BlockStore;
  mempool: Mempool;
  /** The execution layer as the node holds it (status, blockResults, the block-committed hook). */
  executor: Executor;
  /** What the block path calls: the executor, timed when metrics are on. */
  execution: Executor;
  da: DaClient;
  cache: DaCache;
  namespaces: DaNamespaces;
  logger: Logger;
  metrics: NodeMetrics | null;
  /** What the producer, chain, DA submitter and retriever read the time from and wait on. */
  clock: Clock;
}

/** The chain, telling the mempool and the execution layer of each block it commits. */
export async function buildChain(p: Pick<CoreParts, 'store' | 'mempool' | 'executor' | 'execution' | 'genesis' | 'logger' | 'clock'>): Promise<Chain> {
  const chain = await Chain.load(p.store, p.execution, p.genesis, p.logger.child({ module: 'chain' }), p.clock, (txs) => p.mempool.txIds(txs));
  chain.onBlock((block, _hash, txIds) => p.mempool.blockCommitted(block.data?.txs ?? [], txIds));
  if (p.executor.blockCommitted) chain.onBlock((block) => p.executor.blockCommitted!(block.header!.header!.height));
  return chain;
}

/** The DA submitter of an aggregator, woken by each block the chain commits. */
export function buildSubmitter(p: Omit<CoreParts, 'mempool' | 'executor' | 'da'> & { da: BlobApi }, chain: Chain): DaSubmitter {
  const { config } = p;
  const submitter = new DaSubmitter(
    p.store,
    p.da,
    p.cache,
    p.namespaces,
    p.execution,
    {
      chainId: p.genesis.chainId,
      maxBlobSize: config.da.max_blob_size,
      gasPrice: config.da.gas_price,
      maxGasPrice: config.da.max_gas_price,
      gasMultiplier: config.da.gas_multiplier,
      retryBaseMs: Math.min(250, config.da.block_time),
      retryMaxMs: daRetryMaxMs(config),
      signer: p.signer,
      inclusionWindow: config.da.inclusion_window || (config.da.local ? 1 : CELESTIA_MEMPOOL_TTL_BLOCKS),
      daBlockTimeMs: config.da.block_time,
    },
    p.logger.child({ module: 'da-submitter' }),
    p.metrics,
    p.clock,
  );
  chain.onBlock(() => submitter.notify());
  chain.producedBlockOps = (height, blockBytes) => submitter.producedBlockOps(height, blockBytes);
  return submitter;
}

/** An aggregator's block loop, taking forced txs first when `forcedQueue` is given. */
export function buildProducer(
  p: Pick<CoreParts, 'config' | 'execution' | 'signer' | 'mempool' | 'store' | 'logger' | 'metrics' | 'clock'>,
  chain: Chain,
  forcedQueue: ForcedInclusionQueue | null,
): BlockProducer {
  const { config } = p;
  return new BlockProducer(
    chain,
    p.execution,
    p.signer,
    {
      blockTimeMs: config.node.block_time,
      lazyMode: config.node.lazy_mode,
      lazyBlockIntervalMs: config.node.lazy_block_interval,
      pendingTxs: () => p.mempool.size,
      pendingBlocks: () => p.store.blocksNotOnDa(),
      maxPendingBlocks: config.node.max_pending_blocks,
      ...(forcedQueue
        ? { forced: { queue: forcedQueue, maxBlockTxBytes: maxBlockTxBytes(config), censor: process.env.NODED_TEST_CENSOR_FORCED_TXS === '1' } }
        : {}),
    },
    p.logger.child({ module: 'producer' }),
    p.metrics,
    p.clock,
  );
}

/** The forced-inclusion queue an aggregator or a based node takes forced txs from. */
export function openForcedQueue(p: Pick<CoreParts, 'config' | 'genesis' | 'da' | 'store' | 'logger'>, namespace: Uint8Array): Promise<ForcedInclusionQueue> {
  const { config } = p;
  return ForcedInclusionQueue.open(
    p.da,
    p.store,
    { rules: forcedRules(p.genesis), namespace, pollMs: daPollMs(config), retryMaxMs: daRetryMaxMs(config), withEndTime: config.node.based },
    p.logger.child({ module: 'forced-inclusion' }),
  );
}

/** A full node's check that the aggregator includes forced txs (ev-node syncer.go, VerifyForcedInclusionTxs). */
export function openForcedVerifier(
  p: Pick<CoreParts, 'config' | 'genesis' | 'da' | 'store' | 'executor' | 'logger'>,
  namespace: Uint8Array,
): Promise<ForcedInclusionVerifier> {
  const { config } = p;
  return ForcedInclusionVerifier.open(
    p.da,
    p.store,
    p.executor,
    {
      rules: forcedRules(p.genesis),
      namespace,
      maxBlockTxBytes: maxBlockTxBytes(config),
      maxBlobSize: config.da.max_blob_size,
      proposerAddress: p.genesis.proposerAddress,
    },
    p.logger.child({ module: 'forced-inclusion' }),
  );
}

/** A full node's DA sync, handing what it reads to the intake. */
export async function buildRetriever(
  p: Pick<CoreParts, 'config' | 'genesis' | 'store' | 'cache' | 'namespaces' | 'logger' | 'clock'> & { da: BlobApi },
  chain: Chain,
  intake: BlockIntake,
  guard: GenesisGuard,
): Promise<DaRetriever> {
  const lastApplied = chain.height > 0n ? await p.store.getBlock(chain.height) : null;
  return new DaRetriever(
    p.da,
    p.cache,
    p.namespaces,
    intake.from('da'),
    {
      chainId: p.genesis.chainId,
      proposerAddress: p.genesis.proposerAddress,
      startDaHeight: p.genesis.daStartHeight,
      lastAppliedDaHeight: lastApplied?.headerDaHeight ?? 0n,
      pollMs: daPollMs(p.config),
      retryMaxMs: daRetryMaxMs(p.config),
      checkGenesis: checkGenesis(guard, 'da'),
    },
    p.logger.child({ module: 'da-retriever' }),
    p.clock,
  );
}

export const checkGenesis = (guard: GenesisGuard, from: HeardFrom) => (signed: SignedHeader) => guard.check(signed, from);

/** The components of one role, built from the parts; nothing here binds a socket. */
export interface CoreComponents {
  chain: Chain;
  genesisGuard: GenesisGuard;
  intake: BlockIntake;
  producer: BlockProducer | null;
  submitter: DaSubmitter | null;
  retriever: DaRetriever | null;
  /** Forced txs still to take, on an aggregator or based node with forced inclusion on. */
  forcedQueue: ForcedInclusionQueue | null;
  /** A full node's forced-inclusion check, when forced inclusion is on. */
  verifier: ForcedInclusionVerifier | null;
  /** A based node's block loop (node.based). */
  based: BasedProducer | null;
}

/**
 * The components of the role the config names: an aggregator produces and
 * submits; a based node derives its blocks from the forced-inclusion namespace;
 * a full node syncs from DA (and peers, given the intake); an HA aggregator
 * has all three parts, which its role starts and stops.
 */
export async function buildComponents(p: CoreParts, forcedNamespace: Uint8Array | null): Promise<CoreComponents> {
  const { config, genesis } = p;
  const aggregator = config.node.aggregator;
  const chain = await buildChain(p);
  // The aggregator takes forced txs into its blocks; a based node derives its blocks from them alone.
  const forcedQueue = forcedNamespace && (aggregator || config.node.based) ? await openForcedQueue(p, forcedNamespace) : null;
  const submitter = aggregator ? buildSubmitter(p, chain) : null;
  const producer = aggregator ? buildProducer(p, chain, forcedQueue) : null;
  const genesisGuard = new GenesisGuard(genesis, p.genesisFile, p.logger.child({ module: 'chain' }));
  const verifier = forcedNamespace && !aggregator && !config.node.based ? await openForcedVerifier(p, forcedNamespace) : null;
  const intake = new BlockIntake(chain, p.store, p.metrics, genesisGuard, verifier);
  // A based node has no aggregator's blocks to read: it derives its own from the forced-inclusion namespace.
  const based = config.node.based
    ? new BasedProducer(
        chain,
        p.execution,
        forcedQueue!,
        { proposerAddress: genesis.proposerAddress, maxBlockTxBytes: maxBlockTxBytes(config) },
        p.logger.child({ module: 'based' }),
      )
    : null;
  // An HA aggregator follows DA too while it stands by (src/node/ha.ts says why); a lone aggregator only posts.
  const retriever = (aggregator && !config.ha.enabled) || based ? null : await buildRetriever(p, chain, intake, genesisGuard);
  return { chain, genesisGuard, intake, producer, submitter, retriever, forcedQueue, verifier, based };
}

/** The DA namespaces of the chain (da.namespace, else the chain id). */
export const chainNamespaces = (config: Config, genesis: Genesis): DaNamespaces =>
  daNamespaces(config.da.namespace || genesis.chainId, config.da.data_namespace);
