/**
 * Whether bytes are an EIP-2718 transaction as an execution client decodes
 * one: a legacy tx (an RLP list), or a type byte 0x01–0x04 (EIP-2930, 1559,
 * 4844, 7702) followed by an RLP list, the list filling the bytes exactly
 * (go-ethereum core/types/transaction.go, UnmarshalBinary; RLP as in the
 * yellow paper, appendix B). Forced txs that are not are gibberish: removed.
 */
export function isEthereumTx(tx: Uint8Array): boolean {
  if (tx.length === 0) return false;
  const first = tx[0]!;
  if (first >= 0xc0) return rlpListLength(tx, 0) === tx.length;
  if (first >= 0x01 && first <= 0x04) return tx.length > 1 && tx[1]! >= 0xc0 && rlpListLength(tx, 1) === tx.length - 1;
  return false;
}

/** Length of the RLP item at `at` (header and payload) whose payload is a list of well-formed items, or -1. */
function rlpListLength(b: Uint8Array, at: number): number {
  const item = rlpItem(b, at);
  if (!item || !item.list) return -1;
  for (let p = item.payload; p < item.end;) {
    const inner = rlpItem(b, p);
    if (!inner || inner.end > item.end) return -1;
    if (inner.list && rlpListLength(b, p) < 0) return -1;
    p = inner.end;
  }
  return item.end - at;
}

function rlpItem(b: Uint8Array, at: number): { list: boolean; payload: number; end: number } | null {
  if (at >= b.length) return null;
  const h = b[at]!;
  const sized = (list: boolean, lenOfLen: number) => {
    if (at + 1 + lenOfLen > b.length || b[at + 1] === 0) return null;
    let len = 0;
    for (let i = 0; i < lenOfLen; i++) len = len * 256 + b[at + 1 + i]!;
    const payload = at + 1 + lenOfLen;
    return payload + len <= b.length ? { list, payload, end: payload + len } : null;
  };
  if (h < 0x80) return { list: false, payload: at, end: at + 1 };
  if (h <= 0xb7) return at + 1 + (h - 0x80) <= b.length ? { list: false, payload: at + 1, end: at + 1 + (h - 0x80) } : null;
  if (h <= 0xbf) return sized(false, h - 0xb7);
  if (h <= 0xf7) return at + 1 + (h - 0xc0) <= b.length ? { list: true, payload: at + 1, end: at + 1 + (h - 0xc0) } : null;
  return sized(true, h - 0xf7);
}
