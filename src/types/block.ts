import { create, toBinary, fromBinary } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import {
  DataSchema,
  HeaderSchema,
  MetadataSchema,
  SignedHeaderSchema,
  SignerSchema,
  VersionSchema,
  type Data,
  type Header,
  type SignedHeader,
  type Signer,
} from './gen/node/v1/node_pb.js';
import { BlockSchema, type Block } from './gen/node/v1/state_rpc_pb.js';
import { sha256, unmarshalEd25519PublicKey, verifyEd25519, Ed25519Key } from './keys.js';

/**
 * Block version of the headers this node writes: ev-node's InitStateVersion
 * (types/state.go: 11, "to be compatible with CometBFT blocks for IBC").
 */
export const BLOCK_VERSION = 11n;

const DATA_HASH_PREFIX = new Uint8Array([0x00]);

/**
 * Header fields ev-node dropped ("header minimisation") and now reserves in
 * evnode.proto (`reserved 5, 7, 9`): a header that still carries them hashes
 * and verifies with the legacy encoding (ev-node types/serialization.go).
 */
const LEGACY_LAST_COMMIT_HASH = 5;
const LEGACY_CONSENSUS_HASH = 7;
const LEGACY_LAST_RESULTS_HASH = 9;
/** ev-node's limits on a header's unknown fields (types/serialization.go: maxUnknownFieldSize, maxLegacyHashSize). */
const MAX_UNKNOWN_FIELDS_BYTES = 1024 * 1024;
const MAX_LEGACY_HASH_BYTES = 1024;

interface LegacyHeaderFields {
  lastCommitHash: Uint8Array;
  consensusHash: Uint8Array;
  lastResultsHash: Uint8Array;
}

/**
 * The legacy fields a decoded header carries among its unknown fields, or null
 * when none is set (ev-node decodeLegacyHeaderFields: bytes-typed fields 5, 7,
 * 9; the last occurrence wins; an empty value counts as unset).
 */
function legacyHeaderFields(header: Header): LegacyHeaderFields | null {
  const unknown = header.$unknown;
  if (!unknown?.length) return null;
  let size = 0;
  const legacy: LegacyHeaderFields = { lastCommitHash: EMPTY, consensusHash: EMPTY, lastResultsHash: EMPTY };
  for (const field of unknown) {
    size += new BinaryWriter().tag(field.no, field.wireType).finish().length + field.data.length;
    if (field.wireType !== WireType.LengthDelimited) continue;
    const value = new BinaryReader(field.data).bytes();
    if (value.length > MAX_LEGACY_HASH_BYTES) throw new Error(`legacy hash field ${field.no} too large: ${value.length} bytes (max ${MAX_LEGACY_HASH_BYTES})`);
    if (field.no === LEGACY_LAST_COMMIT_HASH) legacy.lastCommitHash = value;
    else if (field.no === LEGACY_CONSENSUS_HASH) legacy.consensusHash = value;
    else if (field.no === LEGACY_LAST_RESULTS_HASH) legacy.lastResultsHash = value;
  }
  if (size > MAX_UNKNOWN_FIELDS_BYTES) throw new Error(`unknown fields too large: ${size} bytes (max ${MAX_UNKNOWN_FIELDS_BYTES})`);
  const set = legacy.lastCommitHash.length > 0 || legacy.consensusHash.length > 0 || legacy.lastResultsHash.length > 0;
  return set ? legacy : null;
}

const EMPTY = new Uint8Array(0);

function writeBytesField(w: BinaryWriter, no: number, value: Uint8Array): void {
  if (value.length > 0) w.tag(no, WireType.LengthDelimited).bytes(value);
}

/**
 * The header's slim encoding, what ev-node signs and hashes now (Header.MarshalBinary
 * in types/serialization.go; DefaultAggregatorNodeSignatureBytesProvider in
 * types/providers.go): the known fields in field order, `version` always written
 * (as an empty message when unset), then the legacy fields a decoded header
 * still carries; any other unknown field left out.
 */
export function headerSignBytes(header: Header): Uint8Array {
  const legacy = legacyHeaderFields(header);
  if (!legacy && !header.$unknown?.length && header.version) return toBinary(HeaderSchema, header);
  const known = toBinary(HeaderSchema, { ...header, version: header.version ?? create(VersionSchema), $unknown: undefined });
  if (!legacy) return known;
  const w = new BinaryWriter().raw(known);
  writeBytesField(w, LEGACY_LAST_COMMIT_HASH, legacy.lastCommitHash);
  writeBytesField(w, LEGACY_CONSENSUS_HASH, legacy.consensusHash);
  writeBytesField(w, LEGACY_LAST_RESULTS_HASH, legacy.lastResultsHash);
  return w.finish();
}

