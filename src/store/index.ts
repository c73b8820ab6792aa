export {
  BlockStore,
  STORE_FORMAT_VERSION,
  StoreFormatError,
  StoreLockedError,
  decodeStoredBlock,
  emptyState,
  writeOps,
  type StoreOp,
  type StoredBlock,
  type TxLocation,
} from './store.js';
export { Bucket, MetadataKey, bucketKey, bucketKeysOf, heightKey, stringKey, heightBytes, readHeight } from './buckets.js';
