import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { txProof } from '../../src/rpc/status/tx-methods.js';

// The `tx` method's proof against CometBFT's own rules: RFC 6962 hashing (crypto/merkle/rfc6962_test.go vectors)
// over the txs' sha256 (types/tx.go, Txs.Proof), checked with CometBFT's computeHashFromAunts (crypto/merkle/proof.go).

const sha256 = (...parts: Uint8Array[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leaf = (b: Uint8Array) => sha256(Buffer.from([0]), b);
const inner = (l: Uint8Array, r: Uint8Array) => sha256(Buffer.from([1]), l, r);
const splitPoint = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);

/** CometBFT's computeHashFromAunts: the root a leaf and its aunts (deepest first) give. */
function rootFromAunts(index: number, total: number, leafHash: Uint8Array, aunts: Uint8Array[]): Uint8Array {
  if (total === 1) {
    expect(aunts).toEqual([]);
    return leafHash;
  }
  const k = splitPoint(total);
  const last = aunts.at(-1)!;
  return index < k
    ? inner(rootFromAunts(index, k, leafHash, aunts.slice(0, -1)), last)
    : inner(last, rootFromAunts(index - k, total - k, leafHash, aunts.slice(0, -1)));
}

describe('tx proof', () => {
  it('hashes as RFC 6962: the vectors CometBFT tests its hasher with', () => {
    expect(leaf(Buffer.from('L123456')).toString('hex')).toBe('395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56');
    expect(inner(Buffer.from('N123'), Buffer.from('N456')).toString('hex')).toBe('aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb');
  });

  it("a three-tx block: the root splits 2 + 1, and each proof verifies with CometBFT's algorithm", () => {
    const txs = ['a=1', 'b=2', 'c=3'].map((t) => Buffer.from(t));
    const [a, b, c] = txs.map((tx) => leaf(sha256(tx)));
    const root = inner(inner(a!, b!), c!).toString('hex').toUpperCase();
    expect(txProof(txs, 2)).toEqual({
      root_hash: root,
      data: Buffer.from('c=3').toString('base64'),
      proof: { total: '3', index: '2', leaf_hash: c!.toString('base64'), aunts: [inner(a!, b!).toString('base64')] },
    });
    expect(txProof(txs, 0).proof.aunts).toEqual([b!.toString('base64'), c!.toString('base64')]);
  });

  it('every index of blocks of 1 to 9 txs proves to the same root', () => {
    for (let n = 1; n <= 9; n++) {
      const txs = Array.from({ length: n }, (_, i) => Buffer.from(`k${i}=v`));
      const roots = new Set<string>();
      for (let i = 0; i < n; i++) {
        const { root_hash, proof } = txProof(txs, i);
        expect(proof).toMatchObject({ total: String(n), index: String(i) });
        const computed = rootFromAunts(
          i,
          n,
          Buffer.from(proof.leaf_hash, 'base64'),
          proof.aunts.map((x) => Buffer.from(x, 'base64')),
        );
        expect(Buffer.from(computed).toString('hex').toUpperCase()).toBe(root_hash);
        roots.add(root_hash);
      }
      expect(roots.size).toBe(1);
    }
  });
});
