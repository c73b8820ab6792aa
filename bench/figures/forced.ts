import { loadConfig } from '../../src/config/index.js';
import { DaClient } from '../../src/da/index.js';
import { postForcedTx } from '../../src/forced/index.js';
import { initHome, readHome } from '../../src/home/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { nextBlock, openNode, startLocalDa, startProducing, withDeadline } from '../lib/node.js';
import { row } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

/** DA blocks per forced-inclusion epoch (genesis da_epoch_forced_inclusion) in this figure. */
const EPOCH = 10;
const DA_BLOCK_MS = 100;
const NAMESPACE = 'bench-forced-txs';

export const forced: Bench = {
  name: 'forced',
  description: 'DA blocks from `noded tx post` to the block holding the tx (forced inclusion) vs the epoch length',
  async run(opts: BenchOptions, scope: Scope) {
    const rounds = opts.quick ? 3 : 9;
    const home = scope.tempDir('noded-bench-forced-');
    initHome({ home, chainId: 'bench-forced', aggregator: true, force: false, forcedInclusionEpoch: EPOCH });
    const localDa = await startLocalDa(scope, DA_BLOCK_MS);
    const flags = { 'da.address': localDa.address, 'da.forced_inclusion_namespace': NAMESPACE, 'node.block_time': '50ms' };
    const node = await openNode(home, flags);
    scope.defer(() => node.close());
    const producing = startProducing(node);
    producing.catch(() => undefined);
    const config = loadConfig({ home, env: {}, flags });
    const { genesis } = readHome(home);
    const da = new DaClient({ address: localDa.address, authToken: '', requestTimeoutMs: 5000 });
    scope.defer(() => da.close());
    const delays: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const tx = Buffer.from(`forced-${i}-${Date.now()}=1`);
      const held = nextBlock(node, (block) => block.data!.txs.some((t) => Buffer.compare(t, tx) === 0));
      const posted = await postForcedTx(config, genesis, tx);
      await withDeadline(Promise.race([held, producing]), (3 * EPOCH + 5) * DA_BLOCK_MS + 10_000, `forced tx ${i} in a block`);
      delays.push(Number((await da.networkHead()) - posted.daHeight));
    }
    return [
      row(
        'Forced tx: post to block',
        'DA blocks',
        { noded: sample(delays), baseline: sample([EPOCH]) },
        { nodedAtMost: EPOCH + 1 },
        `An aggregator in this process (block_time 50ms) with the built-in DA (in this process, a DA block every ${DA_BLOCK_MS} ms) and da_epoch_forced_inclusion ${EPOCH}: ` +
          `each round posts one kv tx to the forced-inclusion namespace (postForcedTx, as \`noded tx post\`) and counts the DA blocks from the one holding it to DA's head when the aggregator commits the block holding it; ${rounds} rounds, each posted right after the previous one's block, so early in an epoch: close to the longest wait. ` +
          `Baseline: the epoch length. Target: within one epoch plus one DA block (the aggregator reads an epoch once DA has passed its end).`,
      ),
    ];
  },
};
