import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { GetNetInfoResponseSchema, GetPeerInfoResponseSchema, NetInfoSchema, PeerInfoSchema, type P2PService } from '../types/index.js';
import type { RpcBackend } from './backend.js';

/** node.v1.P2PService: the node's peers and its own place in the network. */
export function p2pService(b: RpcBackend): ServiceImpl<typeof P2PService> {
  return {
    async getPeerInfo() {
      return create(GetPeerInfoResponseSchema, { peers: b.netInfo().connected_peers.map((p) => create(PeerInfoSchema, p)) });
    },
    async getNetInfo() {
      const net = b.netInfo();
      return create(GetNetInfoResponseSchema, {
        netInfo: create(NetInfoSchema, {
          id: net.id,
          listenAddresses: net.listen_addresses,
          // Peer ids, as ev-node's NetworkInfo.ConnectedPeers (pkg/p2p/client.go).
          connectedPeers: net.connected_peers.map((p) => p.id),
        }),
      });
    },
  };
}
