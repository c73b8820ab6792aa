import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './daemon.js';
import { Spawned } from './spawned.js';
import { WaitAborted, waitFor } from './wait.js';

/**
 * A real etcd (Debian's etcd-server, installed by .ci/run) on 127.0.0.1 with
 * free client and peer ports and a temp data dir. stop() and start() again keep
 * the data dir and ports (the fault tests' "etcd went away and came back");
 * remove() kills it and deletes the dir: call it from afterAll.
 */
export class EtcdServer {
  private process: Spawned | null = null;
  private readonly dataDir = mkdtempSync(join(tmpdir(), 'noded-etcd-'));

  private constructor(
    private readonly clientPort: number,
    private readonly peerPort: number,
  ) {}

  /** The client URL, for ha.etcd_endpoints. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.clientPort}`;
  }

  static async start(): Promise<EtcdServer> {
    const etcd = new EtcdServer(await freePort(), await freePort());
    await etcd.start();
    return etcd;
  }

  /** Starts etcd (again) and waits until its /health says it is healthy. */
  async start(): Promise<void> {
    if (this.process?.running) return;
    const peer = `http://127.0.0.1:${this.peerPort}`;
    const child = spawn(
      'etcd',
      [
        '--name=test',
        `--data-dir=${this.dataDir}`,
        `--listen-client-urls=${this.endpoint}`,
        `--advertise-client-urls=${this.endpoint}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=test=${peer}`,
        '--log-level=warn',
        // A block recorded for takeover can be as large as a DA blob (about 2 MB); etcd's default request cap is 1.5 MiB.
        '--max-request-bytes=8388608',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const process = new Spawned(child, `etcd on ${this.endpoint}`);
    this.process = process;
    await waitFor(
      async () => {
        if (!process.running) throw new WaitAborted(`etcd exited before it was healthy\n${process.describe()}`);
        const res = await fetch(`${this.endpoint}/health`);
        return res.ok && ((await res.json()) as { health?: string }).health === 'true';
      },
      `etcd on ${this.endpoint} to be healthy`,
      30_000,
    );
  }

  /** Kills etcd (SIGKILL: the network went away, no goodbye) and waits for it to exit; the data stays. */
  async stop(): Promise<void> {
    const process = this.process;
    this.process = null;
    if (!process?.running) return;
    process.child.kill('SIGKILL');
    await process.exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
