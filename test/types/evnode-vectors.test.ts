/**
 * Header hash, signature bytes, data hashes and signer bytes against ev-node
 * (evstack/ev-node 74eccbace). ev-node's tests compute their expectations
 * rather than spell them out, so each vector below takes its inputs from the
 * ev-node test named beside it and its bytes from ev-node's encoding rules,
 * derived by hand here (we have no Go toolchain to run ev-node itself); the one
 * literal ev-node ships (DataHashForEmptyTxs) is used as it is.
 */
import { create, fromBinary } from '@bufbuild/protobuf';
import { publicKeyFromRaw, publicKeyToProtobuf } from '@libp2p/crypto/keys';
import { describe, expect, it } from 'vitest';
import {
  DataSchema,
  Ed25519Key,
  HeaderSchema,
  MetadataSchema,
  fullDataHash,
  headerHash,
  headerSignBytes,
  sha256,
  signedHeaderProblem,
  signerOf,
  txsHash,
  unmarshalEd25519PublicKey,
  verifyHeaderSignature,
} from '../../src/types/index.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const fromHex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string) => new TextEncoder().encode(s);
const repeat = (byte: number, n = 32) => new Uint8Array(n).fill(byte);

/**
 * types/hashing_test.go TestHeaderHash: Header{Height: 1, Time: 1234567890, DataHash: "datahash"}.
 * Slim encoding (types/serialization.go Header.MarshalBinary): version always
 * written (0a 00), height (10 01), time (18 + varint), data_hash (32 08 "datahash").
 */
const SLIM_HEADER_BYTES = '0a00100118d285d8cc0432086461746168617368';
const SLIM_HEADER_HASH = 'a254db6d1832871f51052203357e6a39c0c94199ddb2f78f5238adb4ca3c8005';

/**
 * types/hashing_test.go TestHeaderHashLegacy: legacy fields 0x01…, 0x02…, 0x03…
 * (32 bytes each), Height 10, Time 987654321, ChainID "legacy-chain", DataHash
 * 0x04…. Legacy encoding (marshalLegacyHeader): every field in number order,
 * 5, 7 and 9 included.
 */
const LEGACY_HEADER_BYTES =
  '0a00100a18b1d1f9d603' +
  '2a20' +
  '01'.repeat(32) +
  '3220' +
  '04'.repeat(32) +
  '3a20' +
  '02'.repeat(32) +
  '4a20' +
  '03'.repeat(32) +
  '620c' +
  hex(utf8('legacy-chain'));
const LEGACY_HEADER_HASH = 'd83ef28e029f2e5d50807037c01ad35f2cc3b68cfe65dfa096effb94be6c506b';

/**
 * types/hashing_test.go TestDataHash: Data{Txs: tx1, tx2; Metadata{test-chain, 1,
 * 1234567890, "lastdatahash"}}; Data.Hash = sha256(0x00 ‖ Data.MarshalBinary()).
 */
const DATA_BYTES = '0a220a0a746573742d636861696e100118d285d8cc04220c6c617374646174616861736812037478311203747832';
const DATA_HASH = '6404d4d6b9d75866e12e7a05a2d7cbb42911f7f5523e5e35c4e492068c36379f';

/** block/internal/common/empty.go DataHashForEmptyTxs, as ev-node writes it. */
const DATA_HASH_FOR_EMPTY_TXS = new Uint8Array([
  110, 52, 11, 156, 255, 179, 122, 152, 156, 165, 68, 230, 187, 120, 10, 44, 120, 144, 29, 63, 179, 55, 56, 118, 133, 17, 163, 6, 23, 175, 160, 29,
]);

