import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** One tx's POST /tx?wait=commit: when it was sent, how long until its block was committed, and that block's height. */
export interface TxTiming {
  /** Its place in the schedule: the tx's key is `<tag>-<index>`. */
  index: number;
  sentAt: number;
  commitMs: number;
  height: number;
}

export interface OpenLoopResult {
  txs: TxTiming[];
  /** Answers other than 200 (503 backpressure, transport errors), with the first one's words. */
  refused: number;
  firstRefusal?: string;
  /** Sends skipped because CONNECTIONS requests were unanswered: the node fell behind the offered load. */
  dropped: number;
  /** The sender's own event-loop delay over the run: a stall there adds to the txs' times without being the node's. */
  senderLoopDelay: { p99Ms: number; maxMs: number };
  /**
   * The share of the run in which some task on the machine waited for a CPU (Linux PSI, /proc/pressure/cpu
   * "some"); null where the kernel has none. A busy host stalls the node and the sender alike.
   */
  cpuPressure: number | null;
}

export interface OpenLoopSpec {
  /** http://host:port of the node's RPC listener. */
  origin: string;
  ratePerSecond: number;
  durationMs: number;
  txBytes: number;
  /** Keeps txs distinct between calls on the same chain. */
  tag: string;
}

/** The most requests the client keeps in flight (rate × commit latency, with room); below the node's rpc.max_connections (1000). */
export const CONNECTIONS = 800;

/** What the sender worker (open-loop-sender.ts) hands back: per send (by index), NaN where it got no 200. */
export interface SenderReport {
  /** The worker's performance.timeOrigin: its performance.now() times are from it. */
  timeOrigin: number;
  sentAt: Float64Array;
  commitMs: Float64Array;
  height: Float64Array;
  refused: number;
  firstRefusal?: string;
  dropped: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/**
 * Open-loop load: sends POST /tx?wait=commit on a fixed schedule (ratePerSecond),
 * never waiting for an answer before the next send, so a slow node meets the
 * same offered load instead of a politer client (no coordinated omission).
 * Each answer comes once the tx's block is committed: its time from the send
 * is the commit latency the sender feels, measured without a poll of its own.
 * The sender runs in a worker thread (open-loop-sender.ts), clear of this
 * thread's own work; `sentAt` is turned into this thread's performance.now().
 */
export async function postOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  const [stalledBefore, from] = [cpuStalledMicros(), performance.now()];
  const worker = new Worker(new URL('./open-loop-sender.js', import.meta.url), { workerData: spec });
  const report = await new Promise<SenderReport>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`open-loop sender exited with ${code} before reporting`)));
  }).finally(() => worker.terminate());
  const stalledAfter = cpuStalledMicros();
  const cpuPressure = stalledBefore === null || stalledAfter === null ? null : (stalledAfter - stalledBefore) / 1000 / (performance.now() - from);
  const shift = report.timeOrigin - performance.timeOrigin;
  const txs: TxTiming[] = [];
  for (let i = 0; i < report.sentAt.length; i++) {
    if (Number.isNaN(report.commitMs[i]!)) continue;
    txs.push({ index: i, sentAt: report.sentAt[i]! + shift, commitMs: report.commitMs[i]!, height: report.height[i]! });
  }
  const { refused, firstRefusal, dropped, loopDelayP99Ms, loopDelayMaxMs } = report;
  return {
    txs,
    refused,
    ...(firstRefusal !== undefined ? { firstRefusal } : {}),
    dropped,
    senderLoopDelay: { p99Ms: loopDelayP99Ms, maxMs: loopDelayMaxMs },
    cpuPressure,
  };
}

/** Microseconds since boot in which some task waited for a CPU (the "some" line of /proc/pressure/cpu), or null without PSI. */
function cpuStalledMicros(): number | null {
  try {
    const total = /^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1];
    return total === undefined ? null : Number(total);
  } catch {
    return null;
  }
}

/** The p-th percentile (0–100) of `values`, nearest rank; NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
