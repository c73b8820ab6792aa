/**
 * Not a test: regenerates README's dashboard captures from a real run at 80×24
 * (a devnet with txs, then a DA that answers code 19, then a 70×20 terminal).
 * Run after changing what the dashboard draws: `npm run docs:captures`
 * (its own vitest config; `npm test` does not run it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, it } from 'vitest';
import { README_PATH, replaceMarked } from '../../scripts/readme.js';
import { DaServer } from '../helpers/da.js';
import { Daemon, freePort, killAll, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { TmuxTerminal, requireTmux } from './tmux.js';

const homes = new Homes();
const terminals: TmuxTerminal[] = [];
afterAll(async () => {
  for (const t of terminals) t.kill();
  await killAll();
  homes.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The screen without the rows below the dashboard's last (it leaves the terminal's last row free). */
const trimmed = (screen: string) =>
  screen
    .replace(/\s+$/, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
const block = (screen: string) => `\`\`\`text\n${trimmed(screen)}\n\`\`\``;

it('regenerates the README dashboard captures', async () => {
  requireTmux();
  const home = await homes.create('my-devnet', true);
  const da = await DaServer.start(await homes.create('my-devnet-da', false));
  const [rpcPort, statusPort] = [await freePort(), await freePort()];
  const node = await Daemon.start(home, [
    '--no-node.da.local',
    '--node.da.address',
    da.address,
    '--node.rpc.address',
    `127.0.0.1:${rpcPort}`,
    '--node.rpc.status_address',
    `127.0.0.1:${statusPort}`,
  ]);
  let sending = true;
  const sender = (async () => {
    for (let i = 0; sending; i++) {
      for (let k = 0; k <= i % 5; k++) await fetch(`${node.status}/broadcast_tx_sync?tx="k${i}-${k}=v${i}"`).catch(() => undefined);
      await sleep(900);
    }
  })();
  await waitFor(
    async () => ((await (await fetch(`${node.status}/node_info`)).json()) as { result: { height: number } }).result.height >= 25,
    'the devnet to make 25 blocks',
    120_000,
  );
  const t = new TmuxTerminal(['status', '--watch', '--home', home, '--node', `127.0.0.1:${rpcPort}`], {
    env: { NODED_RPC_STATUS_ADDRESS: `127.0.0.1:${statusPort}`, NO_COLOR: '1' },
  });
  terminals.push(t);
  await waitFor(() => t.capture().includes('BLOCKS [ok]'), 'the dashboard', 30_000);
  await sleep(3000);
  const healthy = t.capture();
  await da.setFaults({ submitError: 'already_in_mempool' });
  await waitFor(() => /gas price +0\.0[1-9]/.test(t.capture()), 'a few failed submissions, each raising the gas price', 120_000);
  const failing = t.capture();
  t.resize(70, 20);
  await waitFor(() => t.capture().includes('too small'), 'the too-small message', 30_000);
  const small = t.capture();
  sending = false;
  await sender;

  let readme = readFileSync(README_PATH, 'utf8');
  readme = replaceMarked(readme, 'dashboard-healthy', block(healthy));
  readme = replaceMarked(readme, 'dashboard-da-failing', block(failing));
  readme = replaceMarked(readme, 'dashboard-too-small', block(small));
  writeFileSync(README_PATH, readme);
}, 300_000);
