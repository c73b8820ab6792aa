import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DA_REMEDY, type DaFailureReason } from '../da/errors.js';

/** Every metric name starts with this (the Node.js process metrics too). */
const METRIC_PREFIX = 'noded_';

/** The DA failure causes (one remedy each), each a `reason` label of its own from the first scrape on (at 0). */
const DA_FAILURE_REASONS = Object.keys(DA_REMEDY) as DaFailureReason[];

/** Where a block a node did not produce itself came from. */
export type BlockOrigin = 'p2p' | 'da';

/** Executor calls timed by name (the `method` label). */
export type ExecutionMethod = 'initChain' | 'getTxs' | 'executeTxs' | 'setFinal';

export type GossipTopic = 'header' | 'data';

/** A supervised child as the metrics read it. */
export interface ChildReading {
  name: string;
  state: string;
  restarts: number;
}

/**
 * What the node already knows, read at scrape time: these gauges cost nothing
 * between scrapes, and nothing on the block path.
 */
export interface NodeReadings {
  chainHeight(): bigint;
  /** Highest height whose header and data are known on DA. */
  daIncludedHeight(): bigint;
  /** What only one role has: an aggregator's pending queue, or how far a full node has read DA. */
  da: SubmitterReadings | FollowerReadings;
  mempoolSize(): number;
  connectedPeers(): number;
  bestKnownHeight(): bigint;
  catchingUp(): boolean;
  children(): ChildReading[];
  /** An HA node's election (ha.enabled); null otherwise. */
  ha: HaReadings | null;
}

/** What the HA coordinator knows of the election (src/ha/coordinator.ts). */
export interface HaReadings {
  isLeader(): boolean;
  /** Whether this node knows of a leader, itself or another. */
  hasLeader(): boolean;
  leaderChanges(): number;
  fenceRefusals(): number;
  /** Milliseconds before this leader stops producing unless it renews its lease; null while it does not lead. */
  deadlineLeftMs(): number | null;
}

export interface SubmitterReadings {
  mode: 'submit';
  /** Blocks produced but not yet on DA. */
  pendingBlocks(): bigint;
  /** node.max_pending_blocks (0 = no cap). */
  maxPendingBlocks: number;
}

export interface FollowerReadings {
  mode: 'follow';
  /** Last DA height read. */
  scanHeight(): bigint;
  /** DA's head when last asked. */
  headHeight(): bigint;
  /** Blocks held (from peers) not yet found on DA. */
  behindBlocks(): bigint;
}

/**
 * The Node.js process metrics, on a registry of their own made once per
 * process: they describe the process, not a node, and prom-client's GC
 * observer and event-loop monitor cannot be stopped, so one per node would
 * pile up in a process that opens many nodes (tests, the bench).
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: METRIC_PREFIX });
  }
  return processRegistry;
}

const SECONDS_FAST = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A node's metrics, on a registry of its own (several nodes in one process do not clash). */
export type NodeMetrics = ReturnType<typeof createNodeMetrics>;

/**
 * The node's metrics (prom-client). Components take `NodeMetrics | null` and
 * update the counters and histograms as things happen; the gauges of values
 * the node holds anyway read them through `observe()` at scrape time. Nothing
 * outside this folder imports prom-client.
 */
