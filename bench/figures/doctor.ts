import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { initHome } from '../../src/home/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { withDeadline, packageRoot } from '../lib/node.js';
import { wallTimeMs } from '../lib/process.js';
import { row } from '../lib/report.js';
import { freePort } from '../lib/ports.js';
import { interleave } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

const CHECK_TIMEOUT = '2s';

/** A TCP server that accepts and never answers: the slowest kind of "down", where only a check's bound ends the wait. */
async function silentServer(scope: Scope): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scope.defer(() => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A devnet on fixed free ports, ready; returns the flags that describe it to doctor. */
async function readyDevnet(scope: Scope, runJs: string): Promise<{ home: string; flags: string[] }> {
  const home = scope.tempDir('noded-bench-doctor-');
  const [rpc, status, p2p, da] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const flags = [
    '--node.rpc.address',
    `127.0.0.1:${rpc}`,
    '--node.rpc.status_address',
    `127.0.0.1:${status}`,
    '--node.p2p.listen_address',
    `/ip4/127.0.0.1/tcp/${p2p}`,
    '--node.da.address',
    `http://127.0.0.1:${da}`,
  ];
  scope.spawn(process.execPath, [runJs, 'start', '--dev', '--home', home, ...flags]);
  const ready = async () => {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${rpc}/health/ready`)).status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await withDeadline(ready(), 30_000, 'the devnet to be ready');
  return { home, flags };
}

export const doctor: Bench = {
  name: 'doctor',
  description: '`noded doctor` wall time on a healthy devnet and with every endpoint hanging, vs `doctor --list-checks`',
  async run(opts: BenchOptions, scope: Scope) {
    const rounds = opts.quick ? 3 : 10;
    const runJs = `${packageRoot()}bin/run.js`;
    const baseline = () => wallTimeMs(scope, [runJs, 'doctor', '--list-checks']);

    const devnet = await readyDevnet(scope, runJs);
    const healthy = await interleave(
      rounds,
      { baseline, noded: () => wallTimeMs(scope, [runJs, 'doctor', '--home', devnet.home, ...devnet.flags, '--json']) },
      { nodedOnly: opts.nodedOnly },
    );

    // Every endpoint accepts the connection and never answers (DA's REST and JSON-RPC, a peer): each
    // network check waits for its bound, concurrently with the others.
    const down = scope.tempDir('noded-bench-doctor-down-');
    initHome({ home: down, chainId: 'bench-down', aggregator: false, force: false });
    const silent = await silentServer(scope);
    const downFlags = [
      '--node.da.address',
      `http://${silent}`,
      '--node.p2p.peers',
      `/ip4/127.0.0.1/tcp/${silent.split(':')[1]}/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN`,
    ];
    const allDown = await interleave(
      rounds,
      { baseline, noded: () => wallTimeMs(scope, [runJs, 'doctor', '--home', down, ...downFlags, '--timeout', CHECK_TIMEOUT, '--json'], 1) },
      { nodedOnly: opts.nodedOnly },
    );
    return [
      row(
        '`noded doctor`, healthy devnet',
        'ms',
        healthy,
        { nodedAtMost: 2000 },
        `Spawn to exit of \`noded doctor --json\` against a ready \`start --dev\` (built-in DA, ephemeral ports given as flags), beside \`noded doctor --list-checks\` (oclif start-up, no checks); ${rounds} rounds, interleaved.`,
      ),
      row(
        `\`noded doctor\`, every endpoint hanging, --timeout ${CHECK_TIMEOUT}`,
        'ms',
        allDown,
        { nodedAtMost: 3000 },
        `Spawn to exit of \`noded doctor --timeout ${CHECK_TIMEOUT} --json\` (exit 1) with DA and a peer on a TCP server that accepts and never answers, so every network check runs to its bound; target the timeout + 1 s. Baseline as above.`,
      ),
    ];
  },
};
