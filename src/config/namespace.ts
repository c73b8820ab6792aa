import { createHash } from 'node:crypto';
import { ConfigError } from './errors.js';

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

const hex = (ns: Uint8Array) => `0x${Buffer.from(ns).toString('hex')}`;

/**
 * The forced-inclusion namespace of da.forced_inclusion_namespace (null when
 * empty: forced inclusion off), checked against the chain's header and data
 * namespaces, and node.based against it and node.aggregator. Throws a
 * ConfigError naming each problem; called at start, when the chain id is known.
 */
export function forcedInclusionNamespace(
  config: { da: { namespace: string; data_namespace: string; forced_inclusion_namespace: string }; node: { based: boolean; aggregator: boolean } },
  chainId: string,
): Uint8Array | null {
  const problems: string[] = [];
  const name = config.da.forced_inclusion_namespace;
  const forced = name ? daNamespace(name) : null;
  if (forced) {
    const { header, data } = daNamespaces(config.da.namespace || chainId, config.da.data_namespace);
    const clash = (ns: Uint8Array) => Buffer.compare(ns, forced) === 0;
    if (clash(header)) {
      problems.push(
        `da.forced_inclusion_namespace: got ${JSON.stringify(name)} (${hex(forced)}), which is the header namespace (da.namespace${config.da.namespace ? '' : ', from the chain id'}); expected a namespace of its own, like ${JSON.stringify(`${chainId}-forced`)}`,
      );
    } else if (clash(data)) {
      problems.push(
        `da.forced_inclusion_namespace: got ${JSON.stringify(name)} (${hex(forced)}), which is the data namespace (da.data_namespace); expected a namespace of its own, like ${JSON.stringify(`${chainId}-forced`)}`,
      );
    }
  }
  if (config.node.based && !forced)
    problems.push('node.based: based mode derives blocks from the forced-inclusion namespace; set da.forced_inclusion_namespace too');
  if (config.node.based && config.node.aggregator)
    problems.push('node.based: a based node has no aggregator; set node.aggregator to false (--no-node.node.aggregator) or turn node.based off');
  if (problems.length > 0) throw new ConfigError('CONFIG_INVALID', problems);
  return forced;
}
