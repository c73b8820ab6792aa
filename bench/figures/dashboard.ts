import { execFileSync, spawnSync } from 'node:child_process';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { packageRoot, withDeadline } from '../lib/node.js';
import { cpuPercent } from '../lib/process.js';
import { row } from '../lib/report.js';
import { freePort } from '../lib/ports.js';
import { interleave } from '../lib/rounds.js';
import { exited, type Scope } from '../lib/scope.js';

async function poll(check: () => Promise<boolean> | boolean, what: string, timeoutMs: number): Promise<void> {
  await withDeadline(
    (async () => {
      while (
        !(await Promise.resolve()
          .then(check)
          .catch(() => false))
      )
        await new Promise((r) => setTimeout(r, 100));
    })(),
    timeoutMs,
    what,
  );
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * `noded status --watch` in a real 80×24 terminal (a tmux window of its own),
 * drawing the devnet; resolves with the dashboard's pid once it shows the node.
 */
async function openDashboard(scope: Scope, home: string, rpc: string, status: string): Promise<number> {
  const socket = `noded-bench-${process.pid}-${Date.now()}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  scope.defer(() => spawnSync('tmux', ['-L', socket, 'kill-server']));
  // Ink draws only a final frame under a CI variable; a person's terminal has none.
  const command = `exec env -u CI -u CONTINUOUS_INTEGRATION NODED_RPC_STATUS_ADDRESS=${status} ${quote(process.execPath)} ${quote(`${packageRoot()}bin/run.js`)} status --watch --home ${quote(home)} --node ${rpc}`;
  tmux('new-session', '-d', '-s', 'dash', '-x', '80', '-y', '24', command);
  const pid = Number(tmux('display-message', '-p', '-t', 'dash', '#{pane_pid}').trim());
  await poll(() => /CHAIN \[ok\]/.test(tmux('capture-pane', '-p', '-t', 'dash')), 'the dashboard to draw the devnet', 30_000);
  return pid;
}

export const dashboard: Bench = {
  name: 'dashboard',
  description: 'CPU of `status --watch` idle on a healthy devnet (80×24 tmux window) vs an idle node process',
  async run(opts: BenchOptions, scope: Scope) {
    if (spawnSync('tmux', ['-V']).status !== 0) throw new Error('the dashboard figure needs tmux (apt-get install tmux)');
    const { rounds, windowMs } = opts.quick ? { rounds: 2, windowMs: 10_000 } : { rounds: 3, windowMs: 30_000 };
    const home = scope.tempDir('noded-bench-dash-');
    const [rpcPort, statusPort] = [await freePort(), await freePort()];
    const rpc = `127.0.0.1:${rpcPort}`;
    const status = `127.0.0.1:${statusPort}`;
    const devnet = scope.spawn(process.execPath, [
      `${packageRoot()}bin/run.js`,
      'start',
      '--dev',
      '--home',
      home,
      '--node.rpc.address',
      rpc,
      '--node.rpc.status_address',
      status,
      '--node.p2p.listen_address',
      '/ip4/127.0.0.1/tcp/0',
      '--node.da.address',
      'http://127.0.0.1:0',
    ]);
    void exited(devnet).then((code) => {
      if (!devnet.killed) process.stderr.write(`bench: the devnet exited with ${code} during the dashboard figure\n`);
    });
    await poll(async () => (await fetch(`http://${rpc}/health/ready`)).ok, 'the devnet to be ready', 30_000);

    const idle = () => {
      const child = scope.spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
      return cpuPercent(child.pid!, windowMs);
    };
    const watched = async () => cpuPercent(await openDashboard(scope, home, rpc, status), windowMs);
    const paired = await interleave(rounds, { baseline: idle, noded: watched }, { together: true, nodedOnly: opts.nodedOnly });
    return [
      row(
        'Idle `status --watch` CPU',
        '% of a core',
        paired,
        { nodedAtMost: 5 },
        `User + system CPU of \`noded status --watch\` (1 s interval) in an 80×24 tmux window drawing a healthy \`start --dev\` devnet, over ${windowMs / 1000} s after its first full screen, beside an idle \`node -e "setInterval(()=>{},1000)"\` measured over the same window; ${rounds} rounds.`,
      ),
    ];
  },
};