export function createNodeMetrics() {
  const registry = new Registry();
  // Now rather than at the first scrape, so the GC and event-loop figures cover the node's whole run.
  processMetrics();
  const registers = [registry];
  let readings: NodeReadings | null = null;

  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name: METRIC_PREFIX + name, help, labelNames, registers });
  const histogram = <L extends string = never>(name: string, help: string, buckets: number[], labelNames: readonly L[] = []) =>
    new Histogram<L>({ name: METRIC_PREFIX + name, help, buckets, labelNames, registers });
  const gauge = (name: string, help: string) => new Gauge({ name: METRIC_PREFIX + name, help, registers });

  /** A gauge read from the node at scrape time (0 until observe()). */
  const readGauge = (name: string, help: string, read: (r: NodeReadings) => number | bigint | boolean) =>
    new Gauge({
      name: METRIC_PREFIX + name,
      help,
      registers,
      collect() {
        if (readings) this.set(Number(read(readings)));
      },
    });

  /** A counter whose count a component keeps, read at scrape time. */
  const readCounter = (name: string, help: string, read: () => number) =>
    new Counter({
      name: METRIC_PREFIX + name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });

  readGauge('chain_height', "Height of the last block committed to this node's chain", (r) => r.chainHeight());
  readGauge('da_included_height', 'Highest height whose header and data are known on DA (on an aggregator every block up to it is included)', (r) =>
    r.daIncludedHeight(),
  );
  readGauge('mempool_txs', 'Txs waiting in the mempool for a block', (r) => r.mempoolSize());
  readGauge('sync_best_known_height', "Highest block height this node knows of (its own, a peer's head, or a header seen on DA)", (r) => r.bestKnownHeight());
  readGauge('sync_catching_up', '1 while the node is behind the best-known height, else 0', (r) => r.catchingUp());
  readGauge('p2p_connected_peers', 'Peers with an open connection', (r) => r.connectedPeers());

  new Gauge({
    name: `${METRIC_PREFIX}supervised_child_up`,
    help: '1 while a supervised child is running, else 0',
    labelNames: ['name'],
    registers,
    collect() {
      this.reset();
      for (const c of readings?.children() ?? []) this.set({ name: c.name }, c.state === 'running' ? 1 : 0);
    },
  });
  new Counter({
    name: `${METRIC_PREFIX}supervised_child_restarts_total`,
    help: 'Restarts of a supervised child since the node started',
    labelNames: ['name'],
    registers,
    collect() {
      // The supervisor keeps the count; the counter shows it.
      this.reset();
      for (const c of readings?.children() ?? []) this.inc({ name: c.name }, c.restarts);
    },
  });

  const daFailures = counter('da_submit_failures_total', 'Failed DA submission attempts, by cause', ['reason']);
  for (const reason of DA_FAILURE_REASONS) daFailures.inc({ reason }, 0);
  const rpcLabels = ['server', 'route', 'code'] as const;

  return {
    /** Lets the scrape-time gauges read the node; before this they read 0. */
    observe(r: NodeReadings): void {
      readings = r;
      // Only the role's own DA gauges exist: a full node has no pending queue and no cap to show.
      const da = r.da;
      if (da.mode === 'submit') {
        readGauge('pending_blocks', 'Blocks produced but not yet included on DA (aggregator)', () => da.pendingBlocks());
        readGauge('pending_blocks_cap', 'node.max_pending_blocks: at this many pending blocks production pauses (0 = no cap)', () => da.maxPendingBlocks);
      } else {
        readGauge('da_scan_height', 'Last DA height this full node read', () => da.scanHeight());
        readGauge('da_head_height', 'DA head height when this full node last asked', () => da.headHeight());
        readGauge('da_behind_blocks', 'Blocks this full node holds (from peers) whose header and data it has not yet found on DA', () => da.behindBlocks());
      }
      // Only an HA node has an election to show; the names follow etcd's own (etcd_server_is_leader, …: server/etcdserver/metrics.go).
      const ha = r.ha;
      if (ha) {
        readGauge('ha_is_leader', '1 while this node leads the HA cluster (its lease holds the etcd leader key), else 0', () => ha.isLeader());
        readGauge('ha_has_leader', '1 while this node knows of a leader (itself or another), else 0', () => ha.hasLeader());
        readCounter('ha_leader_changes_seen_total', 'New leaders this node has seen since it started (itself included)', () => ha.leaderChanges());
        readCounter(
          'ha_fence_refusals_total',
          'Blocks of this node that the fence refused or could not record in etcd (each dropped, and leadership given up)',
          () => ha.fenceRefusals(),
        );
        readGauge(
          'ha_lease_deadline_seconds',
          'Seconds before this leader stops producing unless it renews its etcd lease (the TTL minus a margin after the last keep-alive sent); 0 while it does not lead',
          () => (ha.deadlineLeftMs() ?? 0) / 1000,
        );
      }
    },
    blockInterval: histogram(
      'block_interval_seconds',
      'Time between two blocks the aggregator produced',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
    ),
    blockTxs: histogram('block_txs', 'Txs in each block the aggregator produced', [0, 1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000]),
    blocksApplied: counter('sync_blocks_applied_total', 'Blocks from outside applied to the chain, by source (p2p or da)', ['source']),
    daAttempts: counter('da_submit_attempts_total', 'DA submission attempts (each batch, each retry)'),
    daFailures,
    daLastFailure: gauge('da_submit_last_failure_timestamp_seconds', 'Unix time of the last failed DA submission attempt'),
    daGasPrice: gauge('da_gas_price', 'Gas price the last DA submission attempt sent (-1: the DA node estimates it)'),
    daSubmittedBytes: counter('da_submitted_bytes_total', 'Bytes of blobs included on DA'),
    daSubmittedBlobs: counter('da_submitted_blobs_total', 'Blobs included on DA (a header and a data blob per block)'),
    gossipReceived: counter('p2p_gossip_received_total', 'Gossip messages received from peers, by topic', ['topic']),
    gossipPublished: counter('p2p_gossip_published_total', 'Gossip messages this node published, by topic (none while no peer subscribes to it)', ['topic']),
    gossipRejected: counter('p2p_gossip_rejected_total', 'Gossip messages rejected as invalid (the sender is penalised), by topic', ['topic']),
    rpcRequests: counter('rpc_requests_total', 'Requests answered, by listener, route and HTTP status code', rpcLabels),
    rpcDuration: histogram('rpc_request_duration_seconds', 'Time to answer a request, by listener, route and HTTP status code', SECONDS_FAST, rpcLabels),
    executionDuration: histogram('execution_call_duration_seconds', 'Time of a call to the execution layer, by method', [...SECONDS_FAST, 30, 60], ['method']),
    executionErrors: counter('execution_errors_total', 'Calls to the execution layer that failed, by method', ['method']),
    /** The text exposition of the node's and the process's metrics, and its content type. */
    async scrape(): Promise<{ contentType: string; body: string }> {
      const [node, process] = await Promise.all([registry.metrics(), processMetrics().metrics()]);
      return { contentType: registry.contentType, body: node + process };
    },
  };
}
