/**
 * `npm run bench`: noded's figures, each beside a baseline measured in the same
 * run (DESIGN.md §12). Writes bench/results/bench-<time>.json and latest.md and
 * prints the table.
 *
 *   node dist/bench/run.js [--quick] [--only NAME[,NAME]] [--noded-only]
 */
import { parseArgs } from 'node:util';
import { abci } from './figures/abci.js';
import { admission } from './figures/admission.js';
import { catchup } from './figures/catchup.js';
import { daSync } from './figures/da-sync.js';
import { dashboard } from './figures/dashboard.js';
import { doctor } from './figures/doctor.js';
import { evm } from './figures/evm.js';
import { failover } from './figures/failover.js';
import { forced } from './figures/forced.js';
import { getBlock } from './figures/getblock.js';
import { gossip } from './figures/gossip.js';
import { grpcExec } from './figures/grpc-exec.js';
import { idleRss } from './figures/idle-rss.js';
import { latency } from './figures/latency.js';
import { metrics } from './figures/metrics.js';
import { producer } from './figures/producer.js';
import { scale } from './figures/scale.js';
import { soak } from './figures/soak.js';
import { submitter } from './figures/submitter.js';
import { version } from './figures/version.js';
import type { Bench } from './lib/figure.js';
import { packageRoot } from './lib/node.js';
import { markdownTable, runMeta, writeResults, type Row, type RunMeta } from './lib/report.js';
import { killLiveChildren, Scope } from './lib/scope.js';

const BENCHES: Bench[] = [
  getBlock,
  producer,
  admission,
  metrics,
  daSync,
  catchup,
  submitter,
  version,
  idleRss,
  doctor,
  gossip,
  dashboard,
  abci,
  grpcExec,
  evm,
  forced,
  scale,
  latency,
  failover,
  // Last: ten minutes long, so every other figure is written before it starts (see main()).
  soak,
];

const USAGE = `usage: node dist/bench/run.js [--quick] [--only NAME[,NAME…]] [--noded-only]

  --quick        short rounds (a smoke run; figures are noisier)
  --only NAME    run only these benchmarks: ${BENCHES.map((b) => b.name).join(', ')}
  --noded-only   measure noded's side alone, no baseline, results not written
                 (to profile noded: node --cpu-prof … --noded-only, then node dist/bench/profile.js)

  latency and soak spawn their devnet: profile it with
  BENCH_DEVNET_NODE_ARGS='--cpu-prof --cpu-prof-dir /tmp/prof' node dist/bench/run.js --only latency
  soak takes ten minutes (--quick: two) and runs last, so the figures before it are written if it is cut short.

${BENCHES.map((b) => `  ${b.name.padEnd(9)} ${b.description}`).join('\n')}
`;

function parseOptions(): { quick: boolean; nodedOnly: boolean; benches: Bench[] } {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true },
      'noded-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const names = (values.only ?? []).flatMap((s) => s.split(',')).filter(Boolean);
  const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n));
  if (unknown.length) throw new UsageError(`unknown benchmark ${unknown.join(', ')}; choose from ${BENCHES.map((b) => b.name).join(', ')}`);
  const benches = names.length ? BENCHES.filter((b) => names.includes(b.name)) : BENCHES;
  return { quick: values.quick, nodedOnly: values['noded-only'], benches };
}

class UsageError extends Error {}

/** The running benchmark's resources, for a signal to release. */
let current: Scope | null = null;
/** The run so far, written after every benchmark; a signal writes it once more, naming the benchmark it cut short. */
let progress: { meta: RunMeta; rows: Row[]; running: string | null } | null = null;

const resultsDir = () => `${packageRoot()}bench/results`;
/** Set by SIGINT/SIGTERM: the errors that follow (children killed mid-figure) are its echo, not news. */
let interrupted = false;

async function main(): Promise<void> {
  const { quick, nodedOnly, benches } = parseOptions();
  const meta = runMeta(
    quick,
    benches.map((b) => b.name),
  );
  const rows: Row[] = [];
  if (!nodedOnly) progress = { meta, rows, running: null };
  for (const bench of benches) {
    if (progress) progress.running = bench.name;
    process.stderr.write(`bench: ${bench.name}: ${bench.description}…\n`);
    // Each benchmark releases its node, servers, children and temp dirs before the next one
    // starts, so nothing it left running skews the next figure.
    current = new Scope();
    try {
      rows.push(...(await bench.run({ quick, nodedOnly }, current)));
    } catch (err) {
      if (interrupted) throw err;
      // One broken figure must not lose the others: it is named in the results and fails the run.
      const error = (err as Error).stack ?? String(err);
      process.stderr.write(`bench: ${bench.name} failed: ${error}\n`);
      meta.failed.push({ bench: bench.name, error: (err as Error).message ?? String(err) });
    } finally {
      await current.close();
      current = null;
    }
    // Written after every benchmark, not once at the end: the figures already measured survive a run cut short
    // (soak, last, takes ten minutes).
    if (progress) {
      progress.running = null;
      writeResults(resultsDir(), meta, rows);
    }
  }
  if (nodedOnly) {
    // A profiling run has no baselines: print it, but keep it out of the results.
    process.stdout.write(`\n${markdownTable(rows, meta)}`);
    return;
  }
  const { json, markdown, table } = writeResults(resultsDir(), meta, rows);
  process.stdout.write(`\n${table}\nwrote ${json}\nwrote ${markdown}\n`);
  if (meta.failed.length) process.exitCode = 1;
}

// Children must not outlive the run, however it ends.
process.on('exit', killLiveChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    killLiveChildren();
    if (progress?.running) {
      progress.meta.failed.push({ bench: progress.running, error: `interrupted by ${signal}` });
      const { json } = writeResults(resultsDir(), progress.meta, progress.rows);
      process.stderr.write(`bench: interrupted; the figures measured so far are in ${json}\n`);
    }
    // Then the in-process node and temp dirs; a second signal exits at once.
    void (current?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (err) {
  if (interrupted) process.stderr.write('bench: interrupted\n');
  else process.stderr.write(`bench: ${err instanceof UsageError ? `${err.message}\n${USAGE}` : ((err as Error).stack ?? String(err))}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
