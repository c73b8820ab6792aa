import type { LogProblem, Logger } from '../log/index.js';
import type { NodeInfo } from '../rpc/index.js';

/** How often the notifier looks for a state change; it writes a line only on one, or when the interval is up. */
const CHECK_MS = 1000;

/** The fields of the periodic status line, under `status` in a JSON line. */
export interface StatusFields {
  height: number;
  bestKnown: number;
  catchingUp: boolean;
  /** Why /health/ready answers UNREADY, or null while it answers READY. */
  unready: string | null;
  /** Highest height whose header and data are known on DA. */
  daIncluded: number;
  /** An aggregator's blocks not yet on DA; absent on a full node, which has none. */
  daPending?: number;
  /** node.max_pending_blocks (0 = no cap); absent on a full node. */
  maxPending?: number;
  /** A full node's last DA height read; absent on an aggregator. */
  daScanned?: number;
  /** DA's head when the full node last asked; absent on an aggregator. */
  daHead?: number;
  /** How many blocks a full node holds that it has not yet found on DA; absent on an aggregator. */
  daBehind?: number;
  peers: number;
  /** The latest problem logged with a code (every error line has one), or null. */
  lastError: { code: string; msg: string; detail?: string; time: string } | null;
}

/** The DA figures of the status line. */
export type DaStatusFields = Pick<StatusFields, 'daIncluded' | 'daPending' | 'maxPending' | 'daScanned' | 'daHead' | 'daBehind'>;

/** An aggregator's pending queue, or what a full node follows on DA: each role only its own figures. */
export function daStatusFields(da: NodeInfo['da']): DaStatusFields {
  return da.mode === 'submit'
    ? { daIncluded: da.included_height, daPending: da.pending_blocks, maxPending: da.max_pending_blocks }
    : { daIncluded: da.included_height, daScanned: da.scan_height, daHead: da.head_height, daBehind: da.behind_blocks };
}

export function statusFields(info: NodeInfo): StatusFields {
  const last = info.warnings.findLast((p): p is LogProblem & { code: string } => p.code !== undefined);
  return {
    height: info.height,
    bestKnown: info.best_known_height,
    catchingUp: info.catching_up,
    unready: info.health.ready.ok ? null : (info.health.ready.reason ?? 'unknown'),
    ...daStatusFields(info.da),
    peers: info.p2p.peers.length,
    lastError: last ? { code: last.code, msg: last.msg, ...(last.detail ? { detail: last.detail } : {}), time: new Date(last.time).toISOString() } : null,
  };
}

const atCap = (s: DaStatusFields) => s.maxPending !== undefined && s.daPending !== undefined && s.maxPending > 0 && s.daPending >= s.maxPending;

/**
 * DA in words, after "DA": an aggregator's `included 118, 2 pending`, or a full
 * node's `included 118 (2 blocks behind the chain), read DA height 1203 of 1205`.
 */
export function describeDa(s: DaStatusFields): string {
  if (s.daPending !== undefined) return `included ${s.daIncluded}, ${s.daPending} pending${atCap(s) ? ` (at the cap of ${s.maxPending})` : ''}`;
  const behind = s.daBehind ?? 0;
  return `included ${s.daIncluded} (${behind} block${behind === 1 ? '' : 's'} behind the chain), read DA height ${s.daScanned ?? 0} of ${s.daHead ?? 0}`;
}

/**
 * The status in words, the line an operator tails:
 * `synced | height 120 | DA included 118, 2 pending | 3 peers | no errors`;
 * while the node is not ready, its first word says why (`UNREADY: DA submissions failing for 75s: …`).
 */
export function describeStatus(s: StatusFields, now = Date.now()): string {
  const state = s.unready !== null ? `UNREADY: ${s.unready}` : s.catchingUp ? 'catching up' : 'synced';
  const height = s.catchingUp ? `height ${s.height} of ${s.bestKnown}` : `height ${s.height}`;
  const peers = `${s.peers} peer${s.peers === 1 ? '' : 's'}`;
  const e = s.lastError;
  const error = e
    ? `last error ${e.code} ${Math.max(0, Math.round((now - Date.parse(e.time)) / 1000))}s ago: ${e.msg}${e.detail ? ` (${e.detail})` : ''}`
    : 'no errors';
  return [state, height, `DA ${describeDa(s)}`, peers, error].join(' | ');
}

/** What, when it changes, is worth a line at once rather than at the next interval (a reason's counts aside). */
function stateKey(s: StatusFields): string {
  const e = s.lastError;
  return JSON.stringify([s.catchingUp, s.unready?.replace(/\d+/g, '#') ?? null, s.peers, atCap(s), e && [e.code, e.msg, e.detail]]);
}

/**
 * Logs one info line with the node's status every `intervalMs` and whenever
 * catching_up flips, readiness changes, the peer count changes, DA pending
 * reaches or leaves the cap, or a new error is logged (after Lodestar's notifier).
 */
export class StatusNotifier {
  private timer: NodeJS.Timeout | undefined;
  private lastKey = '';
  private lastAt = 0;

  constructor(
    private readonly read: () => NodeInfo,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(signal: AbortSignal): void {
    this.timer = setInterval(() => this.check(), Math.min(CHECK_MS, this.intervalMs));
    this.timer.unref();
    signal.addEventListener('abort', () => clearInterval(this.timer), { once: true });
  }

  stopped(): Promise<void> {
    clearInterval(this.timer);
    return Promise.resolve();
  }

  private check(): void {
    let status: StatusFields;
    try {
      status = statusFields(this.read());
    } catch (err) {
      // A throw here would end the process from a timer; the status line is not worth that.
      this.logger.error({ code: 'STATUS_LINE_FAILED', err }, 'cannot read the node status for the status line');
      return;
    }
    const key = stateKey(status);
    const now = Date.now();
    if (key === this.lastKey && now - this.lastAt < this.intervalMs) return;
    this.lastKey = key;
    this.lastAt = now;
    this.logger.info({ status }, describeStatus(status, now));
  }
}
