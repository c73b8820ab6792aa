import type { ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { daNamespaces } from '../../src/config/index.js';
import { DaClient } from '../../src/da/index.js';
import { initHome } from '../../src/home/index.js';
import { headerHash } from '../../src/types/index.js';
import { chainHeadersOnDa } from './da-headers.js';
import { packageRoot } from './node.js';
import { exited, type Scope } from './scope.js';

/*
 * HA aggregators for the failover figure: spawned `noded start` children of
 * one chain (one genesis, one signer key, their own P2P identities) on one
 * etcd and one DA, killed and restarted by the figure.
 */

export const HA_CHAIN_ID = 'bench-ha';

/** BENCH_HA_LOG_DIR: a directory each node's whole log is appended to (<home name>.log), to see where a takeover's time went. */
const logDir = process.env.BENCH_HA_LOG_DIR ?? '';

/** Homes of one chain: the first made as the aggregator's, the others given its genesis and signer key. */
export function haHomes(scope: Scope, count: number): string[] {
  const homes = Array.from({ length: count }, () => scope.tempDir('noded-bench-ha-'));
  homes.forEach((home, i) => initHome({ home, chainId: HA_CHAIN_ID, aggregator: i === 0, force: false }));
  for (const home of homes.slice(1))
    for (const file of ['genesis.json', 'signer.json']) copyFileSync(join(homes[0]!, 'config', file), join(home, 'config', file));
  return homes;
}

/** What one HA node is started with. */
export interface HaNodeSpec {
  home: string;
  etcd: string;
  da: string;
  blockTimeMs: number;
  leaseTtl: string;
}

/** One HA node's process: its listeners as its "node started" line tells them, killed with the scope. */
export class HaNode {
  rpc = '';
  status = '';
  p2p = '';
  private child: ChildProcess | null = null;
  private stderrTail = '';

  constructor(
    private readonly scope: Scope,
    readonly spec: HaNodeSpec,
  ) {}

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it (again) dialing `peers`; resolves once it logged "node started". */
  async start(peers: string[]): Promise<void> {
    const { home, etcd, da, blockTimeMs, leaseTtl } = this.spec;
    const args = [
      `${packageRoot()}bin/run.js`,
      'start',
      '--home',
      home,
      '--node.node.aggregator',
      '--node.node.block_time',
      `${blockTimeMs}ms`,
      '--no-node.da.local',
      '--node.da.address',
      da,
      '--node.ha.enabled',
      '--node.ha.etcd_endpoints',
      etcd,
      '--node.ha.lease_ttl',
      leaseTtl,
      '--node.rpc.address',
      '127.0.0.1:0',
      '--node.rpc.status_address',
      '127.0.0.1:0',
      '--node.p2p.listen_address',
      '/ip4/127.0.0.1/tcp/0',
      '--node.log.format',
      'json',
      // Uncapped: a new leader's DA submitter catching up must not pause production and blur the takeover gap.
      '--node.node.max_pending_blocks',
      '0',
      ...(peers.length ? ['--node.p2p.peers', peers.join(',')] : []),
    ];
    const child = this.scope.spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    this.stderrTail = '';
    const started = new Promise<Record<string, unknown>>((resolve, reject) => {
      let partial = '';
      child.stderr!.on('data', (d: Buffer) => {
        if (logDir) appendFileSync(join(logDir, `${basename(home)}.log`), d);
        this.stderrTail = (this.stderrTail + d.toString()).slice(-8_000);
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        const line = lines.find((l) => l.includes('"node started"'));
        if (line) resolve(JSON.parse(line) as Record<string, unknown>);
      });
      void exited(child).then((code) => reject(new Error(`noded start --home ${home} exited with ${code} before it started:\n${this.stderrTail}`)));
    });
    const rec = await started;
    this.rpc = `http://${String(rec.rpc)}`;
    this.status = `http://${String(rec.status)}`;
    this.p2p = (rec.p2p as string[])[0]!;
  }

  /** kill -9, and waits for the exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGKILL');
    await exited(child);
  }

  /** Its HA role from /status (null when it does not answer). */
  async role(): Promise<string | null> {
    try {
      const res = (await (await fetch(`${this.status}/status`)).json()) as { result: { node_info: { other: Record<string, string> } } };
      return res.result.node_info.other.ha_role ?? null;
    } catch {
      return null;
    }
  }

  /** The last lines it logged, for an error. */
  get tail(): string {
    return this.stderrTail;
  }
}

/** The one running node that says it leads, once exactly one does; rejects after `ms`. */
export async function leaderOf(nodes: HaNode[], ms = 60_000): Promise<HaNode> {
  const deadline = Date.now() + ms;
  for (;;) {
    const running = nodes.filter((n) => n.running);
    const roles = await Promise.all(running.map((n) => n.role()));
    const leading = running.filter((_, i) => roles[i] === 'leader');
    if (leading.length === 1) return leading[0]!;
    if (Date.now() > deadline) throw new Error(`no single leader within ${ms} ms (roles: ${roles.join(', ')})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One block of a node's chain as the figure reads it: its header time and hash, and its txs' keys. */
export interface ChainBlock {
  height: number;
  /** Header time, ms since the epoch. */
  timeMs: number;
  hash: string;
  txKeys: string[];
}

interface BlockJson {
  block: { header: { header: { height: number; time: number | string } }; data: { txs: string[] } };
  header_hash?: string;
}

/** The node's head height (0 when it does not answer). */
export async function headOf(rpc: string): Promise<number> {
  const res = await fetch(`${rpc}/node_info`).catch(() => null);
  return res?.ok ? ((await res.json()) as { height: number }).height : 0;
}

/** The node's blocks 1..`top` (GetBlock over Connect JSON), eight requests at a time. */
export async function chainBlocks(rpc: string, top: number): Promise<ChainBlock[]> {
  const blocks = new Array<ChainBlock>(top);
  const fetchOne = async (height: number) => {
    const res = await fetch(`${rpc}/node.v1.StoreService/GetBlock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ height }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GetBlock ${height} on ${rpc}: ${res.status} ${text}`);
    const json = JSON.parse(text) as BlockJson;
    const txKeys = (json.block.data.txs ?? []).map((b64) => {
      const tx = Buffer.from(b64, 'base64').toString('latin1');
      return tx.slice(0, tx.indexOf('='));
    });
    // The block's identity: its header as the node serves it (every field, time and hashes included).
    blocks[height - 1] = { height, timeMs: Number(BigInt(json.block.header.header.time) / 1_000_000n), hash: JSON.stringify(json.block.header), txKeys };
  };
  for (let h = 1; h <= top; h += 8) await Promise.all(Array.from({ length: Math.min(8, top - h + 1) }, (_, i) => fetchOne(h + i)));
  return blocks;
}

/** For each block height posted to DA, the distinct header hashes posted there (one, unless two blocks were made at that height). */
export async function daHeaderHashes(daAddress: string): Promise<Map<number, Set<string>>> {
  const client = new DaClient({ address: daAddress, authToken: '', requestTimeoutMs: 10_000 });
  try {
    const seen = new Map<number, Set<string>>();
    const headers = chainHeadersOnDa(client, HA_CHAIN_ID, daNamespaces(HA_CHAIN_ID, '').header, await client.networkHead());
    for await (const header of headers) {
      const height = Number(header.height);
      const hashes = seen.get(height) ?? new Set<string>();
      hashes.add(Buffer.from(headerHash(header)).toString('hex'));
      seen.set(height, hashes);
    }
    return seen;
  } finally {
    await client.close();
  }
}
