/**
 * An ev-node client calls every StoreService, P2PService and ConfigService
 * method of running `noded start` processes, over Connect (binary) and gRPC.
 * The client is generated from ev-node's own proto files (test/fixtures/evnode-proto,
 * copied from evstack/ev-node 74eccbace with the package renamed to node.v1);
 * nothing of noded is used to call or decode, so a field noded writes under
 * another number or type than ev-node reads shows up as a wrong or missing value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toBinary } from '@bufbuild/protobuf';
import { createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { ConfigService } from '../fixtures/evnode-proto/gen/evnode/v1/config_pb.js';
import { DataSchema, HeaderSchema } from '../fixtures/evnode-proto/gen/evnode/v1/evnode_pb.js';
import { P2PService } from '../fixtures/evnode-proto/gen/evnode/v1/p2p_rpc_pb.js';
import { StoreService } from '../fixtures/evnode-proto/gen/evnode/v1/state_rpc_pb.js';
import { Daemon, freePort, killAll, latestHeight, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';

const homes = new Homes();
let aggregator: Daemon;
let peer: Daemon;
const GENESIS_DA_HEIGHT = 5n;

beforeAll(async () => {
  const chain = await homes.chain('evnode-client');
  // A non-zero genesis DA height, so its field number shows on the wire (a zero is not written).
  for (const home of [chain.aggregator, ...chain.full]) {
    const file = join(home, 'config', 'genesis.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), da_start_height: Number(GENESIS_DA_HEIGHT) }));
  }
  aggregator = await Daemon.start(chain.aggregator, ['--node.node.block_time', '200ms']);
  const noDa = ['--no-node.da.local', '--node.da.address', `http://127.0.0.1:${await freePort()}`, '--node.da.request_timeout', '1s'];
  peer = await Daemon.start(chain.full[0]!, [...noDa, '--node.p2p.peers', aggregator.p2p]);
  await waitFor(async () => (await latestHeight(peer.rpc)) >= 3, 'the peer at height 3', 20_000);
});

afterAll(async () => {
  await killAll();
  homes.cleanup();
});

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const peerIdOf = (address: string) => address.split('/p2p/')[1]!;
const equal = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

/** The raw ed25519 key in a libp2p-marshalled public key {Type: Ed25519, Data: 32 bytes} (go-libp2p crypto.MarshalPublicKey). */
function rawEd25519(marshalled: Uint8Array): Uint8Array {
  expect(Buffer.from(marshalled.subarray(0, 4)).toString('hex')).toBe('08011220');
  expect(marshalled.length).toBe(36);
  return marshalled.subarray(4);
}

const ed25519Verify = (raw: Uint8Array, message: Uint8Array, signature: Uint8Array) =>
  verify(null, message, createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' }), signature);

const transports = (baseUrl: string): Record<string, Transport> => ({
  'connect-binary': createConnectTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: true }),
  grpc: createGrpcTransport({ baseUrl }),
});

