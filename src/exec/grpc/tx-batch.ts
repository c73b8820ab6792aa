import { create } from '@bufbuild/protobuf';
import { TxBatchSchema, type TxBatch } from '../../types/gen/node/v1/execution_pb.js';

/** Largest tx a TxBatch can hold: its sizes are uint32 (ev-node execution/grpc/tx_batch.go, maxTxBatchTxSize). */
const MAX_TX_BYTES = 0xffff_ffff;

/** Txs as one contiguous buffer and their sizes, as ev-node's encodeTxBatch writes them (execution/grpc/tx_batch.go). */
export function encodeTxBatch(txs: Uint8Array[]): TxBatch {
  const sizes = txs.map((tx, i) => {
    if (tx.length > MAX_TX_BYTES) throw new Error(`tx ${i} is ${tx.length} bytes; a tx batch holds txs up to ${MAX_TX_BYTES}`);
    return tx.length;
  });
  return create(TxBatchSchema, { data: txs.length ? Buffer.concat(txs) : new Uint8Array(0), txSizes: sizes });
}

/**
 * The txs of a TxBatch, refused as ev-node's decodeTxBatch refuses them: sizes
 * that overrun the data, or data left over. An absent batch is no txs.
 */
export function decodeTxBatch(batch: TxBatch | undefined): Uint8Array[] {
  if (!batch) return [];
  const { data, txSizes } = batch;
  if (txSizes.length === 0) {
    if (data.length !== 0) throw new Error(`tx batch has ${data.length} data bytes but no tx sizes`);
    return [];
  }
  const txs: Uint8Array[] = [];
  let offset = 0;
  for (const [i, size] of txSizes.entries()) {
    if (offset + size > data.length) throw new Error(`tx sizes exceed data length at index ${i}`);
    txs.push(data.subarray(offset, offset + size));
    offset += size;
  }
  if (offset !== data.length) throw new Error(`tx sizes total ${offset} does not match data length ${data.length}`);
  return txs;
}
