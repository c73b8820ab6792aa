import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import {
  DAHeaderEnvelopeSchema,
  DataSchema,
  SignedDataSchema,
  SignedHeaderSchema,
  sha256,
  signedHeaderBytes,
  signerOf,
  splitEncodedBlock,
  unmarshalEd25519PublicKey,
  verifyEd25519,
  type Data,
  type Ed25519Key,
  type SignedHeader,
  type Signer,
} from '../types/index.js';
import type { Blob } from './client.js';

/** The two namespaces a chain posts to: signed headers, and block data. */
export interface DaNamespaces {
  header: Uint8Array;
  data: Uint8Array;
}

/**
 * A blob's commitment as this node computes it: sha256(namespace ‖ data). A
 * celestia node computes its own share commitment on submission; this value
 * only lets the built-in DA server and the client name blobs consistently.
 */
export const blobCommitment = (namespace: Uint8Array, data: Uint8Array) => sha256(namespace, data);

const blob = (namespace: Uint8Array, data: Uint8Array): Blob => ({ namespace, data, commitment: blobCommitment(namespace, data) });

const ENVELOPE_SIGNATURE_FIELD = DAHeaderEnvelopeSchema.field.envelopeSignature.number;
const TXS_FIELD = DataSchema.field.txs.number;

/**
 * A header's DA blob as ev-node posts it (block/internal/submitting/da_submitter.go,
 * signAndCacheEnvelope): a DAHeaderEnvelope — the SignedHeader's fields 1-3 —
 * with `envelope_signature` (field 4), the proposer's signature over the
 * SignedHeader's bytes. `signedHeader`: those bytes as ev-node marshals them.
 */
function headerEnvelope(signedHeader: Uint8Array, signature: Uint8Array): Uint8Array {
  return new BinaryWriter().raw(signedHeader).tag(ENVELOPE_SIGNATURE_FIELD, WireType.LengthDelimited).bytes(signature).finish();
}

/**
 * A block's data as ev-node posts it (da_submitter.go, signData): a SignedData
 * whose signature is the proposer's over the Data's bytes, metadata included.
 */
function signedDataBlob(data: Uint8Array, signature: Uint8Array, key: Ed25519Key): Uint8Array {
  const signed = create(SignedDataSchema, { signature, signer: signerOf(key) });
  // The Data goes in as its bytes (field 1 first, as toBinary would write it), not decoded and encoded again.
  return new BinaryWriter().tag(SignedDataSchema.field.data.number, WireType.LengthDelimited).bytes(data).raw(toBinary(SignedDataSchema, signed)).finish();
}

/** Whether a Data's protobuf holds any tx (field 2), read without decoding it. */
function hasTxs(data: Uint8Array): boolean {
  const reader = new BinaryReader(data);
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    if (no === TXS_FIELD) return true;
    reader.skip(wireType, no);
  }
  return false;
}

/**
 * The blobs posted for a block given as its SignedHeader's and Data's bytes
 * and `key`'s signatures over them: the header envelope, and the signed data
 * unless the block has no txs (ev-node posts no data for those:
 * block/internal/cache/manager.go, GetPendingData; a follower rebuilds it from
 * the header's empty data_hash), when `dataSignature` is null.
 */
function encodedBlockBlobs(
  signed: { header: Uint8Array; data: Uint8Array; headerSignature: Uint8Array; dataSignature: Uint8Array | null },
  ns: DaNamespaces,
  key: Ed25519Key,
): Blob[] {
  const header = blob(ns.header, headerEnvelope(signed.header, signed.headerSignature));
  return signed.dataSignature ? [header, blob(ns.data, signedDataBlob(signed.data, signed.dataSignature, key))] : [header];
}