describe("ev-node's header hash and signature bytes", () => {
  it('hashes a header without legacy fields over its slim encoding (TestHeaderHash)', () => {
    const header = create(HeaderSchema, { height: 1n, time: 1234567890n, dataHash: utf8('datahash') });
    expect(hex(headerSignBytes(header))).toBe(SLIM_HEADER_BYTES);
    expect(hex(headerHash(header))).toBe(SLIM_HEADER_HASH);
    expect(hex(sha256(fromHex(SLIM_HEADER_BYTES)))).toBe(SLIM_HEADER_HASH);
  });

  it('hashes a header that carries the reserved fields 5, 7, 9 over the legacy encoding (TestHeaderHashLegacy)', () => {
    const header = fromBinary(HeaderSchema, fromHex(LEGACY_HEADER_BYTES));
    expect(header.$unknown?.map((f) => f.no)).toEqual([5, 7, 9]);
    expect(hex(sha256(fromHex(LEGACY_HEADER_BYTES)))).toBe(LEGACY_HEADER_HASH);
    expect(hex(headerHash(header))).toBe(LEGACY_HEADER_HASH);
    // Its slim encoding keeps the legacy fields after the known ones (encodeLegacyUnknownFields).
    const slim =
      '0a00100a18b1d1f9d6033220' +
      '04'.repeat(32) +
      '620c' +
      hex(utf8('legacy-chain')) +
      '2a20' +
      '01'.repeat(32) +
      '3a20' +
      '02'.repeat(32) +
      '4a20' +
      '03'.repeat(32);
    expect(hex(headerSignBytes(header))).toBe(slim);
  });

  it('signs the slim encoding, and verifies a signature over either encoding (SignedHeader.ValidateBasic)', () => {
    const key = Ed25519Key.fromSeed(repeat(1));
    const header = create(HeaderSchema, { height: 1n, time: 1234567890n, dataHash: utf8('datahash'), proposerAddress: key.address });
    const slimSignature = key.sign(headerSignBytes(header));
    expect(verifyHeaderSignature(key.publicKey, header, slimSignature)).toBe(true);
    expect(signedHeaderProblem({ ...create(HeaderSchema), header, signature: slimSignature, signer: signerOf(key) } as never, key.address)).toBeNull();
    // A header signed before the minimisation: over the legacy encoding (consensus_hash defaulting to 32 zero bytes).
    const legacyBytes = '0a00100118d285d8cc043208' + hex(utf8('datahash')) + '3a20' + '00'.repeat(32) + '5220' + hex(key.address);
    expect(verifyHeaderSignature(key.publicKey, header, key.sign(fromHex(legacyBytes)))).toBe(true);
    expect(verifyHeaderSignature(key.publicKey, header, key.sign(fromHex(SLIM_HEADER_BYTES)))).toBe(false);
  });
});

describe("ev-node's data hashes", () => {
  it('hashes Data with its metadata for last_data_hash (TestDataHash)', () => {
    const data = create(DataSchema, {
      metadata: create(MetadataSchema, { chainId: 'test-chain', height: 1n, time: 1234567890n, lastDataHash: utf8('lastdatahash') }),
      txs: [utf8('tx1'), utf8('tx2')],
    });
    expect(hex(fullDataHash(data))).toBe(DATA_HASH);
    expect(hex(sha256(new Uint8Array([0]), fromHex(DATA_BYTES)))).toBe(DATA_HASH);
  });

  it('hashes the txs alone for data_hash (Data.DACommitment), the empty list to DataHashForEmptyTxs', () => {
    expect(txsHash([])).toEqual(DATA_HASH_FOR_EMPTY_TXS);
    // DACommitment: sha256(0x00 ‖ protobuf of Data{txs}) — the metadata left out.
    expect(hex(txsHash([utf8('tx1'), utf8('tx2')]))).toBe(hex(sha256(new Uint8Array([0]), fromHex('12037478311203747832'))));
  });
});

describe("ev-node's signer bytes", () => {
  it('holds the libp2p-marshalled public key and the sha256 of the raw key as address (types/signer.go)', () => {
    const key = Ed25519Key.fromSeed(repeat(2));
    const signer = signerOf(key);
    expect(signer.pubKey).toEqual(publicKeyToProtobuf(publicKeyFromRaw(key.publicKey)));
    expect(hex(signer.pubKey.subarray(0, 4))).toBe('08011220');
    expect(signer.address).toEqual(sha256(key.publicKey));
    expect(unmarshalEd25519PublicKey(signer.pubKey)).toEqual(key.publicKey);
    expect(() => unmarshalEd25519PublicKey(key.publicKey)).toThrow(/libp2p public key/);
    // secp256k1 (type 2): a key type this node does not verify.
    expect(() => unmarshalEd25519PublicKey(fromHex('0802122102' + '11'.repeat(32)))).toThrow(/key type 2/);
  });
});
