import { startEtcd } from '../lib/etcd.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { HaNode, chainBlocks, daHeaderHashes, haHomes, headOf, leaderOf, type ChainBlock } from '../lib/ha.js';
import { packageRoot, startLocalDa } from '../lib/node.js';
import { wallTimeMs } from '../lib/process.js';
import { row } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';
import { postOpenLoop, type OpenLoopResult } from '../load/open-loop.js';

const BLOCK_TIME_MS = 100;
const DA_BLOCK_TIME_MS = 1_000;
const RATE = 200;
const TX_BYTES = 100;
/** ha.lease_ttl: the default. */
const LEASE_TTL_MS = 2_000;
/** Each round's load: the fault comes FAULT_AFTER_MS into it, and the rest covers the takeover and the restart. */
const ROUND_MS = 7_000;
const FAULT_AFTER_MS = 2_000;
/** A step-down's gap may be one block time plus this (the hand-over: stop, revoke, a follower's campaign and takeover). */
const HANDOVER_MS = 500;

/** A fault and when it was made: the hand-over gap is looked for between `from` and `to` (Date.now() ms). */
interface Fault {
  from: number;
  to: number;
}

/**
 * The longest time between two consecutive blocks whose later block's header
 * time lies in (from, to]: the old leader's last block to the new leader's
 * first, where the leader changed in that window (elsewhere blocks come every
 * block time).
 */
