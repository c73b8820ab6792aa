import type { ChildProcess } from 'node:child_process';
import { ownPeerAddress, type ConfigFlags } from '../../src/config/index.js';
import { readHome } from '../../src/home/index.js';
import type { DaFaults } from '../../src/da/index.js';
import {
  createAggregatorHome,
  createFullNodeHome,
  openNode,
  packageRoot,
  produceFullBlocks,
  startLocalDa,
  startProducing,
  until,
  withDeadline,
} from './node.js';
import { freePort } from './ports.js';
import type { Scope } from './scope.js';

/** The chain the sync figures (da-sync, catchup) replay: full blocks of 10 txs × 100 B. */
export const SYNC_TXS_PER_BLOCK = 10;
export const SYNC_TX_BYTES = 100;
/** The built-in DA's block time for the sync figures. */
export const SYNC_DA_BLOCK_MS = 100;

/** A built-in DA server the sync figures use, in this process (a LocalDa) or in a child: where nodes reach it. */
export interface SyncDa {
  /** http://host:port of its JSON-RPC, for da.address. */
  address: string;
}

/** Config flags that point a node at `da` with the sync figures' DA block time. */
export const syncDaFlags = (da: SyncDa): ConfigFlags => ({ 'da.address': da.address, 'da.block_time': `${SYNC_DA_BLOCK_MS}ms` });

/**
 * An aggregator in this process produces `blocks` full blocks (block_time 1ms)
 * and posts them to the built-in DA; returns its production rate and its home
 * (for the genesis, and to reopen as a peer holding the chain). Nothing is
 * closed before every block is on DA. With `home`, the blocks extend the chain
 * that home holds (its blocks already on DA); else a new chain begins.
 */
export async function buildSyncChain(scope: Scope, da: SyncDa, blocks: number, home?: string): Promise<{ home: string; blocksPerSecond: number }> {
  if (!home) {
    home = scope.tempDir('noded-bench-sync-agg-');
    createAggregatorHome(home);
  }
  const node = await openNode(home, { 'node.block_time': '1ms', ...syncDaFlags(da) });
  try {
    const target = node.chain.height + BigInt(blocks);
    const blocksPerSecond = await produceFullBlocks(node, blocks, SYNC_TXS_PER_BLOCK, SYNC_TX_BYTES, 'sync');
    await until(() => node.store.daIncludedHeight() >= target, 60_000, `${target} blocks on DA`);
    return { home, blocksPerSecond };
  } finally {
    await node.close();
  }
}

/**
 * What the sync figures share: the built-in DA and a chain of `blocks` full
 * blocks on it (fewer blocks and rounds with --quick). The DA runs in this
 * process, or with `daProcess` in a `noded da serve` child, so that serving
 * blobs costs the measured node's thread nothing (as with a real DA, elsewhere).
 */
export async function syncFixture(
  quick: boolean,
  scope: Scope,
  opts: { daProcess?: boolean } = {},
): Promise<{ blocks: number; rounds: number; da: SyncDa; chain: { home: string; blocksPerSecond: number } }> {
  const { blocks, rounds } = quick ? { blocks: 2_000, rounds: 2 } : { blocks: 10_000, rounds: 3 };
  const da = opts.daProcess ? await startDaProcess(scope, SYNC_DA_BLOCK_MS) : await startLocalDa(scope, SYNC_DA_BLOCK_MS);
  const chain = await buildSyncChain(scope, da, blocks);
  return { blocks, rounds, da, chain };
}

/**
 * Blocks/s a fresh full node of the chain at `aggregatorHome`, opened with
 * `flags` (where it gets blocks from: DA, peers), applies from genesis until it
 * holds `blocks` blocks.
 */
export async function freshSyncRate(scope: Scope, aggregatorHome: string, blocks: number, flags: ConfigFlags): Promise<number> {
  const home = scope.tempDir('noded-bench-sync-full-');
  createFullNodeHome(home, aggregatorHome);
  return syncRate(home, BigInt(blocks), flags);
}

/**
 * Blocks/s the node of `home`, opened as a full node with `flags`, applies
 * until it holds block `target`. The clock starts before the node opens, so a
 * node that has to dial a peer (or read a long store) pays for it.
 */
export async function syncRate(home: string, target: bigint, flags: ConfigFlags): Promise<number> {
  const start = performance.now();
  const node = await openNode(home, { 'node.aggregator': false, ...flags });
  const blocks = Number(target - node.chain.height);
  try {
    const synced = new Promise<number>((resolve) => {
      node.chain.onBlock((block) => {
        if (block.header!.header!.height === target) resolve(performance.now());
      });
    });
    // Far slower than any target (20 blocks/s), so it only trips when sync stalls.
    const end = await withDeadline(Promise.race([synced, startProducing(node)]), 30_000 + blocks * 50, `the full node to sync to block ${target}`);
    return blocks / ((end - start) / 1000);
  } finally {
    await node.close();
  }
}

