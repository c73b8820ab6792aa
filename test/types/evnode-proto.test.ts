/**
 * node.v1 is ev-node's evnode.v1 with the package renamed and nothing else
 * (DESIGN.md §6). The tables below are facts read from ev-node's proto files
 * (evstack/ev-node 74eccbace, proto/evnode/v1/<file>); the test checks noded's
 * generated descriptors against them, so a drift in a field number, name, type,
 * label, reserved number or method fails here.
 */
import { ScalarType, type DescField, type DescFile, type DescMessage } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { file_node_v1_config, ConfigService } from '../../src/types/gen/node/v1/config_pb.js';
import { file_node_v1_node } from '../../src/types/gen/node/v1/node_pb.js';
import { file_node_v1_p2p_rpc, P2PService } from '../../src/types/gen/node/v1/p2p_rpc_pb.js';
import { file_node_v1_state } from '../../src/types/gen/node/v1/state_pb.js';
import { file_node_v1_state_rpc, StoreService } from '../../src/types/gen/node/v1/state_rpc_pb.js';

interface MessageFact {
  /** ev-node's file under proto/evnode/v1/. */
  source: string;
  /** `number name type`, type as in the .proto (`repeated`/`optional` prefixed, messages by short name). */
  fields: string[];
  reserved?: number[];
}

const MESSAGES: Record<string, MessageFact> = {
  Version: { source: 'evnode.proto', fields: ['1 block uint64', '2 app uint64'] },
  Header: {
    source: 'evnode.proto',
    fields: [
      '1 version Version',
      '2 height uint64',
      '3 time uint64',
      '4 last_header_hash bytes',
      '6 data_hash bytes',
      '8 app_hash bytes',
      '10 proposer_address bytes',
      '11 validator_hash bytes',
      '12 chain_id string',
    ],
    reserved: [5, 7, 9],
  },
  SignedHeader: { source: 'evnode.proto', fields: ['1 header Header', '2 signature bytes', '3 signer Signer'], reserved: [4] },
  DAHeaderEnvelope: {
    source: 'evnode.proto',
    fields: ['1 header Header', '2 signature bytes', '3 signer Signer', '4 envelope_signature bytes'],
  },
  Signer: { source: 'evnode.proto', fields: ['1 address bytes', '2 pub_key bytes'] },
  Metadata: { source: 'evnode.proto', fields: ['1 chain_id string', '2 height uint64', '3 time uint64', '4 last_data_hash bytes'] },
  Data: { source: 'evnode.proto', fields: ['1 metadata Metadata', '2 txs repeated bytes'] },
  SignedData: { source: 'evnode.proto', fields: ['1 data Data', '2 signature bytes', '3 signer Signer'] },
  Vote: {
    source: 'evnode.proto',
    fields: ['1 chain_id string', '2 height uint64', '3 timestamp Timestamp', '4 block_id_hash bytes', '5 validator_address bytes'],
  },
  P2PSignedHeader: {
    source: 'evnode.proto',
    fields: ['1 header Header', '2 signature bytes', '3 signer Signer', '4 da_height_hint optional uint64'],
  },
  P2PData: { source: 'evnode.proto', fields: ['1 metadata Metadata', '2 txs repeated bytes', '3 da_height_hint optional uint64'] },
  State: {
    source: 'state.proto',
    fields: [
      '1 version Version',
      '2 chain_id string',
      '3 initial_height uint64',
      '4 last_block_height uint64',
      '5 last_block_time Timestamp',
      '6 da_height uint64',
      '8 app_hash bytes',
      '9 last_header_hash bytes',
      '10 next_proposer_address bytes',
    ],
    reserved: [7],
  },
  RaftBlockState: {
    source: 'state.proto',
    fields: [
      '1 height uint64',
      '2 last_submitted_da_header_height uint64',
      '3 last_submitted_da_data_height uint64',
      '4 hash bytes',
      '5 timestamp uint64',
      '6 header bytes',
      '7 data bytes',
    ],
  },
  SequencerDACheckpoint: { source: 'state.proto', fields: ['1 da_height uint64', '2 tx_index uint64'] },
  Block: { source: 'state_rpc.proto', fields: ['1 header SignedHeader', '2 data Data'] },
  GetBlockRequest: { source: 'state_rpc.proto', fields: ['1 height uint64', '2 hash bytes'] },
  GetBlockResponse: { source: 'state_rpc.proto', fields: ['1 block Block', '2 header_da_height uint64', '3 data_da_height uint64'] },
  GetStateResponse: { source: 'state_rpc.proto', fields: ['1 state State'] },
  GetMetadataRequest: { source: 'state_rpc.proto', fields: ['1 key string'] },
  GetMetadataResponse: { source: 'state_rpc.proto', fields: ['1 value bytes'] },
  GetGenesisDaHeightResponse: { source: 'state_rpc.proto', fields: ['3 height uint64'] },
  P2PStoreEntry: { source: 'state_rpc.proto', fields: ['1 height uint64', '2 hash bytes', '3 time Timestamp'] },
  P2PStoreSnapshot: { source: 'state_rpc.proto', fields: ['1 label string', '2 height uint64', '4 head P2PStoreEntry', '6 tail P2PStoreEntry'] },
  GetP2PStoreInfoResponse: { source: 'state_rpc.proto', fields: ['1 stores repeated P2PStoreSnapshot'] },
  GetPeerInfoResponse: { source: 'p2p_rpc.proto', fields: ['1 peers repeated PeerInfo'] },
  GetNetInfoResponse: { source: 'p2p_rpc.proto', fields: ['1 net_info NetInfo'] },
  PeerInfo: { source: 'p2p_rpc.proto', fields: ['1 id string', '2 address string'] },
  NetInfo: { source: 'p2p_rpc.proto', fields: ['1 id string', '2 listen_addresses repeated string', '3 connected_peers repeated string'] },
  GetNamespaceResponse: { source: 'config.proto', fields: ['1 header_namespace string', '2 data_namespace string'] },
  GetSignerInfoResponse: { source: 'config.proto', fields: ['1 address bytes'] },
};

