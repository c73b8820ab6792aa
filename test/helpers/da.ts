import { DaClient, decodeHeaderBlob } from '../../src/da/index.js';
import { daNamespace } from '../../src/config/index.js';
import { NodedProcess } from './daemon.js';

/** A `noded da serve` child process with its admin endpoint, for multi-node tests. */
export class DaServer extends NodedProcess {
  address = '';
  admin = '';
  /** The --token it was started with: the admin listener wants it too. */
  token = '';

  static async start(home: string, args: string[] = []): Promise<DaServer> {
    const s = new DaServer([
      'da', 'serve', '--home', home, '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--block-time', '100ms', '--log-format', 'json', ...args,
    ]);
    const rec = await s.waitForLog('local DA serving', 'the DA server to listen');
    s.address = String(rec.address);
    s.admin = String(rec.admin);
    const token = args.indexOf('--token');
    if (token !== -1) s.token = args[token + 1]!;
    return s;
  }

  private adminHeaders(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  async setFaults(faults: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${this.admin}/faults`, { method: 'POST', headers: { 'content-type': 'application/json', ...this.adminHeaders() }, body: JSON.stringify(faults) });
    if (res.status !== 200) throw new Error(`setting faults failed: ${res.status} ${await res.text()}`);
  }

  async submissions(): Promise<Array<{ height?: number; ok?: boolean; tx_config?: { gas_price: number }; txConfig?: { gas_price: number } }>> {
    return (await (await fetch(`${this.admin}/submissions`, { headers: this.adminHeaders() })).json()) as never;
  }
}

/**
 * How many times each block height's header was posted to DA for a chain:
 * reads every DA height up to the head.
 */
export async function headerPostings(daAddress: string, chainId: string, token = ''): Promise<Map<bigint, number>> {
  const client = new DaClient({ address: daAddress, authToken: token, requestTimeoutMs: 5000 });
  try {
    const head = await client.networkHead();
    const ns = daNamespace(chainId);
    const counts = new Map<bigint, number>();
    for (let h = 1n; h <= head; h++) {
      for (const blob of await client.getAll(h, [ns])) {
        // Block data shares the namespace (ev-node's default): count only what decodes as this chain's header.
        let header;
        try {
          header = decodeHeaderBlob(blob.data).signed.header;
        } catch {
          continue;
        }
        if (!header || header.chainId !== chainId || header.proposerAddress.length === 0) continue;
        counts.set(header.height, (counts.get(header.height) ?? 0) + 1);
      }
    }
    return counts;
  } finally {
    await client.close();
  }
}