/**
 * The legacy encoding (ev-node marshalLegacyHeader, types/serialization.go):
 * all twelve fields in field order, height and time written even when 0, an
 * unset consensus_hash as 32 zero bytes (LegacyHeaderFields.EnsureDefaults).
 */
function headerLegacyBytes(header: Header, legacy: LegacyHeaderFields | null): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).bytes(toBinary(VersionSchema, header.version ?? create(VersionSchema)));
  w.tag(2, WireType.Varint).uint64(header.height);
  w.tag(3, WireType.Varint).uint64(header.time);
  writeBytesField(w, 4, header.lastHeaderHash);
  writeBytesField(w, LEGACY_LAST_COMMIT_HASH, legacy?.lastCommitHash ?? EMPTY);
  writeBytesField(w, 6, header.dataHash);
  writeBytesField(w, LEGACY_CONSENSUS_HASH, legacy?.consensusHash.length ? legacy.consensusHash : new Uint8Array(32));
  writeBytesField(w, 8, header.appHash);
  writeBytesField(w, LEGACY_LAST_RESULTS_HASH, legacy?.lastResultsHash ?? EMPTY);
  writeBytesField(w, 10, header.proposerAddress);
  writeBytesField(w, 11, header.validatorHash);
  if (header.chainId) w.tag(12, WireType.LengthDelimited).string(header.chainId);
  return w.finish();
}

/**
 * Header hash as ev-node computes it now (types/hashing.go, computeHash):
 * sha256 of the legacy encoding when the header carries legacy fields, else
 * sha256 of the slim encoding.
 */
export function headerHash(header: Header): Uint8Array {
  const legacy = legacyHeaderFields(header);
  return sha256(legacy ? headerLegacyBytes(header, legacy) : headerSignBytes(header));
}

/**
 * Whether `signature` is the signer's over the header: over its slim encoding,
 * or else its legacy one (ev-node SignedHeader.ValidateBasic, types/signed_header.go).
 */
export function verifyHeaderSignature(publicKey: Uint8Array, header: Header, signature: Uint8Array): boolean {
  if (verifyEd25519(publicKey, headerSignBytes(header), signature)) return true;
  return verifyEd25519(publicKey, headerLegacyBytes(header, legacyHeaderFields(header)), signature);
}

/**
 * A Signer message's bytes as ev-node writes them (SignedHeader.MarshalBinary,
 * SignedData.ToProto): address and pub_key, or an empty Signer when there is no
 * public key.
 */
function writeSigner(w: BinaryWriter, no: number, signer: Signer | undefined): void {
  const inner = new BinaryWriter();
  if (signer && signer.pubKey.length > 0) {
    writeBytesField(inner, 1, signer.address);
    writeBytesField(inner, 2, signer.pubKey);
  }
  w.tag(no, WireType.LengthDelimited).bytes(inner.finish());
}

/**
 * A SignedHeader's bytes as ev-node marshals it (SignedHeader.MarshalBinary):
 * what a DA envelope's signature covers (block/internal/submitting/da_submitter.go).
 */
export function signedHeaderBytes(signed: SignedHeader): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).bytes(headerSignBytes(signed.header ?? create(HeaderSchema)));
  writeBytesField(w, 2, signed.signature);
  writeSigner(w, 3, signed.signer);
  return w.finish();
}

/** A SignedData's bytes as ev-node marshals it (SignedData.MarshalBinary): Data, signature, signer. */
export function signedDataBytes(dataBytes: Uint8Array, signature: Uint8Array, signer: Signer): Uint8Array {
  const w = new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(dataBytes);
  writeBytesField(w, 2, signature);
  writeSigner(w, 3, signer);
  return w.finish();
}

const TXS_TAG = (DataSchema.field.txs.number << 3) | WireType.LengthDelimited;

const varintSize = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x20_0000 ? 3 : n < 0x1000_0000 ? 4 : 5);

/**
 * Protobuf of Data{txs}, metadata left out: what data_hash covers, and the
 * tail of the full Data's protobuf. Written in one buffer (tag, varint length,
 * bytes per tx), byte for byte what toBinary writes, without its per-field work.
 */
export function encodeTxs(txs: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const tx of txs) size += 1 + varintSize(tx.length) + tx.length;
  const out = new Uint8Array(size);
  let pos = 0;
  for (const tx of txs) {
    out[pos++] = TXS_TAG;
    let n = tx.length;
    for (; n > 0x7f; n >>>= 7) out[pos++] = (n & 0x7f) | 0x80;
    out[pos++] = n;
    out.set(tx, pos);
    pos += tx.length;
  }
  return out;
}

