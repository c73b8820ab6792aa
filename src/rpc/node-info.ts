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

/** What every node knows of its DA layer. */
interface DaInfoBase {
  /**
   * Highest height whose header and data are known on DA: on an aggregator,
   * every block up to it is included; a full node records each block it finds there.
   */
  included_height: number;
  /** Last DA call that succeeded; 0 = none yet. */
  last_success_at: number;
  /** First failure since the last success; 0 = the last DA call succeeded. */
  failing_since: number;
  last_error: { message: string; reason: string; remedy: string; at: number } | null;
}

/** An aggregator's DA: it posts every block it produces, and pauses production at the pending cap. */
export interface SubmitterDaInfo extends DaInfoBase {
  mode: 'submit';
  /** Blocks produced but not yet included on DA. */
  pending_blocks: number;
  /** node.max_pending_blocks; 0 = no cap. */
  max_pending_blocks: number;
  /** Gas price the next submission sends; -1 = the DA node estimates. */
  gas_price: number;
  /** Why block production is paused (the pending cap), or null. */
  production_paused: string | null;
}

/** A full node's DA: it reads what the aggregator posted; nothing of its own is pending there. */
export interface FollowerDaInfo extends DaInfoBase {
  mode: 'follow';
  /** Last DA height read (0 = none yet). */
  scan_height: number;
  /** DA's head when last asked (0 = not asked yet). */
  head_height: number;
  /** How far DA is behind this node's chain: blocks it holds (from peers) not yet found on DA. */
  behind_blocks: number;
}

/** An HA node's place in the election (ha.enabled): its name, its role, and who leads (null while nobody does). */
export interface HaInfo {
  node_id: string;
  role: 'leader' | 'follower';
  leader: string | null;
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
  role: 'aggregator' | 'full node' | 'full node (DA-only sync)' | 'based node';
  started_at: number;
  height: number;
  best_known_height: number;
  catching_up: boolean;
  /** Header time of the latest block; 0 before the first. */
  last_block_time: number;
  health: HealthReport;
  da: SubmitterDaInfo | FollowerDaInfo;
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
  /** Present on an HA node (ha.enabled) alone. */
  ha?: HaInfo;
}
