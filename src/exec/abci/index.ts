export { AbciClient, DEFAULT_CALL_TIMEOUT_MS, type AbciClientOptions } from './client.js';
export { AbciConnection, AbciProtocolError, AbciUnavailableError, parseAbciAddress, type ConnectionName } from './connection.js';
export { AbciExecutor, OutOfSyncError, type AbciExecutorOptions } from './executor.js';
export { CheckTxRejectedError } from '../executor.js';
export { FrameError, FrameReader, MAX_FRAME_BYTES, encodeFrame } from './framing.js';
export {
  FrameBatch,
  decodeRequest,
  decodeRequestOneof,
  decodeResponseOneof,
  encodeRequest,
  encodeResponse,
  methodName,
  setField,
  type Method,
  type RequestOf,
  type ResponseOf,
} from './messages.js';
export { AbciServer, type AbciApplication } from './server.js';
export { KvStoreApp, CODE_MALFORMED_TX, CODE_UNKNOWN_PATH } from './kvstore.js';
