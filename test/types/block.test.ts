import { describe, expect, it } from 'vitest';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  BlockSchema,
  DataSchema,
  Ed25519Key,
  HeaderSchema,
  InvalidBlockError,
  SignedHeaderSchema,
  buildBlock,
  buildEncodedBlock,
  encodeBlockAndData,
  encodeTxs,
  fullDataHash,
  headerHash,
  libp2pPeerId,
  sha256,
  splitEncodedBlock,
  txsHash,
  validateBlock,
  verifyEd25519,
  type Block,
} from '../../src/types/index.js';

const enc = new TextEncoder();
const signer = Ed25519Key.generate();

function block(height: bigint, lastHeaderHash: Uint8Array, txs: string[] = ['a=1', 'b=2']): Block {
  return buildBlock({
    chainId: 'test-1',
    height,
    time: 1_700_000_000_000_000_000n + height,
    txs: txs.map((t) => enc.encode(t)),
    lastHeaderHash,
    lastDataHash: new Uint8Array(32),
    appHash: new Uint8Array(32).fill(7),
    signer,
  });
}

const expectFor = (height: bigint, lastHeaderHash: Uint8Array) => ({ chainId: 'test-1', height, proposerAddress: signer.address, lastHeaderHash });

describe('blocks', () => {
  it('hashes as DESIGN.md §6 says', () => {
    const b = block(1n, new Uint8Array(0));
    const header = b.header!.header!;
    expect(headerHash(header)).toEqual(sha256(toBinary(HeaderSchema, header)));
    const txsOnly = toBinary(DataSchema, create(DataSchema, { txs: b.data!.txs }));
    expect(header.dataHash).toEqual(sha256(new Uint8Array([0]), txsOnly));
    expect(fullDataHash(b.data!)).toEqual(sha256(new Uint8Array([0]), toBinary(DataSchema, b.data!)));
    expect(b.header!.signer!.address).toEqual(sha256(signer.publicKey));
    expect(header.proposerAddress).toEqual(signer.address);
  });

  it('encodes blocks, their Data and their txs byte for byte as toBinary does', () => {
    const params = (txs: Uint8Array[]) => ({
      chainId: 'test-1',
      height: 3n,
      time: 5n,
      txs,
      lastHeaderHash: new Uint8Array(32),
      lastDataHash: new Uint8Array(32),
      appHash: new Uint8Array(32),
      signer,
    });
    // Tx lengths around the varint steps (1, 2 and 3 length bytes), and an empty tx.
    const txs = [0, 1, 127, 128, 16_383, 16_384, 70_000].map((n) => new Uint8Array(n).fill(n % 251));
    // Buffer.compare: a deep toEqual of 100 kB arrays takes a second.
    const same = (a: Uint8Array, b: Uint8Array) => expect(Buffer.compare(a, b)).toBe(0);
    for (const list of [txs, [], [enc.encode('a=1')]]) {
      same(encodeTxs(list), toBinary(DataSchema, create(DataSchema, { txs: list })));
      const built = buildEncodedBlock(params(list));
      same(built.bytes, toBinary(BlockSchema, built.block));
      same(built.data, toBinary(DataSchema, built.block.data!));
      expect(built.block.header!.header!.dataHash).toEqual(txsHash(list));
      const parts = splitEncodedBlock(built.bytes);
      same(parts.header, toBinary(SignedHeaderSchema, built.block.header!));
      same(parts.data, built.data);
    }
    // A block from elsewhere may carry fields this node does not know: they stay where toBinary puts them.
    const withUnknown = fromBinary(BlockSchema, Uint8Array.from([...toBinary(BlockSchema, block(1n, new Uint8Array(0))), 0x48, 0x01]));
    withUnknown.data!.$unknown = [{ no: 9, wireType: 0, data: Uint8Array.of(0x05) }];
    const encoded = encodeBlockAndData(withUnknown);
    same(encoded.bytes, toBinary(BlockSchema, withUnknown));
    same(encoded.data, toBinary(DataSchema, withUnknown.data!));
  });

  it('signs the header bytes with ed25519', () => {
    const b = block(1n, new Uint8Array(0));
    const bytes = toBinary(HeaderSchema, b.header!.header!);
    expect(verifyEd25519(signer.publicKey, bytes, b.header!.signature)).toBe(true);
    const tampered = Uint8Array.from(bytes);
    tampered[tampered.length - 1]! ^= 1;
    expect(verifyEd25519(signer.publicKey, tampered, b.header!.signature)).toBe(false);
  });

  it('verifies each signature against its own key, however many keys it has seen', () => {
    // More keys than verifyEd25519 keeps key objects for, each checked twice: the second time from its cache entry or a rebuilt one.
    const message = enc.encode('a header');
    const keys = Array.from({ length: 40 }, () => Ed25519Key.generate());
    for (let round = 0; round < 2; round++) {
      for (const [i, key] of keys.entries()) {
        const other = keys[(i + 1) % keys.length]!;
        expect(verifyEd25519(key.publicKey, message, key.sign(message))).toBe(true);
        expect(verifyEd25519(other.publicKey, message, key.sign(message))).toBe(false);
        // A key given as a view into a larger buffer is the same key.
        const view = new Uint8Array(64).fill(7);
        view.set(key.publicKey, 16);
        expect(verifyEd25519(view.subarray(16, 48), message, key.sign(message))).toBe(true);
      }
    }
    expect(verifyEd25519(new Uint8Array(31), message, keys[0]!.sign(message))).toBe(false);
  });

  it('accepts a valid next block', () => {
    const b1 = block(1n, new Uint8Array(0));
    const b2 = block(2n, headerHash(b1.header!.header!));
    expect(() => validateBlock(b2, expectFor(2n, headerHash(b1.header!.header!)))).not.toThrow();
  });

  it('rejects each kind of bad block and says which check failed', () => {
    const b1 = block(1n, new Uint8Array(0));
    const h1 = headerHash(b1.header!.header!);
    const cases: Array<[string, (b: Block) => void, RegExp]> = [
      ['wrong height', () => undefined, /height 2, expected 3/],
      ['bad signature', (b) => (b.header!.signature = new Uint8Array(64)), /signature does not verify/],
      ['other proposer', (b) => (b.header!.header!.proposerAddress = new Uint8Array(32)), /proposer/],
      ['txs swapped', (b) => (b.data!.txs = [enc.encode('evil=1')]), /data_hash/],
    ];
    for (const [name, mutate, message] of cases) {
      const b = block(2n, h1);
      mutate(b);
      const height = name === 'wrong height' ? 3n : 2n;
      expect(() => validateBlock(b, expectFor(height, h1)), name).toThrow(InvalidBlockError);
      expect(() => validateBlock(b, expectFor(height, h1)), name).toThrow(message);
    }
  });

  it('rejects a correctly signed block that does not link to the previous header', () => {
    const b1 = block(1n, new Uint8Array(0));
    const unlinked = block(2n, new Uint8Array(32).fill(9));
    expect(() => validateBlock(unlinked, expectFor(2n, headerHash(b1.header!.header!)))).toThrow(/last_header_hash is not the hash of the previous header/);
  });

  it('keeps data_hash independent of metadata', () => {
    expect(txsHash([enc.encode('a=1')])).toEqual(txsHash([enc.encode('a=1')]));
    expect(txsHash([enc.encode('a=1')])).not.toEqual(txsHash([enc.encode('a=2')]));
  });

  it('round-trips keys from their seed and derives a libp2p peer id', () => {
    const again = Ed25519Key.fromSeed(signer.seed);
    expect(again.publicKey).toEqual(signer.publicKey);
    expect(libp2pPeerId(signer.publicKey)).toMatch(/^12D3KooW[1-9A-HJ-NP-Za-km-z]{44}$/);
    expect(() => Ed25519Key.fromSeed(new Uint8Array(31))).toThrow(/32 bytes/);
  });
});
