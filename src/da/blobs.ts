import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { DataSchema, SignedHeaderSchema, sha256, splitEncodedBlock, type Block, type Data, type SignedHeader } from '../types/index.js';
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

/** A block as the two blobs posted for it: its signed header and its data. */
export function blockBlobs(block: Block, ns: DaNamespaces): [Blob, Blob] {
  return [blob(ns.header, toBinary(SignedHeaderSchema, block.header!)), blob(ns.data, toBinary(DataSchema, block.data!))];
}

/** blockBlobs of a block as the store keeps it (its protobuf), without decoding and encoding it again. */
export function storedBlockBlobs(blockBytes: Uint8Array, ns: DaNamespaces): [Blob, Blob] {
  const { header, data } = splitEncodedBlock(blockBytes);
  return [blob(ns.header, header), blob(ns.data, data)];
}

export function decodeHeaderBlob(data: Uint8Array): SignedHeader {
  return fromBinary(SignedHeaderSchema, data);
}

export function decodeDataBlob(data: Uint8Array): Data {
  return fromBinary(DataSchema, data);
}

export const sameNamespace = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;
