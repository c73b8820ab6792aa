import { chainHeadersOnDa } from '../../bench/lib/da-headers.js';
import { DaClient, decodeDataBlob, type DaSubmission } from '../../src/da/index.js';
import { daNamespaces } from '../../src/config/index.js';
import { NodedProcess, waitFor } from './daemon.js';

/** A `noded da serve` child process with its admin endpoint, for multi-node tests. */
export class DaServer extends NodedProcess {
  address = '';
  admin = '';
  /** The --token it was started with: the admin listener wants it too. */
  token = '';

  static async start(home: string, args: string[] = []): Promise<DaServer> {
    const blockTime = args.includes('--block-time') ? [] : ['--block-time', '100ms'];
    const admin = args.includes('--admin') ? [] : ['--admin', '127.0.0.1:0'];
    const s = new DaServer(['da', 'serve', '--home', home, '--listen', '127.0.0.1:0', ...admin, ...blockTime, '--log-format', 'json', ...args]);
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
    const res = await fetch(`${this.admin}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...this.adminHeaders() },
      body: JSON.stringify(faults),
    });
    if (res.status !== 200) throw new Error(`setting faults failed: ${res.status} ${await res.text()}`);
  }

  async submissions(): Promise<DaSubmission[]> {
    return (await (await fetch(`${this.admin}/submissions`, { headers: this.adminHeaders() })).json()) as never;
  }

  async faults(): Promise<Record<string, unknown>> {
    return (await (await fetch(`${this.admin}/faults`, { headers: this.adminHeaders() })).json()) as never;
  }

  /**
   * Waits for a `blob.Submit` after the first `after` ones that the DA took and
   * matches `state`: 'waiting' for its DA block, or 'included' (its answer may
   * still be held back by slowSubmitAnswersMs). Returns how many there are now.
   */
  async waitForSubmission(after: number, state: 'waiting' | 'included', timeoutMs = 60_000): Promise<number> {
    return waitFor(
      async () => {
        const all = await this.submissions();
        const found = all.slice(after).some((s) => s.ok && (state === 'waiting' ? s.height === null : s.height !== null));
        return found ? all.length : null;
      },
      `a submission ${state === 'waiting' ? 'waiting for its DA block' : 'included'} at the DA server`,
      timeoutMs,
    );
  }
}

/** How many times each block height's header and data were posted to DA, and how many DA heights were read. */
export interface Postings {
  headers: Map<bigint, number>;
  /** Only with a data namespace of its own (da.data_namespace). */
  data: Map<bigint, number>;
  daHeights: bigint;
}

const count = (m: Map<bigint, number>, height: bigint) => m.set(height, (m.get(height) ?? 0) + 1);

/**
 * Every blob a chain posted to DA, read with blob.GetAll at every DA height up
 * to the head. Give `dataNamespace` when the chain set da.data_namespace.
 */
export async function blobPostings(daAddress: string, chainId: string, dataNamespace = '', token = ''): Promise<Postings> {
  const client = new DaClient({ address: daAddress, authToken: token, requestTimeoutMs: 5000 });
  try {
    const head = await client.networkHead();
    const ns = daNamespaces(chainId, dataNamespace);
    const postings: Postings = { headers: new Map(), data: new Map(), daHeights: head };
    for await (const header of chainHeadersOnDa(client, chainId, ns.header, head)) {
      // Block data in the same namespace can decode as a header of this chain: a real header names its proposer.
      if (header.proposerAddress.length > 0) count(postings.headers, header.height);
    }
    if (!dataNamespace) return postings;
    for (let h = 1n; h <= head; h++) {
      for (const blob of await client.getAll(h, [ns.data])) {
        const metadata = decodeDataBlob(blob.data).data.metadata;
        if (metadata?.chainId === chainId) count(postings.data, metadata.height);
      }
    }
    return postings;
  } finally {
    await client.close();
  }
}

/** How many times each block height's header was posted to DA for a chain (data in the same namespace). */
export async function headerPostings(daAddress: string, chainId: string, token = ''): Promise<Map<bigint, number>> {
  return (await blobPostings(daAddress, chainId, '', token)).headers;
}
