import { Pool } from 'undici';

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
const CONNECTIONS = 800;

/**
 * Open-loop load: sends POST /tx?wait=commit on a fixed schedule (ratePerSecond),
 * never waiting for an answer before the next send, so a slow node meets the
 * same offered load instead of a politer client (no coordinated omission).
 * Each answer comes once the tx's block is committed: its time from the send
 * is the commit latency the sender feels, measured without a poll of its own.
 */
export async function postOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  const pool = new Pool(spec.origin, { connections: CONNECTIONS, pipelining: 1 });
  const result: OpenLoopResult = { txs: [], refused: 0, dropped: 0 };
  const refuse = (what: string) => {
    result.refused++;
    result.firstRefusal ??= what;
  };
  const tx = (i: number) => {
    const bytes = Buffer.alloc(spec.txBytes, 'v');
    bytes.write(`${spec.tag}-${i}=`);
    return bytes;
  };
  const post = async (i: number) => {
    const body = tx(i);
    const sentAt = performance.now();
    try {
      const res = await pool.request({ path: '/tx?wait=commit', method: 'POST', body });
      const text = await res.body.text();
      if (res.statusCode !== 200) return refuse(`HTTP ${res.statusCode} ${text}`);
      result.txs.push({ index: i, sentAt, commitMs: performance.now() - sentAt, height: (JSON.parse(text) as { height: number }).height });
    } catch (err) {
      refuse((err as Error).message);
    }
  };
  // Only the unanswered ones are held: a ten-minute soak sends over a million.
  const inFlight = new Set<Promise<void>>();
  const send = (i: number) => {
    // A node that falls behind would otherwise pile up an unbounded queue in this client (and a run that never
    // ends): past CONNECTIONS unanswered, a send is counted as dropped instead.
    if (inFlight.size >= CONNECTIONS) {
      result.dropped++;
      return;
    }
    const p = post(i).finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const total = Math.round((spec.ratePerSecond * spec.durationMs) / 1000);
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    // Every tx due by now goes out at once; a timer of 1 ms between looks keeps the schedule within a few ms.
    const due = Math.min(total, Math.floor(((performance.now() - start) * spec.ratePerSecond) / 1000) + 1);
    for (; sent < due; sent++) send(sent);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all([...inFlight]);
  await pool.close();
  return result;
}

/** The p-th percentile (0–100) of `values`, nearest rank; NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
