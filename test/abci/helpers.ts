import { Comet38Client } from '@cosmjs/tendermint-rpc';
import { NodedProcess } from '../helpers/daemon.js';

/** The reference kvstore app as its own process (`noded abci kvstore`), as a Cosmos-SDK app runs beside a node. */
export class KvStoreProcess extends NodedProcess {
  static async start(home: string, address: string): Promise<KvStoreProcess> {
    const app = new KvStoreProcess(['abci', 'kvstore', '--home', home, '--address', address, '--log-format', 'json']);
    await app.waitForLog('ABCI app listening', 'the kvstore app to listen');
    return app;
  }
}

/** `--node.execution.*` flags for a node driving the app at `address`. */
export const abciFlags = (address: string) => ['--node.execution.type', 'abci', '--node.execution.abci_address', address];

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** A key's value as the app behind the node at `status` answers /abci_query (empty when absent). */
export async function queryKey(status: string, key: string): Promise<string> {
  const client = await Comet38Client.connect(status);
  try {
    const r = await client.abciQuery({ path: '/store', data: enc(key) });
    return dec(r.value);
  } finally {
    client.disconnect();
  }
}

export async function postTx(rpc: string, tx: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${rpc}/tx`, { method: 'POST', body: tx });
  return { status: res.status, body: await res.text() };
}
