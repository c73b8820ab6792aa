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
export function startHa(home: string, etcdEndpoint: string, da: string, keyPrefix: string, peers: string[]): Promise<Daemon> {
  return Daemon.start(home, [
    '--node.node.aggregator',
    '--node.node.block_time',
    '200ms',
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
