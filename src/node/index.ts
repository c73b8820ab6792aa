export { Node, type NodeOptions } from './node.js';
export { nodeInfo } from './info.js';
export { logSecrets } from './secrets.js';
export { runDaemon, type DaemonOptions } from './daemon.js';
export { Chain } from './chain.js';
export { BlockProducer } from './producer.js';
export { BlockIntake } from './intake.js';
export { GenesisGuard } from './genesis-guard.js';
export {
  buildChain,
  buildComponents,
  buildProducer,
  buildRetriever,
  buildSubmitter,
  chainNamespaces,
  openExecution,
  type Closers,
  type CoreComponents,
  type CoreParts,
} from './parts.js';
// Not ./ha.js: its etcd client (etcd3, gRPC, protobufjs) loads only for ha.enabled (node.ts imports it then); import it from './ha.js'.
