import { formatDuration } from '../../config/index.js';
import { NodeClient, NodeUnreachableError } from '../../client/index.js';
import { sleep } from '../../util/index.js';
import type { Check, DoctorContext, Verdict } from '../types.js';

function notRunning(ctx: DoctorContext): Verdict {
  const start = `start it with \`noded start --home ${ctx.home}\`; if it exits at once, the config, data-dir and ports checks say why`;
  switch (ctx.node.state) {
    case 'stale':
      return {
        status: 'warn',
        message: `this home's node is not running: ${ctx.node.pidFile} names process ${ctx.node.pid}, which is gone (killed or crashed)`,
        remedy: start,
      };
    case 'invalid':
      return {
        status: 'warn',
        message: `this home's node is not running: ${ctx.node.pidFile} holds no pid (${JSON.stringify(ctx.node.content)})`,
        remedy: start,
      };
    default:
      return { status: 'warn', message: `this home's node is not running (no ${ctx.paths.pidFile})`, remedy: start };
  }
}

/** A full node that caught the aggregator leaving out forced txs (src/forced/verifier.ts): it has stopped following the chain. */
const CENSORED = /FORCED_INCLUSION_VIOLATED/;

function readyRemedy(reason: string): string {
  if (CENSORED.test(reason)) {
    return "the chain's aggregator left forced txs out past their grace boundary, so this node stopped applying its blocks: report it to the chain's operators with the FORCED_INCLUSION_VIOLATED log line (txs, epoch, aggregator); this node keeps serving the blocks before it";
  }
  if (/genesis mismatch/i.test(reason)) return 'see the genesis check';
  if (/DA unreachable/i.test(reason)) return 'see the da-* checks';
  if (/production paused|pending/i.test(reason)) return 'blocks are not reaching DA: see the da-* checks';
  if (/behind|catching/i.test(reason)) return 'the node is catching up; if it does not, check DA and peers';
  if (/no blocks/i.test(reason)) return 'wait for the first block; an aggregator makes one within node.block_time';
  return "check the node's log";
}

export const nodeCheck: Check = {
  id: 'node',
  verifies:
    "if this home's node runs (data/node.pid): /health/live, /health/ready and /status answer; while catching_up, samples the height twice and warns when it rises slower than the chain",
  async run(ctx) {
    if (ctx.node.state !== 'running') return notRunning(ctx);
    const deadline = Date.now() + ctx.timeoutMs;
    const pid = ctx.node.pid;
    const client = new NodeClient(ctx.config.rpc.address, ctx.config.rpc.status_address, ctx.timeoutMs);
    let live, ready, status;
    try {
      [live, ready, status] = await Promise.all([client.health('live'), client.health('ready'), client.status()]);
    } catch (err) {
      if (err instanceof NodeUnreachableError) {
        return {
          status: 'fail',
          message: `process ${pid} runs, but no node answers at ${err.address}`,
          remedy: `check the node's log; if it was started with other addresses (flags or env), run doctor with the same ones (e.g. --node.rpc.address)`,
        };
      }
      return { status: 'fail', message: `process ${pid} runs, but its endpoints fail: ${(err as Error).message}`, remedy: "check the node's log" };
    }
    const height = Number(status.sync_info.latest_block_height);
    const seen = `pid ${pid}, height ${height}`;
    if (!live.ok) return { status: 'fail', message: `not live (${seen}): ${live.text}`, remedy: "check the node's log; restart it if it does not recover" };
    if (!ready.ok)
      return { status: CENSORED.test(ready.text) ? 'fail' : 'warn', message: `live but not ready (${seen}): ${ready.text}`, remedy: readyRemedy(ready.text) };
    if (!status.sync_info.catching_up) return { status: 'ok', message: `live, ready, not catching up (${seen})` };
    // Catching up: does it gain on the chain? Sample the height again, within the bound.
    const blockTime = ctx.config.node.block_time;
    const wait = Math.min(Math.max(2 * blockTime, 500), Math.max(0, (deadline - Date.now()) / 2));
    const t0 = Date.now();
    await sleep(wait);
    let later: number;
    try {
      later = Number((await client.status()).sync_info.latest_block_height);
    } catch (err) {
      return { status: 'fail', message: `stopped answering while catching up (${seen}): ${(err as Error).message}`, remedy: "check the node's log" };
    }
    const seconds = (Date.now() - t0) / 1000;
    const rate = (later - height) / seconds;
    const chainRate = 1000 / blockTime;
    const rates = `height ${height} → ${later} in ${seconds.toFixed(1)} s (${rate.toFixed(1)} blocks/s; the chain makes ${chainRate.toFixed(1)} at node.block_time ${formatDuration(blockTime)})`;
    if (rate < chainRate) {
      return {
        status: 'warn',
        message: `falling behind: catching up, but ${rates}`,
        remedy: 'check DA (da-sync, da-health) and peers; a node that syncs slower than the chain never catches up',
      };
    }
    return { status: 'ok', message: `live, ready, catching up: ${rates}` };
  },
};
