import type { DaClient } from '../da/index.js';
import type { Epoch } from './epoch.js';

/** An epoch's forced txs as DA holds them. */
export interface EpochTxs {
  epoch: Epoch;
  /** Every non-empty blob of the forced-inclusion namespace in the epoch, in DA order: each blob is one tx. */
  txs: Uint8Array[];
  /** Time of the epoch's last DA block (Unix ns), when asked for: based blocks are dated from it. */
  endTime?: bigint;
}

/**
 * Reads one whole epoch of the forced-inclusion namespace, height by height,
 * as ev-node's forced-inclusion retriever does (block/internal/da/forced_inclusion_retriever.go):
 * each blob is the raw bytes of one tx (apps/evm/server/force_inclusion.go
 * submits `[][]byte{txData}`), empty blobs are skipped. The caller asks only
 * once DA's head has reached the epoch's end.
 */
export async function readEpoch(
  da: DaClient,
  namespace: Uint8Array,
  epoch: Epoch,
  opts: { withEndTime?: boolean; signal?: AbortSignal } = {},
): Promise<EpochTxs> {
  const txs: Uint8Array[] = [];
  // DA heights start at 1; an epoch starting at 0 (da_start_height 0) has nothing there.
  for (let h = epoch.start > 0n ? epoch.start : 1n; h <= epoch.end; h++) {
    for (const blob of await da.getAll(h, [namespace], opts.signal)) if (blob.data.length > 0) txs.push(blob.data);
  }
  return { epoch, txs, ...(opts.withEndTime ? { endTime: await da.blockTime(epoch.end, opts.signal) } : {}) };
}
