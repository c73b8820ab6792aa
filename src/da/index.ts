export { DaClient, submitOptions, type Blob, type BlobApi, type DaClientOptions, type GasSettings } from './client.js';
export { DaError, DA_REMEDY, classifyDaMessage, type DaDelivery, type DaFailureReason } from './errors.js';
export { DaCache, clearCache, type DaCacheState, type PendingSubmission } from './cache.js';
export {
  DaSubmitter,
  recordDaFailure,
  recordDaSuccess,
  span,
  type SubmitterOptions,
  type SubmitterStatus,
  type DaActivity,
  type SharedSubmissions,
} from './submitter.js';
export { DaRetriever, type BlockSink, type RetrieverOptions } from './retriever.js';
export { blockBlobs, blobCommitment, decodeDataBlob, decodeHeaderBlob, type DaNamespaces } from './blobs.js';
export { DaMethod, DaErrorText, CELESTIA_MEMPOOL_TTL_BLOCKS, type TxConfig, type WireBlob, type SyncState, type Balance } from './types.js';
export { LocalDa, LocalDaError, type DaFaults, type DaSubmission, type LocalDaOptions } from './local/index.js';
