import { create, toBinary, fromBinary } from '@bufbuild/protobuf';
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

/** `data_hash` of a header: sha256(0x00 ‖ protobuf of Data{txs}) — metadata left out. */
export function txsHash(txs: Uint8Array[]): Uint8Array {
  return sha256(DATA_HASH_PREFIX, toBinary(DataSchema, create(DataSchema, { txs })));
}

/** The hash a next block's `metadata.last_data_hash` carries: sha256(0x00 ‖ protobuf of the full Data). */
export function fullDataHash(data: Data): Uint8Array {
  return sha256(DATA_HASH_PREFIX, toBinary(DataSchema, data));
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
  const header = create(HeaderSchema, {
    version: create(VersionSchema, { block: BLOCK_VERSION, app: 0n }),
    height: p.height,
    time: p.time,
    lastHeaderHash: p.lastHeaderHash,
    lastCommitHash: p.lastCommitHash,
    dataHash: txsHash(p.txs),
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
