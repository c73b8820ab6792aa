import type { ChildProcess } from 'node:child_process';
import { packageRoot } from './node.js';
import { freePort } from './ports.js';
import { exited, type Scope } from './scope.js';

export interface Devnet {
  child: ChildProcess;
  /** http://127.0.0.1:<port> of the store RPC listener (POST /tx, GET /node_info). */
  rpc: string;
}

/**
 * Node options for the spawned devnet, from BENCH_DEVNET_NODE_ARGS: a figure's
 * node is a child, so `node --cpu-prof dist/bench/run.js` profiles only the
 * load; `BENCH_DEVNET_NODE_ARGS='--cpu-prof --cpu-prof-dir /tmp/prof'` profiles
 * the devnet itself (node refuses --cpu-prof in NODE_OPTIONS).
 */
function childNodeArgs(): string[] {
  return (process.env.BENCH_DEVNET_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
}

export interface DevnetTimes {
  blockTimeMs: number;
  daBlockTimeMs: number;
}

/**
 * A real `noded start --dev` devnet, spawned in a fresh home with the built-in
 * DA, every listener on a free loopback port; resolves once /health/ready
 * answers 200, and is stopped when the scope closes. Its stderr's tail goes
 * into the error if it exits early.
 */
export async function startDevnet(scope: Scope, times: DevnetTimes): Promise<Devnet> {
  const port = await freePort();
  const args = [
    ...childNodeArgs(),
    `${packageRoot()}bin/run.js`,
    'start',
    '--dev',
    '--home',
    scope.tempDir('noded-bench-devnet-'),
    '--node.node.block_time',
    `${times.blockTimeMs}ms`,
    '--node.da.block_time',
    `${times.daBlockTimeMs}ms`,
    '--node.rpc.address',
    `127.0.0.1:${port}`,
    '--node.rpc.status_address',
    '127.0.0.1:0',
    '--node.p2p.listen_address',
    '/ip4/127.0.0.1/tcp/0',
    // The built-in DA on an ephemeral port too, so a DA on 26658 elsewhere cannot clash.
    '--node.da.address',
    'http://127.0.0.1:0',
  ];
  const child = scope.spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
  const rpc = `http://127.0.0.1:${port}`;
  let exitedEarly = false;
  void exited(child).then(() => (exitedEarly = true));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exitedEarly) throw new Error(`noded start --dev exited with ${child.exitCode} before it was ready:\n${stderr}`);
    const ready = await fetch(`${rpc}/health/ready`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return { child, rpc };
    if (Date.now() > deadline) throw new Error(`noded start --dev not ready within 60 s:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One look at GET /node_info: the node's height and DA-included height at time `at` (performance.now()). */
interface NodeLook {
  at: number;
  height: number;
  included: number;
}

/**
 * Polls a devnet's GET /node_info every `everyMs` (an in-memory answer, light
 * beside the load) to learn when each height is on DA and how fast blocks come.
 */
export class NodeWatch {
  private readonly looks: NodeLook[] = [];
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly rpc: string,
    everyMs: number,
  ) {
    this.loop = (async () => {
      while (!this.stopped) {
        const sentAt = performance.now();
        const info = (await (await fetch(`${this.rpc}/node_info`)).json()) as { height: number; da: { included_height: number } };
        // The answer reflects the node somewhere between the request and the response: the midpoint.
        this.looks.push({ at: (sentAt + performance.now()) / 2, height: info.height, included: info.da.included_height });
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
  }

  /** Stops polling; rejects if a poll failed. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  get lastIncluded(): number {
    return this.looks.at(-1)?.included ?? 0;
  }

  /** When `height` was first seen on DA: the midpoint between the last look without it and the first with it; NaN if not yet. */
  includedAt(height: number): number {
    const i = this.firstLook((l) => l.included >= height);
    if (i < 0) return Number.NaN;
    return i === 0 ? this.looks[0]!.at : (this.looks[i - 1]!.at + this.looks[i]!.at) / 2;
  }

  /** The mean time between blocks over the looks from `from` to `to` (performance.now() times). */
  blockIntervalMs(from: number, to: number): number {
    const inside = this.looks.filter((l) => l.at >= from && l.at <= to);
    const [first, last] = [inside[0], inside.at(-1)];
    if (!first || !last || last.height === first.height) return Number.NaN;
    return (last.at - first.at) / (last.height - first.height);
  }

  private firstLook(test: (l: NodeLook) => boolean): number {
    // Looks are in time order and heights only grow: binary search.
    let [lo, hi] = [0, this.looks.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (test(this.looks[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo < this.looks.length ? lo : -1;
  }
}
