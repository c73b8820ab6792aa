import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import { BlockStore } from '../../src/store/index.js';
import { FilterStatus, KvExecutor, Mempool, filterBySize } from '../../src/exec/index.js';
import { isEthereumTx } from '../../src/exec/evm/tx-shape.js';
import { tempHome } from '../helpers/daemon.js';

const enc = (s: string) => new TextEncoder().encode(s);
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('FilterTxs (ev-node core/execution/execution.go semantics)', () => {
  it('by size: ok in order, postpone once the cumulative size would pass maxBytes, remove a tx too big on its own or invalid; 0 = no limit', async () => {
    const txs = ['aaaa', 'bbbb', 'cccccccccccc', 'dd', 'bad'].map(enc);
    const valid = (tx: Uint8Array) => tx[0] !== 0x62 || tx.length === 4;
    expect(await filterBySize(txs, 10, (tx) => valid(tx) && tx.length !== 3)).toEqual([
      FilterStatus.ok,
      FilterStatus.ok,
      FilterStatus.remove,
      FilterStatus.ok,
      FilterStatus.remove,
    ]);
    expect(await filterBySize(txs.slice(0, 3), 6, () => true)).toEqual([FilterStatus.ok, FilterStatus.postpone, FilterStatus.remove]);
    expect(await filterBySize(txs, 0, () => true)).toEqual(txs.map(() => FilterStatus.ok));
  });

  it('kv removes what is not key=value', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    const store = await BlockStore.open(join(home.dir, 'store'));
    cleanups.push(() => store.close());
    const exec = new KvExecutor(store, new Mempool({ maxTxs: 10, maxTxBytes: 1024, retryAfterSeconds: 1 }, store));
    expect(await exec.filterTxs(['a=1', 'gibberish', '=x', 'b='].map(enc), 0)).toEqual([
      FilterStatus.ok,
      FilterStatus.remove,
      FilterStatus.remove,
      FilterStatus.ok,
    ]);
  });

  it('evm takes signed legacy and typed txs, and removes gibberish, truncated or padded ones', () => {
    const common = createCustomCommon({ chainId: 1337 }, Mainnet, { hardfork: Hardfork.Cancun });
    const key = Buffer.alloc(32, 7);
    const typed = createFeeMarket1559Tx(
      { to: `0x${'11'.repeat(20)}`, value: 1n, gasLimit: 21000n, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n, nonce: 0n },
      { common },
    )
      .sign(key)
      .serialize();
    const legacy = createLegacyTx({ to: `0x${'22'.repeat(20)}`, value: 5n, gasLimit: 21000n, gasPrice: 10n, nonce: 3n }, { common })
      .sign(key)
      .serialize();
    expect(isEthereumTx(typed)).toBe(true);
    expect(isEthereumTx(legacy)).toBe(true);
    expect(isEthereumTx(enc('a=1'))).toBe(false);
    expect(isEthereumTx(typed.subarray(0, typed.length - 1))).toBe(false);
    expect(isEthereumTx(new Uint8Array([...legacy, 0]))).toBe(false);
    expect(isEthereumTx(new Uint8Array([0x09, ...typed.subarray(1)]))).toBe(false);
  });
});