/** `data_hash` of a header: sha256(0x00 ‖ protobuf of Data{txs}) — metadata left out. */
export function txsHash(txs: Uint8Array[]): Uint8Array {
  return sha256(DATA_HASH_PREFIX, encodeTxs(txs));
}

/** The hash a next block's `metadata.last_data_hash` carries: sha256(0x00 ‖ protobuf of the full Data). */
export function fullDataHash(data: Data): Uint8Array {
  return encodedDataHash(toBinary(DataSchema, data));
}

/** fullDataHash of a Data given as its protobuf. */
export const encodedDataHash = (dataBytes: Uint8Array): Uint8Array => sha256(DATA_HASH_PREFIX, dataBytes);

/** A block with its protobuf and its Data's: the chain hashes the one and stores the other. */
export interface EncodedBlock {
  block: Block;
  /** Protobuf of the block's Data. */
  data: Uint8Array;
  /** Protobuf of the block. */
  bytes: Uint8Array;
}

/**
 * Encodes a block and its Data, the txs written once for both (given as
 * `txsBytes` when already encoded); byte for byte what toBinary writes.
 */
export function encodeBlockAndData(block: Block, txsBytes?: Uint8Array): EncodedBlock {
  const data = block.data!;
  let dataBytes: Uint8Array;
  if (data.$unknown?.length) {
    // Fields this node does not know go after the known ones: leave that order to toBinary.
    dataBytes = toBinary(DataSchema, data);
  } else {
    const w = new BinaryWriter();
    if (data.metadata) w.tag(DataSchema.field.metadata.number, WireType.LengthDelimited).bytes(toBinary(MetadataSchema, data.metadata));
    dataBytes = w.raw(txsBytes ?? encodeTxs(data.txs)).finish();
  }
  const w = new BinaryWriter();
  if (block.header) w.tag(BlockSchema.field.header.number, WireType.LengthDelimited).bytes(toBinary(SignedHeaderSchema, block.header));
  w.tag(BlockSchema.field.data.number, WireType.LengthDelimited).bytes(dataBytes);
  for (const unknown of block.$unknown ?? []) w.tag(unknown.no, unknown.wireType).raw(unknown.data);
  return { block, data: dataBytes, bytes: w.finish() };
}

/**
 * The protobuf of a block's SignedHeader and Data, cut out of the block's
 * protobuf as they stand (views, no copy). They are what toBinary writes for
 * each part when the block's bytes are toBinary's own, as the store's are.
 */
export function splitEncodedBlock(bytes: Uint8Array): { header: Uint8Array; data: Uint8Array } {
  const reader = new BinaryReader(bytes);
  let header: Uint8Array | undefined;
  let data: Uint8Array | undefined;
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    if (no === BlockSchema.field.header.number && wireType === WireType.LengthDelimited) header = reader.bytes();
    else if (no === BlockSchema.field.data.number && wireType === WireType.LengthDelimited) data = reader.bytes();
    else reader.skip(wireType, no);
  }
  if (!header || !data) throw new Error('block bytes without a header or data');
  return { header, data };
}

export interface BlockParams {
  chainId: string;
  height: bigint;
  /** Unix nanoseconds. */
  time: bigint;
  txs: Uint8Array[];
  lastHeaderHash: Uint8Array;
  lastDataHash: Uint8Array;
  /** State root after the previous block. */
  appHash: Uint8Array;
  signer: BlockSigner;
}

/**
 * Who signs a block: the aggregator's key, or for a based block only the
 * genesis proposer's address — every based node derives the same block, so
 * none signs it (signature and signer key empty; the header hash, which
 * covers no signature, is the same on every node).
 */
export type BlockSigner = Ed25519Key | { address: Uint8Array };

/** Builds and signs a block. */
export function buildBlock(p: BlockParams): Block {
  return signedBlock(p, txsHash(p.txs));
}

/** Builds and signs a block and encodes it, the txs written once for data_hash, the Data and the block. */
export function buildEncodedBlock(p: BlockParams): EncodedBlock {
  const txsBytes = encodeTxs(p.txs);
  return encodeBlockAndData(signedBlock(p, sha256(DATA_HASH_PREFIX, txsBytes)), txsBytes);
}

/**
 * A block as ev-node's executor builds it (block/internal/executing/executor.go,
 * CreateBlock): no legacy header fields, `validator_hash` empty (its
 * DefaultValidatorHasherProvider, types/hasher.go), the signer's key
 * libp2p-marshalled, the signature over the slim header encoding.
 */
