import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { Daemon, killAll, latestHeight, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { DaServer } from '../helpers/da.js';

const homes = new Homes();
afterEach(async () => {
  await killAll();
  homes.cleanup();
});

const TOKEN = 'e2e-da-token-5b7f0c2d91aa';

/** Sets keys in a home's node.yml, as an operator would. */
function configure(home: string, keys: Record<string, string | number>): void {
  const file = join(home, 'config', 'node.yml');
  const doc = parseDocument(readFileSync(file, 'utf8'));
  for (const [path, value] of Object.entries(keys)) doc.setIn(path.split('.'), value);
  writeFileSync(file, doc.toString());
}

const parse = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('logs of a running node', () => {
  it('JSON logs: every line parses; a refused DA yields DA_SUBMIT_FAILED; the configured token is in no line; log.file rotates and keeps max_files', async () => {
    const aggregator = await homes.create('logs-e2e', true);
    configure(aggregator, {
      'da.auth_token': TOKEN,
      'log.file': 'logs/node.log',
      'log.max_size': '2KB',
      'log.max_files': 2,
      'log.status_interval': '200ms',
    });
    const da = await DaServer.start(await homes.create('logs-da', false), ['--token', TOKEN]);
    const agg = await Daemon.start(aggregator, ['--node.node.block_time', '100ms', '--no-node.da.local', '--node.da.address', da.address]);
    // The token works: blocks reach DA before the fault.
    await waitFor(() => agg.stderr.includes('submitted blocks to DA'), 'a submission with the token');
    await waitFor(async () => (await latestHeight(agg.rpc)) >= 3, 'a few blocks');
    await da.setFaults({ refuse: true });
    await waitFor(() => agg.stderr.includes('DA layer submission failed'), 'a DA submission failure', 20_000);
    const logs = join(aggregator, 'logs');
    await waitFor(() => existsSync(join(logs, 'node.log.2')), 'the log file to rotate twice', 20_000);
    agg.child.kill('SIGTERM');
    expect(await agg.exited).toBe(0);

    const lines = parse(agg.stderr);
    for (const rec of lines) expect(Object.keys(rec), JSON.stringify(rec)).toEqual(expect.arrayContaining(['level', 'time', 'module', 'msg']));
    const failure = lines.find((r) => r.msg === 'DA layer submission failed');
    expect(failure).toMatchObject({ level: 50, module: 'da-submitter', code: 'DA_SUBMIT_FAILED', reason: 'connection_refused' });
    for (const rec of lines.filter((r) => Number(r.level) >= 50)) expect(rec.code, JSON.stringify(rec)).toMatch(/^[A-Z][A-Z0-9_]+$/);
    expect(lines.find((r) => r.module === 'status')).toMatchObject({ status: { catchingUp: false, peers: 0 } });
    expect(lines.at(-1)).toMatchObject({ module: 'node', msg: 'node stopped' });
    expect(agg.stderr).not.toContain(TOKEN);

    // The file holds the same lines, rotated: exactly max_files old files, oldest first they end where stderr ends.
    expect(readdirSync(logs).sort()).toEqual(['node.log', 'node.log.1', 'node.log.2']);
    const fileText = ['node.log.2', 'node.log.1', 'node.log'].map((f) => readFileSync(join(logs, f), 'utf8')).join('');
    expect(fileText).not.toContain(TOKEN);
    const fileLines = parse(fileText);
    expect(fileLines).toEqual(lines.slice(-fileLines.length));
  });

  it('a fatal start-up error still leaves every line logged before it in log.file', async () => {
    const home = await homes.create('logs-fatal', true);
    configure(home, { 'log.file': 'logs/node.log' });
    // The RPC port is held by this test, so start fails after it has logged (chain, P2P) and exits 1.
    const held: Server = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    try {
      const port = (held.address() as AddressInfo).port;
      const node = await Daemon.start(home, ['--node.rpc.address', `127.0.0.1:${port}`], { wait: false });
      expect(await node.exited, node.stderr).toBe(1);
      expect(node.stderr).toContain('LISTEN_FAILED');
      const logged = node.stderr.split('\n').filter((l) => l.startsWith('{'));
      expect(logged.length, node.stderr).toBeGreaterThan(0);
      const fileLines = readFileSync(join(home, 'logs', 'node.log'), 'utf8')
        .split('\n')
        .filter(Boolean);
      expect(fileLines).toEqual(logged);
    } finally {
      held.close();
    }
  });
});
