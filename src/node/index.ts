export { Node, type NodeOptions } from './node.js';
export { nodeInfo } from './info.js';
export { logSecrets } from './secrets.js';
export { runDaemon, type DaemonOptions } from './daemon.js';
export { Chain } from './chain.js';
export { BlockProducer } from './producer.js';
