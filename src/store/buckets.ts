/**
 * Every LevelDB key starts with one of these bytes. Values are never reused:
 * a retired bucket keeps its number, commented as retired.
 */
export enum Bucket {
  /** height (8 bytes BE) → Block protobuf */
  block = 0x01,
  /** header hash (32 bytes) → height (8 bytes BE) */
  heightByHash = 0x02,
  /** (no suffix) → State protobuf of the last committed block */
  state = 0x03,
  /** utf-8 key → bytes: small named values (see MetadataKey) */
  metadata = 0x04,
  /** height (8 bytes BE) → header DA height (8 BE) ‖ data DA height (8 BE) */
  daHeights = 0x05,
  /** utf-8 key → value: the built-in key/value execution state */
  kvState = 0x06,
  /** height (8 bytes BE) → JSON of the EVM execution payload without its txs (they are the block's), for replay */
  evmPayload = 0x07,
  /** sha256 of a tx (32 bytes, CometBFT's tx hash) → height (8 BE) ‖ index in the block (4 BE): `tx` and the refusal of committed txs */
  txByHash = 0x08,
  /** height (8 bytes BE) → ResponseFinalizeBlock protobuf of an ABCI app, as CometBFT keeps it for block_results */
  finalizeBlockResponse = 0x09,
  /** height (8 bytes BE) → sha256 of the ExecuteTxs request (prev state root ‖ txs) (32) ‖ the state root after it: `noded exec serve`'s ledger */
  execLedger = 0x0a,
  /**
   * group number (8 bytes BE) → txs, each as length (4 BE) ‖ bytes: the txs an
   * aggregator acknowledged (one entry per group commit) that no committed
   * block holds yet, re-admitted to the mempool on start; a block's commit
   * deletes or rewrites the entries of its txs in its own batch (MempoolJournal).
   */
  mempoolTx = 0x0b,
  /**
   * height (8 bytes BE) → the proposer's signatures of the block's DA blobs,
   * made when the aggregator produced it: the header envelope's (64) ‖ the
   * data's (64, when the block has txs). Deleted once the block is on DA; a
   * block without them (synced, or made before) is signed at submission.
   */
  daSignatures = 0x0c,
}

/** Well-known keys of the metadata bucket. */
export enum MetadataKey {
  /** The kv machine's state root, committed with each block. */
  kvStateRoot = 'kv_state_root',
  /** DA height the chain reads from first (genesis da_start_height). */
  genesisDaHeight = 'genesis_da_height',
  /** Highest height whose header and data are both on DA (8 bytes BE). */
  daIncludedHeight = 'da_included_height',
  /** Format of the blocks and state this store holds (decimal text, see STORE_FORMAT_VERSION); absent in stores written before it. */
  storeFormatVersion = 'store_format_version',
  /** `noded exec serve`: JSON {chainId, initialHeight, stateRoot} of the InitChain it answered. */
  execGenesis = 'exec_genesis',
  /** `noded exec serve`: height of the last block it executed (8 bytes BE). */
  execHeight = 'exec_height',
  /**
   * The tx-hash index's filter (TxIndexFilter): the height it covers (8 bytes BE) ‖ the filter;
   * written with a block every million txs or so and on close; absent in stores written before it.
   */
  txFilter = 'tx_filter',
}

export function bucketKey(bucket: Bucket, suffix: Uint8Array = new Uint8Array(0)): Uint8Array {
  const key = new Uint8Array(1 + suffix.length);
  key[0] = bucket;
  key.set(suffix, 1);
  return key;
}

/**
 * Keys of one bucket, each a view of one shared buffer: a small buffer a key
 * is an allocation each, and a copy out of the JS heap each when LevelDB takes
 * it (1,000 keys a batch: ~10% of the batch's CPU time in a micro-benchmark).
 */
export function bucketKeysOf(bucket: Bucket, suffixes: Uint8Array[]): Uint8Array[] {
  let size = 0;
  for (const suffix of suffixes) size += 1 + suffix.length;
  const buffer = new Uint8Array(size);
  const keys: Uint8Array[] = [];
  let at = 0;
  for (const suffix of suffixes) {
    buffer[at] = bucket;
    buffer.set(suffix, at + 1);
    keys.push(buffer.subarray(at, at + 1 + suffix.length));
    at += 1 + suffix.length;
  }
  return keys;
}

export function heightBytes(height: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, height);
  return b;
}

export function readHeight(bytes: Uint8Array, offset = 0): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset);
}

export const heightKey = (bucket: Bucket, height: bigint) => bucketKey(bucket, heightBytes(height));
export const stringKey = (bucket: Bucket, key: string) => bucketKey(bucket, new TextEncoder().encode(key));