/** `Method(Input) Output` per service. */
const SERVICES: Record<string, { source: string; methods: string[] }> = {
  StoreService: {
    source: 'state_rpc.proto',
    methods: [
      'GetBlock(GetBlockRequest) GetBlockResponse',
      'GetState(Empty) GetStateResponse',
      'GetMetadata(GetMetadataRequest) GetMetadataResponse',
      'GetGenesisDaHeight(Empty) GetGenesisDaHeightResponse',
      'GetP2PStoreInfo(Empty) GetP2PStoreInfoResponse',
    ],
  },
  P2PService: { source: 'p2p_rpc.proto', methods: ['GetPeerInfo(Empty) GetPeerInfoResponse', 'GetNetInfo(Empty) GetNetInfoResponse'] },
  ConfigService: { source: 'config.proto', methods: ['GetNamespace(Empty) GetNamespaceResponse', 'GetSignerInfo(Empty) GetSignerInfoResponse'] },
};

const shortName = (typeName: string) => typeName.slice(typeName.lastIndexOf('.') + 1);
const SCALAR_NAMES: Partial<Record<ScalarType, string>> = {
  [ScalarType.UINT64]: 'uint64',
  [ScalarType.INT64]: 'int64',
  [ScalarType.BYTES]: 'bytes',
  [ScalarType.STRING]: 'string',
};

function fieldFact(f: DescField): string {
  const element = f.message ? shortName(f.message.typeName) : f.enum ? shortName(f.enum.typeName) : (SCALAR_NAMES[f.scalar] ?? `scalar ${f.scalar}`);
  const label = f.fieldKind === 'list' ? 'repeated ' : f.proto.proto3Optional ? 'optional ' : '';
  return `${f.number} ${f.name} ${label}${element}`;
}

const reservedNumbers = (m: DescMessage) => m.proto.reservedRange.flatMap((r) => Array.from({ length: r.end - r.start }, (_, i) => r.start + i));

const FILES: Record<string, DescFile> = {
  'evnode.proto': file_node_v1_node,
  'state.proto': file_node_v1_state,
  'state_rpc.proto': file_node_v1_state_rpc,
  'p2p_rpc.proto': file_node_v1_p2p_rpc,
  'config.proto': file_node_v1_config,
};

describe("node.v1 = ev-node's evnode.v1, renamed", () => {
  const ours = new Map(Object.entries(FILES).flatMap(([source, file]) => file.messages.map((m) => [shortName(m.typeName), { source, m }] as const)));

  it('has exactly the messages of the table, each in the package node.v1 and the file ev-node keeps it in', () => {
    expect([...ours.keys()].sort()).toEqual(Object.keys(MESSAGES).sort());
    for (const [name, { source, m }] of ours) {
      expect(m.typeName, name).toBe(`node.v1.${name}`);
      expect(source, name).toBe(MESSAGES[name]!.source);
    }
  });

  for (const [name, fact] of Object.entries(MESSAGES)) {
    it(`${name} has ev-node's fields (proto/evnode/v1/${fact.source})`, () => {
      const m = ours.get(name)!.m;
      expect(m.fields.map(fieldFact)).toEqual(fact.fields);
      expect(reservedNumbers(m)).toEqual(fact.reserved ?? []);
    });
  }

  it('GetBlockRequest selects by height or hash in the oneof identifier (state_rpc.proto)', () => {
    const oneof = ours.get('GetBlockRequest')!.m.oneofs;
    expect(oneof.map((o) => [o.name, o.fields.map((f) => f.name)])).toEqual([['identifier', ['height', 'hash']]]);
  });

  for (const [service, fact] of Object.entries(SERVICES)) {
    it(`${service} has ev-node's methods (proto/evnode/v1/${fact.source})`, () => {
      const desc = { StoreService, P2PService, ConfigService }[service]!;
      expect(desc.typeName).toBe(`node.v1.${service}`);
      expect(desc.methods.map((m) => `${m.name}(${shortName(m.input.typeName)}) ${shortName(m.output.typeName)}`)).toEqual(fact.methods);
      expect(desc.methods.every((m) => m.methodKind === 'unary')).toBe(true);
    });
  }
});
