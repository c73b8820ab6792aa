export type { RpcBackend, HealthReport, CheckResult, PeerSummary } from './backend.js';
export type { FollowerDaInfo, NodeInfo, SubmitterDaInfo, SupervisedChildInfo } from './node-info.js';
export { RpcServer, MAX_REQUEST_BYTES } from './rpc-server.js';
export { StatusServer } from './status-server.js';
export { listen, ListenError, type Listener } from './listen.js';
export { readGetBlockJson, writeSpecJson } from './json.js';
export { instrumentHandler } from './instrument.js';
export { metricsHandler } from './metrics-server.js';
