import type { Bench, BenchOptions } from '../lib/figure.js';
import { packageRoot } from '../lib/node.js';
import { wallTimeMs } from '../lib/process.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

export const version: Bench = {
  name: 'version',
  description: 'Cold `noded --version` wall time vs `node -e 0`',
  async run(opts: BenchOptions, scope: Scope) {
    const rounds = opts.quick ? 10 : 40;
    const runJs = `${packageRoot()}bin/run.js`;
    const sides = { baseline: () => wallTimeMs(scope, ['-e', '0']), noded: () => wallTimeMs(scope, [runJs, '--version']) };
    // One untimed run of each first: "cold" means a new process, not a cold page cache.
    await sides.baseline();
    await sides.noded();
    const paired = await interleave(rounds, sides, { nodedOnly: opts.nodedOnly });
    return [
      row(
        'Cold `noded --version` wall time',
        'ms',
        paired,
        { ratioAtMost: 3 },
        `Spawn of \`node bin/run.js --version\` to exit, vs \`node -e 0\`; ${rounds} rounds each, interleaved.`,
      ),
    ];
  },
};
