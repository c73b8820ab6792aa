import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdArgs, etcdEndpoint, etcdHealthy, type EtcdPlace } from '../../bench/lib/etcd.js';
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
  private constructor(private readonly place: EtcdPlace) {}

  /** The client URL, for ha.etcd_endpoints. */
  get endpoint(): string {
    return etcdEndpoint(this.place);
  }

  static async start(): Promise<EtcdServer> {
    const etcd = new EtcdServer({ dataDir: mkdtempSync(join(tmpdir(), 'noded-etcd-')), clientPort: await freePort(), peerPort: await freePort() });
    await etcd.start();
    return etcd;
  }

  /** Starts etcd (again) and waits until its /health says it is healthy. */
  async start(): Promise<void> {
    if (this.process?.running) return;
    const child = spawn('etcd', etcdArgs(this.place), { stdio: ['ignore', 'ignore', 'pipe'] });
    const process = new Spawned(child, `etcd on ${this.endpoint}`);
    this.process = process;
    await waitFor(
      async () => {
        if (!process.running) throw new WaitAborted(`etcd exited before it was healthy\n${process.describe()}`);
        return etcdHealthy(this.endpoint);
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
    rmSync(this.place.dataDir, { recursive: true, force: true });
  }
}
