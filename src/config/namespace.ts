import { createHash } from 'node:crypto';

/** Bytes of a DA namespace: 1 version byte + 28 bytes of id. */
export const NAMESPACE_SIZE = 29;
// Version-0 namespaces: the version byte and the first 18 bytes of the id are zero,
// which leaves 10 bytes for the name's hash.
const NAME_HASH_OFFSET = 19;
const NAME_HASH_SIZE = 10;

/** A namespace written out as the node reports it (GetNamespace): 0x and the hex of its 29 bytes. */
const NAMESPACE_HEX = new RegExp(`^0x[0-9a-fA-F]{${NAMESPACE_SIZE * 2}}$`);

/**
 * The version-0 namespace of `name`, as ev-node's NamespaceFromString
 * (pkg/da/types/namespace.go) makes it from da.namespace (or the chain id);
 * or, for `0x` and 58 hex digits, that namespace as is — what GetNamespace
 * answers, so a node can follow a chain whose namespace name it was not told
 * (`noded init --join`).
 */
export function daNamespace(name: string): Uint8Array {
  if (NAMESPACE_HEX.test(name)) return new Uint8Array(Buffer.from(name.slice(2), 'hex'));
  const namespace = new Uint8Array(NAMESPACE_SIZE);
  namespace.set(createHash('sha256').update(name).digest().subarray(0, NAME_HASH_SIZE), NAME_HASH_OFFSET);
  return namespace;
}

/**
 * The chain's namespaces: headers in da.namespace's, data in
 * da.data_namespace's, or with the headers when that is empty — ev-node's
 * GetDataNamespace (pkg/config/config.go) falls back the same way.
 */
export function daNamespaces(name: string, dataName: string): { header: Uint8Array; data: Uint8Array } {
  const header = daNamespace(name);
  return { header, data: dataName ? daNamespace(dataName) : header };
}
