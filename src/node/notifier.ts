import type { LogProblem, Logger } from '../log/index.js';
import type { NodeInfo } from '../rpc/index.js';

/** How often the notifier looks for a state change; it writes a line only on one, or when the interval is up. */
const CHECK_MS = 1000;

/** The fields of the periodic status line, under `status` in a JSON line. */
export interface StatusFields {
  height: number;
  bestKnown: number;
  catchingUp: boolean;
  daIncluded: number;
  daPending: number;
  /** node.max_pending_blocks; 0 = no cap. */
  maxPending: number;
  peers: number;
  /** The latest problem logged with a code (every error line has one), or null. */
  lastError: { code: string; msg: string; detail?: string; time: string } | null;
}

export function statusFields(info: NodeInfo): StatusFields {
  const last = info.warnings.findLast((p): p is LogProblem & { code: string } => p.code !== undefined);
  return {
    height: info.height,
    bestKnown: info.best_known_height,
    catchingUp: info.catching_up,
    daIncluded: info.da.included_height,
    daPending: info.da.pending_blocks,
    maxPending: info.da.max_pending_blocks,
    peers: info.p2p.peers.length,
    lastError: last ? { code: last.code, msg: last.msg, ...(last.detail ? { detail: last.detail } : {}), time: new Date(last.time).toISOString() } : null,
  };
}

const atCap = (s: StatusFields) => s.maxPending > 0 && s.daPending >= s.maxPending;

/** The status in words, the line an operator tails: `synced | height 120 | DA included 118, 2 pending | 3 peers | no errors`. */
export function describeStatus(s: StatusFields, now = Date.now()): string {
  const sync = s.catchingUp ? `catching up | height ${s.height} of ${s.bestKnown}` : `synced | height ${s.height}`;
  const da = `DA included ${s.daIncluded}, ${s.daPending} pending${atCap(s) ? ` (at the cap of ${s.maxPending})` : ''}`;
  const peers = `${s.peers} peer${s.peers === 1 ? '' : 's'}`;
  const e = s.lastError;
  const error = e
    ? `last error ${e.code} ${Math.max(0, Math.round((now - Date.parse(e.time)) / 1000))}s ago: ${e.msg}${e.detail ? ` (${e.detail})` : ''}`
    : 'no errors';
  return [sync, da, peers, error].join(' | ');
}

/** What, when it changes, is worth a line at once rather than at the next interval. */
function stateKey(s: StatusFields): string {
  const e = s.lastError;
  return JSON.stringify([s.catchingUp, s.peers, atCap(s), e && [e.code, e.msg, e.detail]]);
}

/**
 * Logs one info line with the node's status every `intervalMs` and whenever
 * catching_up flips, the peer count changes, DA pending reaches or leaves the
 * cap, or a new error is logged (after Lodestar's notifier).
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
