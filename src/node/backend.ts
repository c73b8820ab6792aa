import { readFileSync } from 'node:fs';
import type { Config } from '../config/index.js';
import type { DaNamespaces } from '../da/index.js';
import { KvExecutor, TxBackpressureError, TxRejectedError, type AbciExecutor, type Executor, type Mempool } from '../exec/index.js';
// ha/forward.js, not ha/index.js: the index loads etcd's client, which only an HA node needs.
import { forwardTx } from '../ha/forward.js';
import type { LeaderInfo } from '../ha/index.js';
import type { Home } from '../home/index.js';
import type { P2PNetwork } from '../p2p/index.js';
import type { BlockReads, HaInfo, HealthReport, NodeInfo, RpcBackend } from '../rpc/index.js';
import type { Chain } from './chain.js';
import { CommitWaiters } from './commit-waiters.js';
import { maxBlockTxBytes, retryAfterSeconds } from './parts.js';
import type { BlockProducer } from './producer.js';

/** What the backend asks of the running node as a whole (src/node/node.ts implements it). */
export interface NodeView {
  readonly isClosing: boolean;
  bestKnownHeight(): bigint;
  catchingUp(): boolean;
  health(): HealthReport;
  info(): NodeInfo;
  daInfo(): NodeInfo['da'];
  haInfo(): HaInfo | null;
  /** Where this node's txs go: null when it takes them itself (no HA, or it leads); else the HA leader as last seen (null: none known). */
  haTxRoute(): { nodeId: string; leader: LeaderInfo | null } | null;
}

/** The parts the RPC backend reads: each by the narrowest face it needs. */
export interface BackendParts {
  config: Config;
  version: string;
  home: Pick<Home, 'genesis' | 'signer' | 'nodeKey'> & { paths: { genesisFile: string } };
  store: BlockReads;
  chain: Pick<Chain, 'currentState' | 'onBlock'>;
  mempool: Mempool;
  executor: Executor;
  namespaces: DaNamespaces;
  p2p: Pick<P2PNetwork, 'netInfo'>;
  producer: Pick<BlockProducer, 'pendingCapReason'> | null;
  node: NodeView;
}

/** The RpcBackend the RPC and status servers serve from. */
export function createBackend(parts: BackendParts): RpcBackend {
  const { config, home, store, chain, mempool, executor, namespaces, p2p, producer, node } = parts;
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  const commits = new CommitWaiters(chain);
  return {
    chainId: home.genesis.chainId,
    version: parts.version,
    aggregator: config.node.aggregator,
    store,
    signer: home.signer,
    nodeKey: { publicKey: home.nodeKey.key.publicKey, peerId: home.nodeKey.peerId },
    namespaces: { header: hex(namespaces.header), data: hex(namespaces.data) },
    genesisDaHeight: home.genesis.daStartHeight,
    statusAddress: config.rpc.status_address,
    startedAt: Date.now(),
    state: () => chain.currentState,
    bestKnownHeight: () => node.bestKnownHeight(),
    catchingUp: () => node.catchingUp(),
    netInfo: () => p2p.netInfo(),
    health: () => node.health(),
    mempool,
    genesis: home.genesis,
    genesisJson: readFileSync(home.paths.genesisFile, 'utf8'),
    maxBlockTxBytes: maxBlockTxBytes(config),
    txCommitted: (hash, timeoutMs) => commits.wait(hash, timeoutMs),
    blockResults: executor.blockResults ? (height, txs) => executor.blockResults!(height, txs) : null,
    info: () => node.info(),
    daInfo: () => node.daInfo(),
    haInfo: () => node.haInfo(),
    submitTx: (tx, origin) => {
      if (node.isClosing) throw new TxRejectedError('node shutting down; send the tx again once it is back', 503);
      if (config.node.based) {
        throw new TxRejectedError(
          'this node is a based node: its blocks come from the DA forced-inclusion namespace alone; post the tx there with `noded tx post`',
          503,
        );
      }
      if (!config.node.aggregator) {
        throw new TxRejectedError('this node is a full node and does not produce blocks; send txs to the aggregator', 503);
      }
      // An HA follower hands the tx to the leader and answers with the leader's answer.
      const route = node.haTxRoute();
      if (route) {
        const forwarded = origin?.forwardedBy !== undefined;
        return forwardTx(route.leader, tx, { from: route.nodeId, forwarded, retryAfterSeconds: retryAfterSeconds(config.ha.lease_ttl) });
      }
      // A tx taken now would wait for blocks that are not being made: the sender is told to come back instead.
      const paused = producer?.pendingCapReason();
      if (paused) throw new TxBackpressureError(`${paused}; retry once DA catches up`, retryAfterSeconds(config.da.block_time));
      return executor.submitTx(tx);
    },
    kv: executor instanceof KvExecutor ? { get: (key) => executor.get(key) } : null,
    abci: config.execution.type === 'abci' ? (executor as AbciExecutor) : null,
  };
}
