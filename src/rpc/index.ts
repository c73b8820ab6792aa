export type { RpcBackend, HealthReport, CheckResult } from './backend.js';
export { RpcServer, MAX_REQUEST_BYTES } from './rpc-server.js';
export { StatusServer, rfc3339Nano } from './status-server.js';
export { listen, ListenError, type Listener } from './listen.js';
export { writeSpecJson } from './json.js';
