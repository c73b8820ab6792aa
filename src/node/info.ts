import { formatHostPort } from '../config/index.js';
import { recentProblems } from '../log/index.js';
import type { Listener, NodeInfo } from '../rpc/index.js';
import type { Node } from './node.js';

const NANOS_PER_MS = 1_000_000n;

/** The node's NodeInfo (GET /node_info, and `start --dashboard` in-process). */
export function nodeInfo(node: Node): NodeInfo {
  const { config, logger, version } = node.opts;
  const { chain, p2p, home } = node.c;
  const net = p2p.netInfo();
  const height = chain.height;
  return {
    chain_id: home.genesis.chainId,
    listeners: { rpc: listenerText(node.listeners.rpc), status: listenerText(node.listeners.status) },
    version,
    role: config.node.aggregator ? 'aggregator' : config.node.based ? 'based node' : p2p.configuredPeers > 0 ? 'full node' : 'full node (DA-only sync)',
    started_at: node.startedAt,
    height: Number(height),
    best_known_height: Number(node.bestKnownHeight()),
    catching_up: node.catchingUp(),
    last_block_time: height > 0n ? Number(chain.lastBlockTime / NANOS_PER_MS) : 0,
    health: node.health(),
    da: daInfo(node),
    p2p: { id: net.id, listen_addresses: net.listen_addresses, configured_peers: p2p.configuredPeers, peers: net.connected_peers },
    execution: executionInfo(config.execution.type, node.c.executor.status?.()),
    children: node.opts.children?.() ?? [],
    warnings: [...recentProblems(logger)],
    ...(node.c.ha ? { ha: node.c.ha.info() } : {}),
  };
}

const listenerText = (l: Listener) => formatHostPort(l.address.host, l.address.port);

/** The DA side of NodeInfo: an aggregator's submissions, or what a full node follows. */
export function daInfo(node: Node): NodeInfo['da'] {
  const { store, producer, submitter, retriever } = node.c;
  const activity = node.daActivity();
  const base = {
    included_height: Number(store.daIncludedHeight()),
    last_success_at: activity.lastSuccessAt,
    failing_since: activity.failingSince,
    last_error: activity.lastError,
  };
  if (submitter) {
    return {
      mode: 'submit',
      ...base,
      pending_blocks: Number(store.blocksNotOnDa()),
      max_pending_blocks: node.opts.config.node.max_pending_blocks,
      gas_price: submitter.status().gasPrice,
      production_paused: producer?.pausedReason ?? null,
    };
  }
  return {
    mode: 'follow',
    ...base,
    // A based node reads only the forced-inclusion namespace: no scan of the chain's own.
    scan_height: Number(retriever?.scannedHeight() ?? 0n),
    head_height: Number(retriever?.headHeight() ?? 0n),
    behind_blocks: Number(store.blocksNotOnDa()),
  };
}

/** An in-process layer (kv) is always reachable and has no height of its own. */
function executionInfo(type: string, status: { reachable: boolean; height: bigint | null } | undefined): NodeInfo['execution'] {
  return { type, reachable: status?.reachable ?? true, height: status?.height == null ? null : Number(status.height) };
}
