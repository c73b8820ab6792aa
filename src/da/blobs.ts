import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import {
  DAHeaderEnvelopeSchema,
  DataSchema,
  SignedDataSchema,
  SignedHeaderSchema,
  SignerSchema,
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

const SIGNATURE_BYTES = 64;
/** A signature field's tag and length: what precedes the signature in a blob. */
const signaturePrefix = (field: number) => new BinaryWriter().tag(field, WireType.LengthDelimited).uint32(SIGNATURE_BYTES).finish();
/**
 * A header's DA blob as ev-node posts it (block/internal/submitting/da_submitter.go,
 * signAndCacheEnvelope): a DAHeaderEnvelope — the SignedHeader's fields 1-3,
 * as ev-node marshals them — then `envelope_signature` (field 4), the
 * proposer's signature over those bytes.
 */
const ENVELOPE_SIGNATURE_PREFIX = signaturePrefix(DAHeaderEnvelopeSchema.field.envelopeSignature.number);
/**
 * A block's data blob as ev-node posts it (da_submitter.go, signData): a
 * SignedData — the Data's bytes (field 1), the proposer's signature over them
 * (field 2) and the signer (field 3), in the order toBinary writes them.
 */
const DATA_SIGNATURE_PREFIX = signaturePrefix(SignedDataSchema.field.signature.number);
const TXS_FIELD = DataSchema.field.txs.number;

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
 * A block about to be posted: its SignedHeader's and Data's bytes, and how
 * many bytes its blobs take once signed (known before any signing: a batch is
 * cut to the blob size cap, then only its blocks are signed). `data` is null
 * for a block without txs: ev-node posts no data for those
 * (block/internal/cache/manager.go, GetPendingData; a follower rebuilds it
 * from the header's empty data_hash).
 */
export interface UnsignedBlock {
  height: bigint;
  header: Uint8Array;
  /** The Data's bytes, and the SignedData field 1 tag and length that precede them. */
  data: { field: Uint8Array; bytes: Uint8Array } | null;
  bytes: number;
  /** Its blobs' signatures made when it was produced (blobSignatures), or null: they are made at submission. */
  signatures: Uint8Array | null;
}

/**
 * The proposer's signatures of a block's DA blobs, from the block's stored
 * bytes: over the SignedHeader's bytes (the header envelope's), then over the
 * Data's bytes when the block has txs: what signPacked writes at submission.
 * An aggregator makes them with the block and keeps them beside it
 * (Bucket.daSignatures), so a backlog is posted without signing: two ed25519
 * signatures a block were most of the CPU of posting it (bench figure
 * submitter), on the cores the DA node's handling of each submission needs.
 * ed25519 signatures are deterministic: the blobs are the same bytes either way.
 * Made on libuv's thread pool (Ed25519Key.signAsync), the two at once.
 */
export async function blobSignatures(blockBytes: Uint8Array, key: Ed25519Key): Promise<Uint8Array> {
  const { header, data } = splitEncodedBlock(blockBytes);
  const withData = hasTxs(data);
  const signatures = new Uint8Array(withData ? 2 * SIGNATURE_BYTES : SIGNATURE_BYTES);
  const [headerSignature, dataSignature] = await Promise.all([key.signAsync(header), withData ? key.signAsync(data) : null]);
  signatures.set(headerSignature);
  if (dataSignature) signatures.set(dataSignature, SIGNATURE_BYTES);
  return signatures;
}

/**
 * A batch's blobs written one after another into one buffer, each signature
 * left zero, and per blob SPAN numbers: where the blob starts and ends, where
 * the message it signs starts and ends, where its signature goes, and its
 * namespace (0: header, 1: data); where its signature goes is -1 when it is
 * there already (UnsignedBlock.signatures). One buffer moves to the signing
 * thread and back without a copy.
 */
export interface PackedBlobs {
  buffer: ArrayBuffer;
  spans: Int32Array;
}

const SPAN = 6;

/**
 * Signs packed blobs in place: writes each blob's signature over its message
 * where it goes, and returns the blobs' commitments, 32 bytes each. Runs on
 * the signing thread from its source text (BlobSigner), so it uses nothing
 * but its arguments; 6 is SPAN.
 */
export function signPacked(
  bytes: Uint8Array,
  spans: Int32Array,
  namespaces: Uint8Array[],
  sign: (message: Uint8Array) => Uint8Array,
  commitment: (namespace: Uint8Array, data: Uint8Array) => Uint8Array,
): Uint8Array {
  const commitments = new Uint8Array((spans.length / 6) * 32);
  for (let i = 0; i < spans.length; i += 6) {
    if (spans[i + 4]! >= 0) bytes.set(sign(bytes.subarray(spans[i + 2], spans[i + 3])), spans[i + 4]);
    commitments.set(commitment(namespaces[spans[i + 5]!]!, bytes.subarray(spans[i], spans[i + 1])), (i / 6) * 32);
  }
  return commitments;
}

/** How a proposer's blocks become DA blobs: their layout, and the packing of a batch of them for signing. */
export class BlobLayout {
  /** SignedData's field 3: the proposer, the same in every data blob. */
  private readonly signerField: Uint8Array;
  readonly namespaces: Uint8Array[];

  constructor(ns: DaNamespaces, key: Ed25519Key) {
    this.namespaces = [ns.header, ns.data];
    this.signerField = new BinaryWriter()
      .tag(SignedDataSchema.field.signer.number, WireType.LengthDelimited)
      .bytes(toBinary(SignerSchema, signerOf(key)))
      .finish();
  }

  /**
   * A block about to be posted from its SignedHeader's and Data's bytes:
   * ev-node's own marshalling of them, which is what this node's blocks are
   * stored as (toBinary), so they are posted without decoding.
   */
  unsigned(height: bigint, header: Uint8Array, data: Uint8Array, signatures: Uint8Array | null = null): UnsignedBlock {
    const headerBytes = header.length + ENVELOPE_SIGNATURE_PREFIX.length + SIGNATURE_BYTES;
    const withData = hasTxs(data);
    // Signatures of another length are not this block's (blobSignatures makes one a blob): it is signed at submission.
    const kept = signatures?.length === (withData ? 2 : 1) * SIGNATURE_BYTES ? signatures : null;
    if (!withData) return { height, header, data: null, bytes: headerBytes, signatures: kept };
    const field = new BinaryWriter().tag(SignedDataSchema.field.data.number, WireType.LengthDelimited).uint32(data.length).finish();
    const dataBytes = field.length + data.length + DATA_SIGNATURE_PREFIX.length + SIGNATURE_BYTES + this.signerField.length;
    return { height, header, data: { field, bytes: data }, bytes: headerBytes + dataBytes, signatures: kept };
  }

  /** A block about to be posted, from the store's bytes of it and the signatures kept beside them, if any. */
  stored(height: bigint, blockBytes: Uint8Array, signatures: Uint8Array | null = null): UnsignedBlock {
    const { header, data } = splitEncodedBlock(blockBytes);
    return this.unsigned(height, header, data, signatures);
  }

  /** The blocks' blobs in one buffer, in order (each block's header, then its data), signatures zero. */
  pack(blocks: UnsignedBlock[]): PackedBlobs {
    const bytes = new Uint8Array(blocks.reduce((sum, b) => sum + b.bytes, 0));
    const spans = new Int32Array(blocks.reduce((n, b) => n + (b.data ? 2 : 1), 0) * SPAN);
    let at = 0;
    let span = 0;
    const put = (part: Uint8Array) => {
      bytes.set(part, at);
      at += part.length;
    };
    /** Puts a signature made when the block was produced in place (its span says -1), else leaves room for it. */
    const signature = (block: UnsignedBlock, i: number): number => {
      const place = at;
      at += SIGNATURE_BYTES;
      if (!block.signatures) return place;
      bytes.set(block.signatures.subarray(i * SIGNATURE_BYTES, (i + 1) * SIGNATURE_BYTES), place);
      return -1;
    };
    for (const block of blocks) {
      const start = at;
      put(block.header);
      put(ENVELOPE_SIGNATURE_PREFIX);
      const headerSignature = signature(block, 0);
      spans.set([start, at, start, start + block.header.length, headerSignature, 0], span);
      span += SPAN;
      if (!block.data) continue;
      const dataStart = at;
      put(block.data.field);
      const message = at;
      put(block.data.bytes);
      put(DATA_SIGNATURE_PREFIX);
      const dataSignature = signature(block, 1);
      put(this.signerField);
      spans.set([dataStart, at, message, message + block.data.bytes.length, dataSignature, 1], span);
      span += SPAN;
    }
    return { buffer: bytes.buffer, spans };
  }

  /** The blobs of packed blobs once signed, with their commitments (from signPacked). */
  blobs({ buffer, spans }: PackedBlobs, commitments: Uint8Array): Blob[] {
    const blobs: Blob[] = [];
    for (let i = 0; i < spans.length; i += SPAN) {
      const [start, end] = [spans[i]!, spans[i + 1]!];
      blobs.push({
        namespace: this.namespaces[spans[i + 5]!]!,
        data: new Uint8Array(buffer, start, end - start),
        commitment: commitments.subarray((i / SPAN) * 32, (i / SPAN + 1) * 32),
      });
    }
    return blobs;
  }

  /** Signs and commits packed blobs on this thread. */
  signHere(packed: PackedBlobs, key: Ed25519Key): Blob[] {
    return this.blobs(
      packed,
      signPacked(new Uint8Array(packed.buffer), packed.spans, this.namespaces, (m) => key.sign(m), blobCommitment),
    );
  }
}

/** A block as the blobs posted for it, signed by `key`, the block's proposer, on this thread. */
export function blockBlobs(block: { header?: SignedHeader; data?: Data }, ns: DaNamespaces, key: Ed25519Key): Blob[] {
  const layout = new BlobLayout(ns, key);
  const unsigned = layout.unsigned(block.header!.header!.height, signedHeaderBytes(block.header!), toBinary(DataSchema, block.data!));
  return layout.signHere(layout.pack([unsigned]), key);
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
