import { formatHostPort } from '../config/index.js';
import { recentProblems } from '../log/index.js';
import type { Listener, NodeInfo } from '../rpc/index.js';
import type { Node } from './node.js';

const NANOS_PER_MS = 1_000_000n;

/** The node's NodeInfo (GET /node_info, and `start --dashboard` in-process). */
export function nodeInfo(node: Node): NodeInfo {
  const { config, logger, version } = node.opts;
  const { chain, store, p2p, producer, submitter, home } = node.c;
  const net = p2p.netInfo();
  const da = node.daActivity();
  const height = chain.height;
  const included = store.daIncludedHeight();
  return {
    chain_id: home.genesis.chainId,
    listeners: { rpc: listenerText(node.listeners.rpc), status: listenerText(node.listeners.status) },
    version,
    role: config.node.aggregator ? 'aggregator' : p2p.configuredPeers > 0 ? 'full node' : 'full node (DA-only sync)',
    started_at: node.startedAt,
    height: Number(height),
    best_known_height: Number(node.bestKnownHeight()),
    catching_up: node.catchingUp(),
    last_block_time: height > 0n ? Number(chain.lastBlockTime / NANOS_PER_MS) : 0,
    health: node.health(),
    da: {
      included_height: Number(included),
      pending_blocks: Number(height > included ? height - included : 0n),
      max_pending_blocks: config.node.max_pending_blocks,
      last_success_at: da.lastSuccessAt,
      last_error: da.lastError,
      gas_price: submitter ? submitter.status().gasPrice : null,
      production_paused: producer?.pausedReason ?? null,
    },
    p2p: { id: net.id, listen_addresses: net.listen_addresses, configured_peers: p2p.configuredPeers, peers: net.connected_peers },
    execution: executionInfo(config.execution.type, node.c.executor.status?.()),
    children: node.opts.children?.() ?? [],
    warnings: [...recentProblems(logger)],
  };
}

const listenerText = (l: Listener) => formatHostPort(l.address.host, l.address.port);

/** An in-process layer (kv) is always reachable and has no height of its own. */
function executionInfo(type: string, status: { reachable: boolean; height: bigint | null } | undefined): NodeInfo['execution'] {
  return { type, reachable: status?.reachable ?? true, height: status?.height == null ? null : Number(status.height) };
}
