export * from './keys.js';
export * from './block.js';
export * from './gen/node/v1/types_pb.js';
export * from './gen/node/v1/store_pb.js';
export * from './gen/node/v1/config_pb.js';
export * from './gen/node/v1/p2p_pb.js';