/** The environment of a `noded` child: this one's, without NODED_* variables (they would change what is measured). */
function childEnv(): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('NODED_'))), NO_COLOR: '1' };
}

/** A readiness check: `url` answers 2xx. */
export function answers(url: string): () => Promise<boolean> {
  return async () => {
    try {
      return (await fetch(url)).ok;
    } catch {
      return false; // Not listening yet.
    }
  };
}

/**
 * Spawns `noded …args` (this package's bin/run.js, under this process's node
 * flags, so `node --cpu-prof` profiles it too), killed when the scope closes,
 * and polls `ready` until it holds; rejects naming `what` (with the tail of
 * its stderr) if the child exits first or the deadline passes.
 */
export async function spawnNoded(scope: Scope, args: string[], ready: () => Promise<boolean>, what: string, ms = 30_000): Promise<ChildProcess> {
  const child = scope.spawn(process.execPath, [...process.execArgv, `${packageRoot()}bin/run.js`, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: childEnv(),
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-8192);
  });
  await withDeadline(
    (async () => {
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`${what} exited with ${child.exitCode ?? child.signalCode} before it was ready:\n${stderr}`);
        }
        if (await ready()) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })(),
    ms,
    `${what} to be ready`,
  );
  return child;
}

/** The built-in DA in a child process: where nodes reach it, and its fault switches. */
export interface DaProcess extends SyncDa {
  /** Sets fault switches through its admin listener (POST /faults). */
  setFaults(patch: Partial<DaFaults>): Promise<void>;
}

/** The built-in DA in its own process (`noded da serve`), on free ports, with a DA block every `blockTimeMs`. */
export async function startDaProcess(scope: Scope, blockTimeMs: number): Promise<DaProcess> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const address = `http://127.0.0.1:${port}`;
  const args = ['da', 'serve', '--home', scope.tempDir('noded-bench-da-'), '--listen', `127.0.0.1:${port}`, '--block-time', `${blockTimeMs}ms`];
  args.push('--admin', `127.0.0.1:${adminPort}`);
  await spawnNoded(scope, [...args, '--log-format', 'json', '--log-level', 'warn'], answers(`${address}/health`), '`noded da serve`');
  const setFaults = async (patch: Partial<DaFaults>) => {
    const res = await fetch(`http://127.0.0.1:${adminPort}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(patch),
    });
    if (!res.ok) throw new Error(`\`noded da serve\` refused the faults ${JSON.stringify(patch)}: ${res.status} ${await res.text()}`);
  };
  return { address, setFaults };
}

/** A `noded start` child running as a full node, and where it listens. */
export interface NodeProcess {
  child: ChildProcess;
  /** http://host:port of its RPC. */
  rpc: string;
  /** Its P2P address, for another node's p2p.peers. */
  peerAddress: string;
}

/**
 * The node of `home` started as a real `noded start` child, not producing (a
 * full node of its chain that serves the blocks it holds to peers), on free
 * ports; resolved once /health/`until` answers 200 (every listener, P2P first,
 * is bound before /health/live answers). Its DA is a closed port, as the
 * in-process nodes' is: following a real DA it would re-read every DA block of
 * the chain it already holds (seconds of CPU) while the figure measures, on the
 * same cores.
 */
export async function startFullNodeProcess(scope: Scope, home: string, until: 'live' | 'ready' = 'live'): Promise<NodeProcess> {
  const [p2p, rpcPort, status] = [await freePort(), await freePort(), await freePort()];
  const listen = `/ip4/127.0.0.1/tcp/${p2p}`;
  const rpc = `http://127.0.0.1:${rpcPort}`;
  const args = [
    'start',
    '--home',
    home,
    '--no-node.node.aggregator',
    '--node.p2p.listen_address',
    listen,
    '--node.rpc.address',
    `127.0.0.1:${rpcPort}`,
    '--node.rpc.status_address',
    `127.0.0.1:${status}`,
    '--no-node.da.local',
    '--node.da.address',
    'http://127.0.0.1:1',
    '--node.log.format',
    'json',
    '--node.log.level',
    'warn',
  ];
  const child = await spawnNoded(scope, args, answers(`${rpc}/health/${until}`), 'the full node (`noded start`)', 120_000);
  return { child, rpc, peerAddress: ownPeerAddress(listen, readHome(home).nodeKey.peerId) };
}

/** A peer holding the chain of `home`: its node started as a full node; returns its P2P address. */
export async function startPeerProcess(scope: Scope, home: string): Promise<string> {
  return (await startFullNodeProcess(scope, home)).peerAddress;
}
