import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Daemon, getBlockJson, latestHeight, waitFor } from './daemon.js';
import type { Homes } from './homes.js';

/*
 * HA aggregators for the tests with real etcd (test/ha/*): spawned `noded
 * start`, one genesis and one signer key, their own P2P identities.
 */

/** Homes of one chain: the first made by `init --aggregator`, the others given its genesis and signer key. */
export async function haHomes(homes: Homes, chainId: string, count: number): Promise<string[]> {
  const first = await homes.create(chainId, true);
  const rest: string[] = [];
  for (let i = 1; i < count; i++) rest.push(await homes.create(chainId, false));
  for (const home of rest) for (const file of ['genesis.json', 'signer.json']) copyFileSync(join(first, 'config', file), join(home, 'config', file));
  return [first, ...rest];
}

/** The `--node.ha.*` flags of a test cluster; `keyPrefix` keeps tests apart on the one etcd. */
export const haFlags = (etcdEndpoint: string, keyPrefix: string): string[] => ['--node.ha.etcd_endpoints', etcdEndpoint, '--node.ha.key_prefix', keyPrefix];

/** Starts an HA node of the chain. */
export function startHa(home: string, etcdEndpoint: string, da: string, keyPrefix: string, peers: string[], blockTime = '200ms'): Promise<Daemon> {
  return Daemon.start(home, [
    '--node.node.aggregator',
    '--node.node.block_time',
    blockTime,
    '--no-node.da.local',
    '--node.da.address',
    da,
    '--node.ha.enabled',
    ...haFlags(etcdEndpoint, keyPrefix),
    // Above the 2s default: on a loaded machine an etcd call can take a second, and leadership would move about.
    '--node.ha.lease_ttl',
    '4s',
    ...(peers.length > 0 ? ['--node.p2p.peers', peers.join(',')] : []),
  ]);
}

/** The node's HA role as its /status tells it (node_info.other.ha_role), or null when it does not answer. */
export async function roleOf(d: Daemon): Promise<string | null> {
  try {
    const res = (await (await fetch(`${d.status}/status`)).json()) as { result: { node_info: { other: Record<string, string> } } };
    return res.result.node_info.other.ha_role ?? null;
  } catch {
    return null;
  }
}

/** The one running node that says it leads (a loaded machine may move leadership around before it settles). */
export const leaderOf = (nodes: Daemon[]): Promise<Daemon> =>
  waitFor(
    async () => {
      const running = nodes.filter((n) => n.running);
      const roles = await Promise.all(running.map(roleOf));
      const leading = running.filter((_, i) => roles[i] === 'leader');
      return leading.length === 1 ? leading[0] : null;
    },
    'exactly one node to lead',
    60_000,
  );

/** The block part of GetBlock's JSON at `height` (DA heights differ between nodes). */
async function blockAt(rpc: string, height: number): Promise<string> {
  const { status, json, text } = await getBlockJson(rpc, { height });
  expect(status, text).toBe(200);
  return JSON.stringify(json.block);
}

/** Every node holds every height up to the lowest head among them, and all hold the same block there; resolves with that height. */
export async function expectOneBlockPerHeight(nodes: Daemon[]): Promise<number> {
  const heights = await Promise.all(nodes.map((n) => latestHeight(n.rpc)));
  const top = Math.min(...heights);
  for (let h = 1; h <= top; h++) {
    const blocks = new Set(await Promise.all(nodes.map((n) => blockAt(n.rpc, h))));
    expect(blocks.size, `height ${h} has ${blocks.size} different blocks`).toBe(1);
  }
  return top;
}

/**
 * A steady stream of txs to the running nodes in turn (a follower forwards to
 * the leader), every other one with wait=commit: the keys whose answer said
 * committed are the ones that must never be lost. A send to a dead node, or
 * forwarded to a dead leader, fails and is not counted.
 */
export class TxStream {
  /** key → value of each tx answered 200 to POST /tx?wait=commit, and the highest height those answers named. */
  readonly committed = new Map<string, string>();
  committedHeight = 0;
  private sent = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly nodes: () => Daemon[],
    tag: string,
    everyMs = 50,
  ) {
    this.timer = setInterval(() => {
      const running = this.nodes().filter((n) => n.running);
      // At most 100 unanswered: a stalled cluster meets fewer sends, not a pile-up.
      if (running.length === 0 || this.inFlight.size >= 100) return;
      const i = this.sent++;
      const node = running[i % running.length]!;
      const p = this.send(node, `${tag}-${i}`, `v${i}`, i % 2 === 0).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }, everyMs);
  }

  private async send(node: Daemon, key: string, value: string, waitCommit: boolean): Promise<void> {
    try {
      const res = await fetch(`${node.rpc}/tx${waitCommit ? '?wait=commit' : ''}`, { method: 'POST', body: `${key}=${value}` });
      const text = await res.text();
      if (res.status !== 200 || !waitCommit) return;
      this.committed.set(key, value);
      this.committedHeight = Math.max(this.committedHeight, (JSON.parse(text) as { height: number }).height);
    } catch {
      // Refused or cut off: not acknowledged, so not promised.
    }
  }

  /** How many txs were answered committed so far. */
  get committedCount(): number {
    return this.committed.size;
  }

  /** Stops sending and waits for the answers under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
  }
}

/** Every tx answered committed is in the state of every node in `nodes` (once each holds the height its answer named). */
export async function expectCommittedKept(nodes: Daemon[], stream: TxStream): Promise<void> {
  expect(stream.committedCount, 'txs answered committed').toBeGreaterThan(0);
  for (const n of nodes) {
    await waitFor(async () => (await latestHeight(n.rpc)) >= stream.committedHeight, `height ${stream.committedHeight} on ${n.rpc}`, 60_000);
    const found = await Promise.all(
      [...stream.committed.keys()].map(async (key) => {
        const res = await fetch(`${n.rpc}/kv/${encodeURIComponent(key)}`);
        return `${key} on ${n.rpc}: ${res.status} ${await res.text()}`;
      }),
    );
    expect(found).toEqual([...stream.committed].map(([key, value]) => `${key} on ${n.rpc}: 200 ${value}`));
  }
}