export function handoverGapMs(blocks: ChainBlock[], fault: Fault): number {
  let gap = Number.NaN;
  for (let i = 1; i < blocks.length; i++) {
    const [before, after] = [blocks[i - 1]!, blocks[i]!];
    if (after.timeMs > fault.from && after.timeMs <= fault.to && !(after.timeMs - before.timeMs <= gap)) gap = after.timeMs - before.timeMs;
  }
  return gap;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const failover: Bench = {
  name: 'failover',
  description: `HA takeover: three aggregators on one etcd (lease_ttl ${LEASE_TTL_MS / 1000}s, block_time ${BLOCK_TIME_MS} ms) under ${RATE} tx/s, the leader killed -9 again and again, and ha step-down`,
  async run(opts: BenchOptions, scope: Scope) {
    const { kills, stepDowns } = opts.quick ? { kills: 3, stepDowns: 1 } : { kills: 10, stepDowns: 3 };
    const etcd = await startEtcd(scope);
    const da = await startLocalDa(scope, DA_BLOCK_TIME_MS);
    const nodes = haHomes(scope, 3).map(
      (home) => new HaNode(scope, { home, etcd, da: da.address, blockTimeMs: BLOCK_TIME_MS, leaseTtl: `${LEASE_TTL_MS / 1000}s` }),
    );
    for (const [i, node] of nodes.entries()) await node.start(nodes.slice(0, i).map((n) => n.p2p));
    const others = (node: HaNode) => nodes.filter((n) => n !== node);
    /** Every node runs and holds the leader's head within two blocks: ready for the next fault. */
    const settled = async () => {
      const leader = await leaderOf(nodes);
      const top = await headOf(leader.rpc);
      const deadline = Date.now() + 60_000;
      while ((await Promise.all(nodes.map((n) => headOf(n.rpc)))).some((h) => h < top - 2)) {
        if (Date.now() > deadline) throw new Error(`the nodes did not reach height ${top - 2} within 60 s`);
        await sleep(50);
      }
      return leader;
    };

    const loads: Array<{ tag: string; result: OpenLoopResult }> = [];
    /**
     * A round: load on a follower (it forwards to the leader), `fault` made on
     * the leader FAULT_AFTER_MS into it; a killed leader is started again as a
     * follower once another leads. Resolves with the window of the hand-over.
     */
    const round = async (tag: string, fault: 'kill' | 'step-down'): Promise<Fault> => {
      const leader = await settled();
      const load = postOpenLoop({ origin: others(leader)[0]!.rpc, ratePerSecond: RATE, durationMs: ROUND_MS, txBytes: TX_BYTES, tag });
      await sleep(FAULT_AFTER_MS);
      const from = Date.now();
      if (fault === 'kill') await leader.kill();
      else await wallTimeMs(scope, [`${packageRoot()}bin/run.js`, 'ha', 'step-down', '--home', leader.spec.home, '--node.ha.etcd_endpoints', etcd]);
      await leaderOf(others(leader));
      const to = Date.now() + 3_000;
      if (fault === 'kill') await leader.start(others(leader).map((n) => n.p2p));
      loads.push({ tag, result: await load });
      return { from, to };
    };

    const killed: Fault[] = [];
    for (let k = 0; k < kills; k++) killed.push(await round(`kill${k}`, 'kill'));
    const steps: Fault[] = [];
    for (let s = 0; s < stepDowns; s++) steps.push(await round(`step${s}`, 'step-down'));
    await settled();

    // The chain as each node holds it, up to the lowest head among them.
    const top = Math.min(...(await Promise.all(nodes.map((n) => headOf(n.rpc)))));
    const chains = await Promise.all(nodes.map((n) => chainBlocks(n.rpc, top)));
    const forkedOnNodes = chains[0]!.filter((b, i) => chains.some((c) => c[i]!.hash !== b.hash)).length;
    const forkedOnDa = [...(await daHeaderHashes(da.address)).values()].filter((hashes) => hashes.size > 1).length;
    const acked = loads.flatMap(({ tag, result }) => result.txs.map((t) => `${tag}-${t.index}`));
    const lost = Math.max(
      ...chains.map((chain) => {
        const kept = new Set(chain.flatMap((b) => b.txKeys));
        return acked.filter((key) => !kept.has(key)).length;
      }),
    );
    const takeovers = killed.map((f) => handoverGapMs(chains[0]!, f));
    const gaps = steps.map((f) => handoverGapMs(chains[0]!, f));
    const refused = loads.reduce((n, l) => n + l.result.refused + l.result.dropped, 0);
    const firstRefusal = loads.find((l) => l.result.firstRefusal)?.result.firstRefusal;

    const how =
      `Three spawned \`noded start\` HA aggregators (one chain and signer key, P2P between them) on one real etcd (lease_ttl ${LEASE_TTL_MS / 1000}s) and one DA ` +
      `(built-in, in the bench, ${DA_BLOCK_TIME_MS} ms blocks), block_time ${BLOCK_TIME_MS} ms; each round sends ${RATE} tx/s of ${TX_BYTES} B POST /tx?wait=commit ` +
      `open-loop to a follower (which forwards to the leader) for ${ROUND_MS / 1000} s and makes its fault ${FAULT_AFTER_MS / 1000} s in.`;
    const gapHow =
      'The gap is read from the chain afterwards: block HEADER times (the producer’s clock, one host), the longest time between consecutive blocks ' +
      'whose later block falls between the fault and 3 s after a new leader answered, i.e. the old leader’s last block to the new leader’s first.';
    const killNote = `${how} ${kills} rounds: kill -9 of the leader, restarted as a follower once another leads. ${gapHow} Baseline: the lease TTL, the floor of a takeover that waits for the dead leader’s lease to expire at etcd; the followers instead revoke it after TTL/2 without a heartbeat (src/ha/coordinator.ts).`;
    const safety =
      `${how} After all ${kills} kills and ${stepDowns} step-downs: heights 1–${top} read back with GetBlock from every node, and every header blob on DA. ` +
      `${acked.length} txs answered committed (${refused} sends refused or dropped during elections${firstRefusal ? `, first: ${firstRefusal.slice(0, 120)}` : ''}).`;
    return [
      row(
        'HA takeover after kill -9, p50',
        'ms',
        { noded: sample(takeovers), baseline: sample(takeovers.map(() => LEASE_TTL_MS)) },
        { nodedAtMost: 1_500 },
        killNote,
      ),
      row(
        'HA takeover after kill -9, max',
        'ms',
        { noded: sample([Math.max(...takeovers)]), baseline: sample([LEASE_TTL_MS]) },
        { nodedAtMost: 3_000 },
        killNote,
      ),
      row(
        'HA step-down gap',
        'ms',
        { noded: sample(gaps), baseline: sample(gaps.map(() => BLOCK_TIME_MS)) },
        { nodedAtMost: BLOCK_TIME_MS + HANDOVER_MS },
        `${how} ${stepDowns} rounds: \`noded ha step-down\` of the leader. ${gapHow} Baseline: the block time; the target allows ${HANDOVER_MS} ms of hand-over beyond it.`,
      ),
      row(
        'HA heights with two blocks (nodes + DA)',
        'heights',
        { noded: sample([forkedOnNodes + forkedOnDa]), baseline: sample([0]) },
        { nodedAtMost: 0 },
        `${safety} A height counts when two nodes hold different blocks there (${forkedOnNodes}) or DA has two different headers for it (${forkedOnDa}). Baseline: none.`,
      ),
      row(
        'HA committed txs lost',
        'txs',
        { noded: sample([lost]), baseline: sample([acked.length]) },
        { nodedAtMost: 0 },
        `${safety} Lost: answered committed but missing from some node's chain. Baseline: the txs answered committed.`,
      ),
    ];
  },
};
