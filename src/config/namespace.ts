import { createHash } from 'node:crypto';

/** Bytes of a DA namespace: 1 version byte + 28 bytes of id. */
export const NAMESPACE_SIZE = 29;
// Version-0 namespaces: the version byte and the first 18 bytes of the id are zero,
// which leaves 10 bytes for the name's hash.
const NAME_HASH_OFFSET = 19;
const NAME_HASH_SIZE = 10;

/** The version-0 namespace of `name` (da.namespace, or the chain id when that is empty): headers go here. */
export function daNamespace(name: string): Uint8Array {
  const namespace = new Uint8Array(NAMESPACE_SIZE);
  namespace.set(createHash('sha256').update(name).digest().subarray(0, NAME_HASH_SIZE), NAME_HASH_OFFSET);
  return namespace;
}

/** The namespace block data goes to, kept apart from headers so light readers skip it. */
export function dataNamespace(name: string): Uint8Array {
  return daNamespace(`${name}-data`);
}
