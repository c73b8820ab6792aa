import type { Bench, BenchOptions } from '../lib/figure.js';
import { packageRoot } from '../lib/node.js';
import { residentMb } from '../lib/process.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import { exited, stopChild, type Scope } from '../lib/scope.js';

/** Spawns `node …args`, waits `idleMs`, reads its resident memory and stops it. */
async function rssAfter(scope: Scope, args: string[], idleMs: number): Promise<number> {
  const child = scope.spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
  const died = exited(child).then((code) => {
    throw new Error(`node ${args.join(' ')} exited with ${code} before it was measured:\n${stderr}`);
  });
  await Promise.race([new Promise((resolve) => setTimeout(resolve, idleMs)), died]);
  died.catch(() => {}); // it exits when stopped below; that is not an error
  const mb = residentMb(child.pid!);
  await stopChild(child);
  return mb;
}

export const idleRss: Bench = {
  name: 'rss',
  description: 'Resident memory of an idle devnet after a minute vs an idle node process',
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, idleMs } = opts.quick ? { rounds: 2, idleMs: 10_000 } : { rounds: 3, idleMs: 60_000 };
    const devnet = (): string[] => [
      `${packageRoot()}bin/run.js`,
      'start',
      '--dev',
      '--home',
      scope.tempDir('noded-bench-devnet-'),
      '--node.rpc.address',
      '127.0.0.1:0',
      '--node.rpc.status_address',
      '127.0.0.1:0',
      // The devnet's built-in DA and P2P on ephemeral ports too, so a DA on 26658 or a node on 7676 elsewhere cannot clash.
      '--node.da.address',
      'http://127.0.0.1:0',
      '--node.p2p.listen_address',
      '/ip4/127.0.0.1/tcp/0',
    ];
    const paired = await interleave(
      rounds,
      { baseline: () => rssAfter(scope, ['-e', 'setInterval(() => {}, 1000)'], idleMs), noded: () => rssAfter(scope, devnet(), idleMs) },
      // Both sides idle: run them side by side, so a round takes one idle period, not two.
      { together: true, nodedOnly: opts.nodedOnly },
    );
    return [
      row(
        'Idle devnet resident memory',
        'MB',
        paired,
        { nodedAtMost: 100 },
        `VmRSS ${idleMs / 1000} s after spawning \`noded start --dev\` (fresh home, ephemeral RPC, built-in DA and P2P ports), beside an idle \`node -e "setInterval(()=>{},1000)"\` spawned at the same time; ${rounds} rounds.`,
      ),
    ];
  },
};
