import { decodeHeaderBlob, type Blob } from '../../src/da/index.js';

/**
 * How many header blobs in the headers' namespace `blobs` hold of each block
 * height: [height, count], in height order. A block posted twice counts 2.
 */
export function headerPostsPerHeight(blobs: Blob[], headerNamespace: Uint8Array): Array<[number, number]> {
  const counts = new Map<number, number>();
  for (const blob of blobs) {
    if (Buffer.compare(blob.namespace, headerNamespace) !== 0) continue;
    let height: number;
    try {
      height = Number(decodeHeaderBlob(blob.data).signed.header!.height);
    } catch {
      continue; // a data blob in the headers' namespace
    }
    counts.set(height, (counts.get(height) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => a - b);
}
