import type { LogProblem } from '../log/index.js';
import type { HealthReport, PeerSummary } from './backend.js';

/** A child process the node supervises, as the dashboard lists it. */
export interface SupervisedChildInfo {
  name: string;
  /** starting | running | restarting | stopped | failed. */
  state: string;
  pid: number | null;
  /** Unix ms the current run started; null while not running. */
  started_at: number | null;
  restarts: number;
  /** How its last run ended (Unix ms); null or absent while it never exited. */
  last_exit?: { code: number | null; signal: string | null; at: number } | null;
}

/**
 * Everything the dashboard shows of a node beside its blocks, in one object:
 * `GET /node_info` on the status listener (JSON-RPC) and on the RPC listener (bare) serve it, and `start --dashboard`
 * reads the same object in-process. Times are Unix ms, heights JSON numbers.
 */
export interface NodeInfo {
  chain_id: string;
  /**
   * The node's own listeners as bound (host:port): a client that reached one
   * of them (`--node`) learns the other from the node instead of guessing.
   */
  listeners: { rpc: string; status: string };
  version: string;
  role: 'aggregator' | 'full node' | 'full node (DA-only sync)';
  started_at: number;
  height: number;
  best_known_height: number;
  catching_up: boolean;
  /** Header time of the latest block; 0 before the first. */
  last_block_time: number;
  health: HealthReport;
  da: {
    included_height: number;
    /** Blocks produced or synced but not yet included on DA. */
    pending_blocks: number;
    /** node.max_pending_blocks; 0 = no cap. */
    max_pending_blocks: number;
    /** Last DA call that succeeded; 0 = none yet. */
    last_success_at: number;
    last_error: { message: string; reason: string; remedy: string; at: number } | null;
    /** Gas price the next submission sends; -1 = the DA node estimates; null on a node that does not submit. */
    gas_price: number | null;
    /** Why block production is paused (the pending cap), or null. */
    production_paused: string | null;
  };
  p2p: { id: string; listen_addresses: string[]; configured_peers: number; peers: PeerSummary[] };
  execution: {
    type: string;
    reachable: boolean;
    /** The execution client's own height (evm); null when the layer is built in (kv). */
    height: number | null;
  };
  children: SupervisedChildInfo[];
  /** The latest warnings and errors the node logged, oldest first. */
  warnings: LogProblem[];
}
