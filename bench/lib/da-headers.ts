import { DaClient, decodeHeaderBlob } from '../../src/da/index.js';
import type { Header } from '../../src/types/index.js';

/**
 * Every header a chain posted to DA, read with blob.GetAll at each DA height
 * from 1 to `head`: the bench's and the tests' way of counting what reached
 * DA. Without a data namespace of its own, block data shares the header
 * namespace (ev-node's default): only blobs that decode as this chain's
 * headers are given.
 */
export async function* chainHeadersOnDa(client: DaClient, chainId: string, headerNamespace: Uint8Array, head: bigint): AsyncGenerator<Header> {
  for (let h = 1n; h <= head; h++) {
    for (const blob of await client.getAll(h, [headerNamespace])) {
      let header;
      try {
        header = decodeHeaderBlob(blob.data).signed.header;
      } catch {
        continue;
      }
      if (header && header.chainId === chainId) yield header;
    }
  }
}