describe("ev-node's generated client against noded", () => {
  for (const protocol of ['connect-binary', 'grpc']) {
    it(`StoreService over ${protocol}: blocks, state, metadata, genesis DA height, P2P store info`, async () => {
      const store = createClient(StoreService, transports(aggregator.rpc)[protocol]!);
      const atHeight = (value: bigint) => store.getBlock({ identifier: { case: 'height', value } });
      const [b2, b3] = await Promise.all([atHeight(2n), atHeight(3n)]);
      const signed = b2.block!.header!;
      const header = signed.header!;
      expect(header.height).toBe(2n);
      expect(header.chainId).toBe('evnode-client');
      expect(header.version?.block).toBe(11n);
      expect(header.$unknown ?? []).toEqual([]); // nothing outside ev-node's fields (5, 7, 9 are reserved)
      // The signer: libp2p-marshalled key, address = sha256(raw key) = proposer; the signature over the header's bytes.
      const raw = rawEd25519(signed.signer!.pubKey);
      expect(equal(signed.signer!.address, sha256(raw))).toBe(true);
      expect(equal(header.proposerAddress, signed.signer!.address)).toBe(true);
      expect(ed25519Verify(raw, toBinary(HeaderSchema, header), signed.signature)).toBe(true);
      // The header hash and data hash chain as ev-node computes them.
      expect(equal(b3.block!.header!.header!.lastHeaderHash, sha256(toBinary(HeaderSchema, header)))).toBe(true);
      expect(equal(b3.block!.data!.metadata!.lastDataHash, sha256(Uint8Array.of(0), toBinary(DataSchema, b2.block!.data!)))).toBe(true);
      expect(equal(header.dataHash, sha256(Uint8Array.of(0), toBinary(DataSchema, { ...b2.block!.data!, metadata: undefined })))).toBe(true);
      const byHash = await store.getBlock({ identifier: { case: 'hash', value: sha256(toBinary(HeaderSchema, header)) } });
      expect(byHash.block?.header?.header?.height).toBe(2n);

      const { state } = await store.getState({});
      expect(state!.chainId).toBe('evnode-client');
      expect(state!.initialHeight).toBe(1n);
      expect(state!.lastBlockHeight).toBeGreaterThanOrEqual(3n);
      expect(state!.version?.block).toBe(11n);
      expect(equal(state!.nextProposerAddress, signed.signer!.address)).toBe(true);
      const last = await store.getBlock({ identifier: { case: 'height', value: state!.lastBlockHeight } });
      const lastHeader = last.block!.header!.header!;
      expect(equal(state!.lastHeaderHash, sha256(toBinary(HeaderSchema, lastHeader)))).toBe(true);
      // last_block_time is a Timestamp (field 5): the last header's nanoseconds.
      expect(state!.lastBlockTime!.seconds * 1_000_000_000n + BigInt(state!.lastBlockTime!.nanos)).toBe(lastHeader.time);
      expect(state!.appHash.length).toBeGreaterThan(0);
      expect(state!.$unknown ?? []).toEqual([]);

      expect((await store.getMetadata({ key: 'kv_state_root' })).value.length).toBeGreaterThan(0);
      expect((await store.getGenesisDaHeight({})).height).toBe(GENESIS_DA_HEIGHT);

      const { stores } = await store.getP2PStoreInfo({});
      expect(stores.map((s) => s.label)).toEqual(['Header Store', 'Data Store']);
      for (const s of stores) {
        expect(s.height).toBeGreaterThanOrEqual(3n);
        expect(s.head!.height).toBe(s.height);
        expect(s.tail!.height).toBe(1n);
        expect(s.head!.time!.seconds).toBeGreaterThan(0n);
      }
      const first = await store.getBlock({ identifier: { case: 'height', value: 1n } });
      expect(equal(stores[0]!.tail!.hash, sha256(toBinary(HeaderSchema, first.block!.header!.header!)))).toBe(true);
      expect(equal(stores[1]!.tail!.hash, sha256(Uint8Array.of(0), toBinary(DataSchema, first.block!.data!)))).toBe(true);
    });

    it(`P2PService and ConfigService over ${protocol}`, async () => {
      const p2p = createClient(P2PService, transports(peer.rpc)[protocol]!);
      const { netInfo } = await p2p.getNetInfo({});
      expect(netInfo!.id).toBe(peerIdOf(peer.p2p));
      expect(netInfo!.listenAddresses).toEqual([peer.p2p]);
      expect(netInfo!.connectedPeers).toEqual([peerIdOf(aggregator.p2p)]);
      const { peers } = await p2p.getPeerInfo({});
      expect(peers.map((p) => p.id)).toEqual([peerIdOf(aggregator.p2p)]);
      expect(peers[0]!.address).toMatch(new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/\\d+/p2p/${peerIdOf(aggregator.p2p)}$`));

      const config = createClient(ConfigService, transports(aggregator.rpc)[protocol]!);
      const namespaces = await config.getNamespace({});
      // Version-0 namespaces of the chain id (18 zero bytes of id, then 10 of sha256), 0x-prefixed as ev-node writes them.
      const v0 = (name: string) => `0x${'00'.repeat(19)}${Buffer.from(sha256(new TextEncoder().encode(name)).subarray(0, 10)).toString('hex')}`;
      expect(namespaces.headerNamespace).toBe(v0('evnode-client'));
      // Data shares the headers' namespace by default, as ev-node's GetDataNamespace falls back.
      expect(namespaces.dataNamespace).toBe(v0('evnode-client'));
      const signer = await config.getSignerInfo({});
      const store = createClient(StoreService, transports(aggregator.rpc)[protocol]!);
      const b1 = await store.getBlock({ identifier: { case: 'height', value: 1n } });
      expect(equal(signer.address, b1.block!.header!.header!.proposerAddress)).toBe(true);
      expect(signer.$unknown ?? []).toEqual([]);
    });
  }

  it('writes GetGenesisDaHeightResponse.height at field 3 and GetSignerInfoResponse.address at field 1 (raw bytes)', async () => {
    const call = async (path: string) => {
      const res = await fetch(`${aggregator.rpc}${path}`, { method: 'POST', headers: { 'content-type': 'application/proto' }, body: new Uint8Array(0) });
      expect(res.status).toBe(200);
      return new Uint8Array(await res.arrayBuffer());
    };
    expect(Buffer.from(await call('/node.v1.StoreService/GetGenesisDaHeight')).toString('hex')).toBe(`18${GENESIS_DA_HEIGHT.toString(16).padStart(2, '0')}`);
    const signer = await call('/node.v1.ConfigService/GetSignerInfo');
    expect(Buffer.from(signer.subarray(0, 2)).toString('hex')).toBe('0a20');
    expect(signer.length).toBe(34);
  });
});