function signedBlock(p: BlockParams, dataHash: Uint8Array): Block {
  const header = create(HeaderSchema, {
    version: create(VersionSchema, { block: BLOCK_VERSION, app: 0n }),
    height: p.height,
    time: p.time,
    lastHeaderHash: p.lastHeaderHash,
    dataHash,
    appHash: p.appHash,
    proposerAddress: p.signer.address,
    chainId: p.chainId,
  });
  const key = p.signer instanceof Ed25519Key ? p.signer : null;
  const signature = key ? key.sign(headerSignBytes(header)) : new Uint8Array(0);
  return create(BlockSchema, {
    header: create(SignedHeaderSchema, { header, signature, signer: key ? signerOf(key) : create(SignerSchema, { address: p.signer.address }) }),
    data: create(DataSchema, {
      metadata: create(MetadataSchema, { chainId: p.chainId, height: p.height, time: p.time, lastDataHash: p.lastDataHash }),
      txs: p.txs,
    }),
  });
}

/** The Signer message of a key: its address and libp2p-marshalled public key. */
export const signerOf = (key: Ed25519Key): Signer => create(SignerSchema, { address: key.address, pubKey: key.marshalledPublicKey });

/**
 * sha256 of a block's signature: the CometBFT-style `last_commit_hash` the
 * status listener shows for the next block (ev-node headers carry none).
 */
export function commitHash(signature: Uint8Array): Uint8Array {
  return sha256(signature);
}

export class InvalidBlockError extends Error {
  constructor(height: bigint, reason: string) {
    super(`invalid block at height ${height}: ${reason}`);
    this.name = 'InvalidBlockError';
  }
}

/**
 * A block of a chain whose genesis is not this node's (another chain id,
 * proposer or initial height): not the sender's fault, nor this block's, so
 * it is reported once for the node (src/node/genesis-guard.ts) rather than
 * per block.
 */
export class GenesisMismatchError extends InvalidBlockError {
  constructor(
    height: bigint,
    /** What differs, in words: `proposer address: …`. */
    readonly differences: string,
  ) {
    super(height, `genesis mismatch: ${differences}`);
    this.name = 'GenesisMismatchError';
  }
}

const equalBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

/**
 * Why a signed header is not the proposer's, or null when it is: ev-node's
 * SignedHeader.ValidateBasic (types/signed_header.go) — a signer public key
 * whose address is the signer address and the header's proposer, a signature
 * over the header — with the proposer being the chain's.
 */
export function signedHeaderProblem(signed: SignedHeader, proposerAddress: Uint8Array): string | null {
  const header = signed.header;
  const signer = signed.signer;
  if (!header) return 'header missing';
  if (!signer || signer.pubKey.length === 0) return 'signer public key is missing';
  if (!equalBytes(header.proposerAddress, proposerAddress)) return "proposer is not the chain's aggregator";
  let publicKey: Uint8Array;
  try {
    publicKey = unmarshalEd25519PublicKey(signer.pubKey);
  } catch (err) {
    return (err as Error).message;
  }
  if (!equalBytes(sha256(publicKey), signer.address)) return 'signer address does not match signer public key';
  if (!equalBytes(signer.address, header.proposerAddress)) return 'signer address is not the proposer address';
  if (signed.signature.length === 0) return 'signature is empty';
  try {
    if (!verifyHeaderSignature(publicKey, header, signed.signature)) return 'signature does not verify';
  } catch (err) {
    return (err as Error).message;
  }
  return null;
}

export interface BlockExpectation {
  chainId: string;
  height: bigint;
  proposerAddress: Uint8Array;
  lastHeaderHash: Uint8Array;
}

/**
 * Checks a block received from elsewhere against what the chain expects next,
 * throwing an InvalidBlockError that says which check failed.
 */
export function validateBlock(block: Block, expected: BlockExpectation): void {
  const signed = block.header;
  const header = signed?.header;
  const height = header?.height ?? 0n;
  const fail = (reason: string): never => {
    throw new InvalidBlockError(height, reason);
  };
  if (!signed || !header || !block.data) return fail('header or data missing');
  if (header.chainId !== expected.chainId) fail(`chain id ${header.chainId}, expected ${expected.chainId}`);
  if (header.height !== expected.height) fail(`height ${header.height}, expected ${expected.height}`);
  const problem = signedHeaderProblem(signed, expected.proposerAddress);
  if (problem) fail(problem);
  if (!equalBytes(header.lastHeaderHash, expected.lastHeaderHash)) fail('last_header_hash is not the hash of the previous header');
  if (!equalBytes(header.dataHash, txsHash(block.data.txs))) fail('data_hash does not match the txs');
}

export const encodeBlock = (block: Block) => toBinary(BlockSchema, block);
export const decodeBlock = (bytes: Uint8Array) => fromBinary(BlockSchema, bytes);
