/**
 * What FilterTxs says of each tx (ev-node core/execution/execution.go,
 * FilterStatus): it goes in the next batch, it is invalid and dropped for
 * good, or it is valid but waits for a later batch (the cumulative byte or gas
 * limit would be passed).
 */
export enum FilterStatus {
  ok = 0,
  remove = 1,
  postpone = 2,
}

/**
 * FilterTxs for a layer without gas (ev-node's rule for maxGas 0): each tx is
 * judged by `valid`; a tx bigger than maxBytes on its own can never fit and is
 * removed; the others are taken in order until the cumulative size would pass
 * maxBytes, and postponed from there (0 = no size limit).
 */
export async function filterBySize(txs: Uint8Array[], maxBytes: number, valid: (tx: Uint8Array) => boolean | Promise<boolean>): Promise<FilterStatus[]> {
  const out: FilterStatus[] = [];
  let used = 0;
  for (const tx of txs) {
    if (!(await valid(tx)) || (maxBytes > 0 && tx.length > maxBytes)) {
      out.push(FilterStatus.remove);
    } else if (maxBytes > 0 && used + tx.length > maxBytes) {
      out.push(FilterStatus.postpone);
    } else {
      used += tx.length;
      out.push(FilterStatus.ok);
    }
  }
  return out;
}
