import { spawn, type ChildProcess } from 'node:child_process';
import { DaClient, decodeHeaderBlob } from '../../src/da/index.js';
import { daNamespace } from '../../src/config/index.js';
import { RUN_JS, WaitAborted, waitFor } from './daemon.js';

/** A `noded da serve` child process with its admin endpoint, for multi-node tests. */
export class DaServer {
  stderr = '';
  address = '';
  admin = '';
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    child.stderr!.on('data', (d) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    servers.add(this);
  }

  static async start(home: string, args: string[] = []): Promise<DaServer> {
    const child = spawn(
      process.execPath,
      [RUN_JS, 'da', 'serve', '--home', home, '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--block-time', '100ms', '--log-format', 'json', ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.resume();
    const s = new DaServer(child);
    await waitFor(() => {
      const line = s.stderr.split('\n').find((l) => l.includes('local DA serving'));
      if (!line) {
        if (child.exitCode !== null) throw new WaitAborted(`da serve exited with ${child.exitCode}:\n${s.stderr}`);
        return null;
      }
      const rec = JSON.parse(line);
      s.address = rec.address;
      s.admin = rec.admin;
      return true;
    }, 'the DA server to listen');
    return s;
  }

  async setFaults(faults: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${this.admin}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults) });
    if (res.status !== 200) throw new Error(`setting faults failed: ${res.status} ${await res.text()}`);
  }

  async submissions(): Promise<Array<{ height?: number; ok?: boolean; tx_config?: { gas_price: number }; txConfig?: { gas_price: number } }>> {
    return (await (await fetch(`${this.admin}/submissions`)).json()) as never;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

const servers = new Set<DaServer>();

export async function killDaServers(): Promise<void> {
  await Promise.all([...servers].map((s) => s.kill()));
  servers.clear();
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
        const height = decodeHeaderBlob(blob.data).header!.height;
        counts.set(height, (counts.get(height) ?? 0) + 1);
      }
    }
    return counts;
  } finally {
    await client.close();
  }
}
