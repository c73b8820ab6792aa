import type { ResponseCheckTx } from 'cosmjs-types/tendermint/abci/types';
import type { AbciExecutor, BlockResults, Mempool } from '../exec/index.js';
import type { Genesis } from '../home/index.js';
import type { BlockStore, TxLocation } from '../store/index.js';
import type { State } from '../types/index.js';
import type { HaInfo, NodeInfo } from './node-info.js';

/** A connected peer, as the RPC and status endpoints show it. */
export interface PeerSummary {
  id: string;
  /** Full address, /ip4/<ip>/tcp/<port>/p2p/<peer_id>. */
  address: string;
}

export interface NetSummary {
  id: string;
  listen_addresses: string[];
  connected_peers: PeerSummary[];
}

export interface CheckResult {
  ok: boolean;
  /** Why not, in an operator's words; absent when ok. */
  reason?: string;
}

export interface HealthReport {
  live: CheckResult;
  ready: CheckResult;
  /** Each readiness check by name, for `Accept: application/json`. */
  checks: Record<string, CheckResult>;
}

/** The store reads the servers make: blocks, txs and metadata; they never write. */
export type BlockReads = Pick<BlockStore, 'height' | 'getBlock' | 'getHeightByHash' | 'blocksInRange' | 'getTxLocation' | 'getMetadata' | 'onDaHeightsWritten'>;

/**
 * The header of a tx an HA follower forwards to the leader's /tx (src/ha/forward.ts),
 * naming the follower: a node that no longer leads refuses it rather than forwarding it on.
 */
export const FORWARDED_HEADER = 'x-noded-forwarded-by';

/** Where a tx came from: `forwardedBy` names the HA node that forwarded it to this one (its /tx request's header). */
export interface TxOrigin {
  forwardedBy?: string;
}

/**
 * What the RPC, health and status servers need from a running node: built by
 * the node (src/node/backend.ts) from its parts; the servers never reach into
 * the node's internals.
 */
export interface RpcBackend {
  readonly chainId: string;
  readonly version: string;
  readonly aggregator: boolean;
  readonly store: BlockReads;
  readonly signer: { publicKey: Uint8Array; address: Uint8Array };
  readonly nodeKey: { publicKey: Uint8Array; peerId: string };
  readonly namespaces: { header: string; data: string };
  readonly genesisDaHeight: bigint;
  readonly statusAddress: string;
  /** Unix ms when the node started. */
  readonly startedAt: number;
  state(): State;
  /** Best height this node knows of (its own, or a peer's or DA's when higher). */
  bestKnownHeight(): bigint;
  /** True while the node is behind what it knows of (peers, DA). */
  catchingUp(): boolean;
  health(): HealthReport;
  /** This node's P2P identity, listen addresses and connected peers. */
  netInfo(): NetSummary;
  /** The txs waiting for a block. */
  readonly mempool: Pick<Mempool, 'size' | 'bytes' | 'peek'>;
  /** The chain's genesis (config/genesis.json). */
  readonly genesis: Genesis;
  /** config/genesis.json as the node read it at start, served as is by `GET /genesis` (what `noded init --join` fetches). */
  readonly genesisJson: string;
  /** Most tx bytes a block takes (it must fit one DA blob). */
  readonly maxBlockTxBytes: number;
  /**
   * Where the tx with this hash lands once a block holding it is committed
   * (rejects after `timeoutMs`); call it before submitting the tx, and `cancel`
   * if the submission is refused.
   */
  txCommitted(hash: Uint8Array, timeoutMs: number): { landed: Promise<TxLocation>; cancel: () => void };
  /** The execution layer's results of a block, given its txs (null: none kept for it); null when the layer has none to give (evm). */
  readonly blockResults: ((height: bigint, txs: Uint8Array[]) => Promise<BlockResults | null>) | null;
  /**
   * Queues a tx (an ABCI app checks it first: its CheckTx answer comes back),
   * resolving once the store keeps it; throws TxRejectedError with the HTTP
   * status to answer (TxBackpressureError: 503, try again after a while).
   */
  submitTx(tx: Uint8Array, from?: TxOrigin): void | Promise<void | ResponseCheckTx>;
  /** What the dashboard shows beside the blocks (`GET /node_info` on the status listener). */
  info(): NodeInfo;
  /** What the node reports of DA (an aggregator's pending queue, or what a full node follows); null while it starts. */
  daInfo(): NodeInfo['da'] | null;
  /** An HA node's role and leader; null when ha is off. */
  haInfo(): HaInfo | null;
  /** Reads the kv machine; null when the execution layer is not kv. */
  readonly kv: { get(key: string): Promise<Uint8Array | null> } | null;
  /** The ABCI app's Info and Query, passed through by the status server; null when the execution layer is not abci. */
  readonly abci: Pick<AbciExecutor, 'info' | 'query'> | null;
}

/**
 * cosmjs-types' ABCI codecs, loaded on first use: only an HA leader's and
 * follower's forwarded txs carry a CheckTx answer as JSON, and importing the
 * module up front added ~7 MB to every idle node (bench figure rss).
 */
export const abciTypes = () => import('cosmjs-types/tendermint/abci/types');