/** A block as the blobs posted for it, signed by `key`, the block's proposer. */
export function blockBlobs(block: { header?: SignedHeader; data?: Data }, ns: DaNamespaces, key: Ed25519Key): Blob[] {
  const header = signedHeaderBytes(block.header!);
  const data = toBinary(DataSchema, block.data!);
  return encodedBlockBlobs({ header, data, headerSignature: key.sign(header), dataSignature: hasTxs(data) ? key.sign(data) : null }, ns, key);
}

/**
 * blockBlobs of a block as the store keeps it (its protobuf), without decoding
 * it: this node's own blocks are stored as toBinary writes them, which is
 * byte for byte what ev-node marshals for them. Signed on libuv's threadpool:
 * the submitter signs a batch's blocks at once, beside the event loop.
 */
export async function storedBlockBlobs(blockBytes: Uint8Array, ns: DaNamespaces, key: Ed25519Key): Promise<Blob[]> {
  const { header, data } = splitEncodedBlock(blockBytes);
  const [headerSignature, dataSignature] = await Promise.all([key.signAsync(header), hasTxs(data) ? key.signAsync(data) : null]);
  return encodedBlockBlobs({ header, data, headerSignature, dataSignature }, ns, key);
}

/** A header blob read back: the signed header, and the envelope signature (empty for a plain SignedHeader). */
export interface HeaderBlob {
  signed: SignedHeader;
  envelopeSignature: Uint8Array;
}

/** Decodes a header blob: a DAHeaderEnvelope, or a SignedHeader as ev-node posted before (the same fields 1-3). */
export function decodeHeaderBlob(bytes: Uint8Array): HeaderBlob {
  const envelope = fromBinary(DAHeaderEnvelopeSchema, bytes);
  return {
    signed: create(SignedHeaderSchema, { header: envelope.header, signature: envelope.signature, signer: envelope.signer }),
    envelopeSignature: envelope.envelopeSignature,
  };
}

/** The raw key of a signer, or null when it has none or one this node cannot read. */
function signerKey(signer: Signer | undefined): Uint8Array | null {
  if (!signer || signer.pubKey.length === 0) return null;
  try {
    return unmarshalEd25519PublicKey(signer.pubKey);
  } catch {
    return null;
  }
}

/**
 * Why a header envelope's signature does not hold, or null when it does: it is
 * the header signer's over the SignedHeader's bytes as ev-node re-marshals them
 * (block/internal/syncing/da_retriever.go, tryDecodeHeader).
 */
export function envelopeSignatureProblem(blob: HeaderBlob): string | null {
  const key = signerKey(blob.signed.signer);
  if (!key) return 'header signer has no public key to verify the DA envelope with';
  return verifyEd25519(key, signedHeaderBytes(blob.signed), blob.envelopeSignature) ? null : 'DA envelope signature verification failed';
}

/** A data blob read back: ev-node's SignedData. */
export interface DataBlob {
  data: Data;
  signature: Uint8Array;
  signer: Signer | undefined;
}

export function decodeDataBlob(bytes: Uint8Array): DataBlob {
  const signed = fromBinary(SignedDataSchema, bytes);
  return { data: signed.data ?? create(DataSchema), signature: signed.signature, signer: signed.signer };
}

/**
 * Why a SignedData is not to be used, or null when it is: ev-node skips one
 * with neither txs nor signature, and needs the signer's key and its signature
 * over the Data's bytes (da_retriever.go tryDecodeData; syncing/assert.go
 * assertValidSignedData). Those bytes are the Data as ev-node re-marshals it:
 * fields it does not know left out.
 */
export function signedDataProblem(blob: DataBlob): string | null {
  if (blob.data.txs.length === 0 && blob.signature.length === 0) return 'empty signed data';
  const key = signerKey(blob.signer);
  if (!key) return 'missing signer public key in signed data';
  const metadata = blob.data.metadata && { ...blob.data.metadata, $unknown: undefined };
  const dataBytes = toBinary(DataSchema, { ...blob.data, metadata, $unknown: undefined });
  return verifyEd25519(key, dataBytes, blob.signature) ? null : 'invalid signature on signed data';
}

export const sameNamespace = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;
