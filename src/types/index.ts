export * from './keys.js';
export * from './block.js';
export * from './time.js';
export * from './gen/node/v1/node_pb.js';
export * from './gen/node/v1/state_pb.js';
export * from './gen/node/v1/state_rpc_pb.js';
export * from './gen/node/v1/config_pb.js';
export * from './gen/node/v1/p2p_rpc_pb.js';
