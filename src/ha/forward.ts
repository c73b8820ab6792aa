import type { ResponseCheckTx } from 'cosmjs-types/tendermint/abci/types';
import { CheckTxRejectedError, TxBackpressureError, TxRejectedError } from '../exec/index.js';
import { FORWARDED_HEADER, abciTypes } from '../rpc/index.js';
import type { LeaderInfo } from './keys.js';

/**
 * A follower's txs go to the leader (issue 20, item 5): POST <leader rpc>/tx
 * with the same bytes, and the leader's answer becomes this node's, the app's
 * CheckTx answer included (broadcast_tx_sync carries it). The
 * FORWARDED_HEADER marks a forwarded tx so a node that no longer leads refuses
 * it (503, retry) rather than forwarding it on: two nodes with stale views of
 * each other would otherwise pass a tx back and forth.
 *
 * `POST /tx?wait=commit` and broadcast_tx_commit on a follower forward the tx
 * without a wait and then wait on the FOLLOWER's own chain (rpc-server.ts,
 * tx-methods.ts: the commit waiter is set before the tx is forwarded). That is
 * the stronger answer: the block holding the tx was fenced in etcd before the
 * leader committed it (so every later leader holds it: never lost across a
 * failover), and this node holds it too, so the sender reads its own write
 * here, tx_result included. Waiting on the leader instead would answer before
 * this node holds the block, and lose the answer when the leader dies in between.
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
 * Hands a tx to `leader`; resolves once the leader has kept it, with the app's
 * CheckTx answer when it gave one, or throws the leader's refusal
 * (CheckTxRejectedError with the app's answer, or TxRejectedError with its
 * status) or, when there is no leader to ask, TxBackpressureError (503 + Retry-After).
 */
export async function forwardTx(leader: LeaderInfo | null, tx: Uint8Array, opts: ForwardOptions): Promise<ResponseCheckTx | undefined> {
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
  let answer: { error?: string; check_tx?: unknown } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // Not the leader's JSON (a proxy's page, say): its text is the message.
  }
  const check = answer.check_tx === undefined ? undefined : (await abciTypes()).ResponseCheckTx.fromJSON(answer.check_tx);
  if (res.ok) return check;
  if (check) throw new CheckTxRejectedError(check);
  const message = `the HA leader ${leader.node_id} refused the forwarded tx: ${answer.error ?? text.slice(0, 500)}`;
  if (res.status === 503) throw new TxBackpressureError(message, Number(res.headers.get('retry-after')) || opts.retryAfterSeconds);
  throw new TxRejectedError(message, res.status);
}
