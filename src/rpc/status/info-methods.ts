import { hostname } from 'node:os';
import { cometNodeId, nanosOfTimestamp } from '../../types/index.js';
import type { ChainView, StatusMethod } from './chain-view.js';
import { b64, hex, omitEmpty, rfc3339Nano } from './encoding.js';
import { internalError } from './jsonrpc.js';
import type { HaInfo, NodeInfo } from '../node-info.js';

/** A call to the ABCI app; an app that is down or broke the protocol is an internal error with the reason. */
async function fromApp<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw internalError((err as Error).message);
  }
}

/**
 * The node's DA figures for `node_info.other` of /status: the DA-included
 * height, and an aggregator's pending queue or how far a full node has read DA.
 */
function daOther(da: NodeInfo['da'] | null): Record<string, string> {
  if (!da) return {};
  const figures =
    da.mode === 'submit'
      ? { da_included_height: da.included_height, da_pending_blocks: da.pending_blocks, da_max_pending_blocks: da.max_pending_blocks }
      : { da_included_height: da.included_height, da_scan_height: da.scan_height, da_head_height: da.head_height, da_behind_blocks: da.behind_blocks };
  return Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, String(v)]));
}

/** An HA node's election, as strings in node_info.other like the DA figures: ha_node_id, ha_role, ha_leader ('' while nobody leads). */
function haOther(ha: HaInfo | null): Record<string, string> {
  return ha ? { ha_node_id: ha.node_id, ha_role: ha.role, ha_leader: ha.leader ?? '' } : {};
}

/** CometBFT's node and ABCI info methods (rpc/core/status.go, health.go, net.go, abci.go), and noded's node_info. */
export function infoMethods(view: ChainView): Record<string, StatusMethod> {
  const b = view.backend;
  return {
    health: { args: [], call: async () => ({}) },

    // noded's own, not CometBFT's: the dashboard's view of the node (NodeInfo).
    node_info: { args: [], call: async () => b.info() },

    status: {
      args: [],
      async call() {
        const state = b.state();
        const latest = await view.blockAt(state.lastBlockHeight);
        const earliestHeight = view.base();
        const earliest = await view.blockAt(earliestHeight);
        return {
          node_info: {
            protocol_version: { p2p: '8', block: '11', app: '0' },
            id: cometNodeId(b.nodeKey.publicKey),
            listen_addr: b.netInfo().listen_addresses[0] ?? '',
            network: b.chainId,
            // CosmJS picks its client by this prefix; the node speaks CometBFT 0.38's RPC.
            version: `0.38.0+noded-${b.version}`,
            channels: '',
            moniker: hostname() || 'noded',
            // Every committed tx is indexed by hash (the `tx` method). noded's own DA figures go here too, as strings like CometBFT's.
            other: { tx_index: 'on', rpc_address: `tcp://${b.statusAddress}`, ...daOther(b.daInfo()), ...haOther(b.haInfo()) },
          },
          sync_info: {
            latest_block_hash: latest ? hex(latest.hash) : '',
            latest_app_hash: hex(state.appHash),
            latest_block_height: state.lastBlockHeight.toString(),
            latest_block_time: rfc3339Nano(nanosOfTimestamp(state.lastBlockTime)),
            earliest_block_hash: earliest ? hex(earliest.hash) : '',
            earliest_app_hash: earliest ? hex(earliest.block.header!.header!.appHash) : '',
            earliest_block_height: earliestHeight.toString(),
            earliest_block_time: earliest ? rfc3339Nano(earliest.block.header!.header!.time) : rfc3339Nano(nanosOfTimestamp(state.lastBlockTime)),
            catching_up: b.catchingUp(),
          },
          validator_info: {
            address: hex(b.signer.address),
            pub_key: { type: 'tendermint/PubKeyEd25519', value: b64(b.signer.publicKey) },
            voting_power: b.aggregator ? '1' : '0',
          },
        };
      },
    },

    net_info: {
      args: [],
      // CometBFT's /net_info shape, with libp2p ids and multiaddrs in place of Comet's.
      async call() {
        const net = b.netInfo();
        return {
          listening: net.listen_addresses.length > 0,
          listeners: net.listen_addresses,
          n_peers: String(net.connected_peers.length),
          peers: net.connected_peers.map((p) => ({
            node_info: { id: p.id, listen_addr: p.address, network: b.chainId, moniker: p.id },
            remote_ip: p.address.split('/')[2] ?? '',
          })),
        };
      },
    },

    abci_info: {
      args: [],
      // The ABCI app's Info (execution.type abci), else the node's own height and state root, as ResponseInfo.
      async call() {
        if (!b.abci) {
          const s = b.state();
          return { response: omitEmpty({ data: 'noded', version: b.version, last_block_height: s.lastBlockHeight, last_block_app_hash: s.appHash }) };
        }
        const abci = b.abci;
        const info = await fromApp(() => abci.info());
        return {
          response: omitEmpty({
            data: info.data,
            version: info.version,
            app_version: info.appVersion,
            last_block_height: info.lastBlockHeight,
            last_block_app_hash: info.lastBlockAppHash,
          }),
        };
      },
    },

    abci_query: {
      args: ['path', 'data', 'height', 'prove'],
      async call(params) {
        const abci = b.abci;
        if (!abci) throw internalError('abci_query needs an ABCI app (execution.type abci); a kv node serves GET /kv/<key> on its RPC listener');
        const height = params.int('height') ?? 0n;
        if (height < 0n) throw internalError(`height must be non-negative, got ${height}`);
        const request = { path: params.string('path'), data: params.bytes('data', 'hex') ?? new Uint8Array(0), height, prove: params.bool('prove') };
        const r = await fromApp(() => abci.query(request));
        // ResponseQuery (abci/types.pb.go): zero fields left out; proof_ops when the app gave one.
        return {
          response: omitEmpty({
            code: r.code,
            log: r.log,
            info: r.info,
            index: r.index,
            key: r.key,
            value: r.value,
            proof_ops: r.proofOps ? { ops: r.proofOps.ops.map((op) => ({ type: op.type, key: b64(op.key), data: b64(op.data) })) } : null,
            height: r.height,
            codespace: r.codespace,
          }),
        };
      },
    },
  };
}
