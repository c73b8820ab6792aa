/**
 * P2P (DESIGN.md §9): the libp2p host, peer addresses, block gossip and
 * catch-up over `/node/<chain_id>/blocks/1.0.0`.
 */
import '../util/polyfill.js';

export {
  P2PHost,
  MAX_GOSSIP_MESSAGE_BYTES,
  headerTopic,
  dataTopic,
  blocksProtocol,
  headProtocol,
  type P2PHostOptions,
  type RedialOptions,
  type PeerInfo,
  type NetInfo,
  type P2PNode,
  type P2PServices,
} from './host.js';
export { BlockGossip, proposerHeaderValidator, type BlockGossipOptions, type HeaderValidator } from './gossip.js';
export {
  BlockSync,
  MAX_BLOCKS_PER_RESPONSE,
  MAX_RESPONSE_BYTES,
  type BlockSource,
  type BlockSyncOptions,
  type EncodedBlockAt,
  type EncodedBlockSource,
} from './sync.js';
export { CatchUp, type CatchUpOptions, type CatchUpResult } from './catchup.js';
export { serialSink, type BlockSink } from './sink.js';
export { ProtocolError } from './codec.js';
export { P2PNetwork, type P2PNetworkOptions } from './network.js';
