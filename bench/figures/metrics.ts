import type { ConfigFlags } from '../../src/config/index.js';
import { createLogger, silentLogger } from '../../src/log/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { createAggregatorHome, openNode, produceFullBlocks } from '../lib/node.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';

const TXS_PER_BLOCK = 1_000;
const TX_BYTES = 100;
/** 30× as often as Prometheus' usual 15 s, so a round sees scrapes however short it is. */
const SCRAPE_MS = 500;
const METRICS_ON: ConfigFlags = { 'instrumentation.prometheus': true, 'instrumentation.prometheus_listen_addr': '127.0.0.1:0' };

/**
 * The producer's txs/s, instrumented (metrics served and scraped, info-level JSON
 * logs) or not (metrics off, a silent logger). Log lines go to a sink that drops
 * them, so the figure is noded's work (pino serialising, scrubbing) and not the disk's.
 */
async function producerTxsPerSecond(home: string, blocks: number, tag: string, instrumented: boolean): Promise<number> {
  const logger = instrumented ? createLogger({ level: 'info', format: 'json', destination: { write: () => undefined } }) : silentLogger();
  const node = await openNode(home, { 'node.block_time': '1ms', ...(instrumented ? METRICS_ON : {}) }, logger);
  const listener = node.listeners.metrics;
  const scraper = listener
    ? setInterval(() => void fetch(`http://${listener.address.host}:${listener.address.port}/metrics`).then((res) => res.text()), SCRAPE_MS)
    : undefined;
  try {
    return (await produceFullBlocks(node, blocks, TXS_PER_BLOCK, TX_BYTES, tag)) * TXS_PER_BLOCK;
  } finally {
    clearInterval(scraper);
    await node.close();
  }
}

export const metrics: Bench = {
  name: 'metrics',
  description: 'Producer txs/s with metrics and logging on (served, scraped, info-level JSON) vs both off',
  async run(opts: BenchOptions, scope) {
    const { rounds, blocks } = opts.quick ? { rounds: 5, blocks: 30 } : { rounds: 11, blocks: 100 };
    const home = scope.tempDir('noded-bench-metrics-');
    createAggregatorHome(home);
    await producerTxsPerSecond(home, blocks, 'warmup', true);
    // Each run writes txs no earlier run wrote: the node refuses a tx a committed block holds.
    let run = 0;
    const paired = await interleave(
      rounds,
      {
        baseline: () => producerTxsPerSecond(home, blocks, `off${run++}`, false),
        noded: () => producerTxsPerSecond(home, blocks, `on${run++}`, true),
      },
      { nodedOnly: opts.nodedOnly },
    );
    const note =
      `The producer figure's setup (${blocks} blocks of ${TXS_PER_BLOCK} txs × ${TX_BYTES} B per round, block_time 1ms, DA kept out), run twice a round in one home: ` +
      `noded with instrumentation.prometheus on, /metrics scraped every ${SCRAPE_MS} ms and info-level JSON logs (to a sink that drops them); ` +
      'baseline with metrics off and a silent logger. Target: under 5% cost.';
    return [row('Producer txs/s, metrics + logging on vs off', 'txs/s', paired, { ratioAtLeast: 0.95 }, note)];
  },
};
