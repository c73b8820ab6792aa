import { create, toBinary, fromBinary } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import {
  BlockSchema,
  DataSchema,
  HeaderSchema,
  MetadataSchema,
  SignedHeaderSchema,
  SignerSchema,
  VersionSchema,
  type Block,
  type Data,
  type Header,
} from './gen/node/v1/types_pb.js';
import { sha256, verifyEd25519, type Ed25519Key } from './keys.js';

/** Version of the block format this node writes. */
export const BLOCK_VERSION = 1n;

const DATA_HASH_PREFIX = new Uint8Array([0x00]);

/** Header hash: sha256 of the Header's protobuf bytes. */
export function headerHash(header: Header): Uint8Array {
  return sha256(toBinary(HeaderSchema, header));
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
  lastCommitHash: Uint8Array;
  lastDataHash: Uint8Array;
  /** State root after the previous block. */
  appHash: Uint8Array;
  signer: Ed25519Key;
}

/** Builds and signs a block. */
export function buildBlock(p: BlockParams): Block {
  return signedBlock(p, txsHash(p.txs));
}

/** Builds and signs a block and encodes it, the txs written once for data_hash, the Data and the block. */
export function buildEncodedBlock(p: BlockParams): EncodedBlock {
  const txsBytes = encodeTxs(p.txs);
  return encodeBlockAndData(signedBlock(p, sha256(DATA_HASH_PREFIX, txsBytes)), txsBytes);
}

function signedBlock(p: BlockParams, dataHash: Uint8Array): Block {
  const header = create(HeaderSchema, {
    version: create(VersionSchema, { block: BLOCK_VERSION, app: 0n }),
    height: p.height,
    time: p.time,
    lastHeaderHash: p.lastHeaderHash,
    lastCommitHash: p.lastCommitHash,
    dataHash,
    consensusHash: new Uint8Array(32),
    appHash: p.appHash,
    lastResultsHash: new Uint8Array(0),
    proposerAddress: p.signer.address,
    validatorHash: p.signer.address,
    chainId: p.chainId,
  });
  const signature = p.signer.sign(toBinary(HeaderSchema, header));
  return create(BlockSchema, {
    header: create(SignedHeaderSchema, {
      header,
      signature,
      signer: create(SignerSchema, { address: p.signer.address, pubKey: p.signer.publicKey }),
    }),
    data: create(DataSchema, {
      metadata: create(MetadataSchema, { chainId: p.chainId, height: p.height, time: p.time, lastDataHash: p.lastDataHash }),
      txs: p.txs,
    }),
  });
}

/** `last_commit_hash` of the next header: the hash of this block's signature (its commit). */
export function commitHash(signature: Uint8Array): Uint8Array {
  return sha256(signature);
}

export class InvalidBlockError extends Error {
  constructor(height: bigint, reason: string) {
    super(`invalid block at height ${height}: ${reason}`);
    this.name = 'InvalidBlockError';
  }
}

const equalBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

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
  if (!signed || !header || !signed.signer || !block.data) return fail('header, signer or data missing');
  if (header.chainId !== expected.chainId) fail(`chain id ${header.chainId}, expected ${expected.chainId}`);
  if (header.height !== expected.height) fail(`height ${header.height}, expected ${expected.height}`);
  if (!equalBytes(header.proposerAddress, expected.proposerAddress)) fail('proposer is not the chain\'s aggregator');
  if (!equalBytes(sha256(signed.signer.pubKey), header.proposerAddress)) fail('signer public key does not match the proposer address');
  if (!verifyEd25519(signed.signer.pubKey, toBinary(HeaderSchema, header), signed.signature)) fail('signature does not verify');
  if (!equalBytes(header.lastHeaderHash, expected.lastHeaderHash)) fail('last_header_hash is not the hash of the previous header');
  if (!equalBytes(header.dataHash, txsHash(block.data.txs))) fail('data_hash does not match the txs');
}

export const encodeBlock = (block: Block) => toBinary(BlockSchema, block);
export const decodeBlock = (bytes: Uint8Array) => fromBinary(BlockSchema, bytes);
