export type { RpcBackend, BlockReads, HealthReport, CheckResult, PeerSummary } from './backend.js';
export type { FollowerDaInfo, HaInfo, NodeInfo, SubmitterDaInfo, SupervisedChildInfo } from './node-info.js';
export { RpcServer, MAX_REQUEST_BYTES } from './rpc-server.js';
export { StatusServer } from './status-server.js';
export { listen, listenerLimits, ListenError, type Listener, type ListenerLimits } from './listen.js';
export { accessPolicy, guardHandler, type AccessPolicy, type GuardedServer } from './guard.js';
export { readGetBlockJson, writeSpecJson } from './json.js';
export { instrumentHandler } from './instrument.js';
export { metricsHandler } from './metrics-server.js';
