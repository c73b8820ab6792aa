import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { request } from 'undici';
import { EVM_DEVNET_CHAIN_ID } from '../../src/exec/evm/index.js';

const common = createCustomCommon({ chainId: EVM_DEVNET_CHAIN_ID }, Mainnet, { hardfork: Hardfork.Cancun });

/** A signed EIP-1559 transfer of `valueWei` on an `init --execution evm` chain, as 0x-hex for eth_sendRawTransaction. */
export function signTransfer(privateKey: string, to: string, valueWei: bigint, nonce: number): string {
  const tx = createFeeMarket1559Tx(
    {
      nonce: BigInt(nonce),
      to: to as `0x${string}`,
      value: valueWei,
      gasLimit: 21_000n,
      maxFeePerGas: 1_000_000_000n,
      maxPriorityFeePerGas: 1n,
      chainId: BigInt(EVM_DEVNET_CHAIN_ID),
    },
    { common },
  ).sign(Buffer.from(privateKey.slice(2), 'hex'));
  return `0x${Buffer.from(tx.serialize()).toString('hex')}`;
}

/** One eth_* JSON-RPC call (no JWT: the execution client's public port). */
export async function ethCall<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.body.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
