import { TxBackpressureError, TxRejectedError } from '../exec/index.js';
import { FORWARDED_HEADER } from '../rpc/index.js';
import type { LeaderInfo } from './keys.js';

/**
 * A follower's txs go to the leader (issue 20, item 5): POST <leader rpc>/tx
 * with the same bytes, and the leader's answer becomes this node's. The
 * FORWARDED_HEADER marks a forwarded tx so a node that no longer leads refuses
 * it (503, retry) rather than forwarding it on: two nodes with stale views of
 * each other would otherwise pass a tx back and forth.
 */
/** How long a forwarded tx waits for the leader's answer (the leader answers once its store keeps the tx). */
const FORWARD_TIMEOUT_MS = 10_000;

export interface ForwardOptions {
  /** This node's id, sent in FORWARDED_HEADER. */
  from: string;
  /** The tx came forwarded from another node: do not forward it again. */
  forwarded: boolean;
  /** Retry-After when no leader takes it now: about one lease TTL, the time an election takes. */
  retryAfterSeconds: number;
}

/**
 * Hands a tx to `leader`; resolves once the leader has kept it, or throws the
 * leader's refusal (TxRejectedError with its status) or, when there is no
 * leader to ask, TxBackpressureError (503 + Retry-After).
 */
export async function forwardTx(leader: LeaderInfo | null, tx: Uint8Array, opts: ForwardOptions): Promise<void> {
  const retry = (reason: string) => new TxBackpressureError(`${reason}; send the tx again in a moment`, opts.retryAfterSeconds);
  if (opts.forwarded) throw retry(`this HA node does not lead (the tx was forwarded here by ${opts.from} with a stale view of who leads)`);
  if (!leader) throw retry('this HA node follows and no leader is known to forward the tx to (an election is under way)');
  let res: Response;
  try {
    res = await fetch(`${leader.rpc}/tx`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', [FORWARDED_HEADER]: opts.from },
      body: tx,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
  } catch (err) {
    throw retry(`the HA leader ${leader.node_id} at ${leader.rpc} did not answer the forwarded tx (${(err as Error).message})`);
  }
  const text = await res.text().catch(() => '');
  if (res.ok) return;
  let message = text.slice(0, 500);
  try {
    message = (JSON.parse(text) as { error?: string }).error ?? message;
  } catch {
    // Not the leader's JSON (a proxy's page, say): its text as it is.
  }
  message = `the HA leader ${leader.node_id} refused the forwarded tx: ${message}`;
  if (res.status === 503) throw new TxBackpressureError(message, Number(res.headers.get('retry-after')) || opts.retryAfterSeconds);
  throw new TxRejectedError(message, res.status);
}
