import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Mempool, type CommittedTxs } from '../../src/exec/mempool.js';
import type { TxLocation } from '../../src/store/index.js';

const tx = (s: string) => new TextEncoder().encode(s);
const digestHex = (t: Uint8Array) => createHash('sha256').update(t).digest('hex');

/** A tx index in memory that counts its lookups. */
class Index implements CommittedTxs {
  calls = 0;
  at = 1n;
  readonly entries = new Map<string, TxLocation>();
  height(): bigint {
    return this.at;
  }
  async getTxLocations(hashes: Uint8Array[]): Promise<Array<TxLocation | null>> {
    this.calls++;
    return hashes.map((h) => this.entries.get(Buffer.from(h).toString('hex')) ?? null);
  }
}

describe('Mempool admission', () => {
  it('looks up txs that arrive together in one index read, and a block taken after settled() holds them all', async () => {
    const index = new Index();
    const mempool = new Mempool({ maxTxs: 100, maxTxBytes: 64 }, index);
    const adds = Array.from({ length: 50 }, (_, i) => mempool.add(tx(`k${i}=v`)));
    await mempool.settled();
    expect(index.calls).toBe(1);
    expect(mempool.take(1000, 1 << 20)).toHaveLength(50);
    await Promise.all(adds);
  });

  it('refuses a committed tx naming its block, a second copy while the first is looked up, and past maxTxs', async () => {
    const index = new Index();
    index.entries.set(digestHex(tx('old=1')), { height: 7n, index: 2 });
    const mempool = new Mempool({ maxTxs: 2, maxTxBytes: 64 }, index);
    await expect(mempool.add(tx('old=1'))).rejects.toThrow('tx already committed in block 7 (index 2)');
    const first = mempool.add(tx('a=1'));
    await expect(mempool.add(tx('a=1'))).rejects.toThrow('tx already in mempool');
    const second = mempool.add(tx('b=1'));
    await expect(mempool.add(tx('c=1'))).rejects.toThrow(/mempool full \(2 txs waiting\)/);
    await Promise.all([first, second]);
    expect(mempool.size).toBe(2);
  });

  it('reads the index again when a block lands during the lookup', async () => {
    const index = new Index();
    const mempool = new Mempool({ maxTxs: 10, maxTxBytes: 64 }, index);
    const late = tx('late=1');
    const lookups = index.getTxLocations.bind(index);
    // The first read misses the tx; a block holding it commits before the read returns.
    index.getTxLocations = async (hashes) => {
      const out = await lookups(hashes);
      if (index.calls === 1) {
        index.entries.set(digestHex(late), { height: 2n, index: 0 });
        index.at = 2n;
      }
      return out;
    };
    await expect(mempool.add(late)).rejects.toThrow('tx already committed in block 2');
    expect(index.calls).toBe(2);
  });
});
