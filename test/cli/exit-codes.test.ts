import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initHome } from '../../src/home/index.js';
import { freePort, runCli, tempHome } from '../helpers/daemon.js';

/**
 * README: exit 0 success, 1 failure, 2 bad usage; with --json a failure prints
 * {"error":{"code","message","exit"}} and the process exits with that same exit.
 * One table over every command, so a new command or flag cannot drift.
 */
const manifest = JSON.parse(readFileSync(new URL('../../oclif.manifest.json', import.meta.url), 'utf8')) as {
  commands: Record<string, { enableJsonFlag: boolean }>;
};
const commandIds = Object.keys(manifest.commands);

let home: ReturnType<typeof tempHome>;
let noNode: string;

beforeAll(async () => {
  home = tempHome();
  // In this process (test/helpers/homes.ts says why): `noded init` has its own tests.
  initHome({ home: home.dir, chainId: 'exit-1', aggregator: false, force: false });
  noNode = `127.0.0.1:${await freePort()}`;
});
afterAll(() => home?.cleanup());

/** Runs a command line and checks its exit, and under --json that the envelope says the same exit. */
async function expectExit(args: string[], exit: number): Promise<void> {
  const res = await runCli([...args, '--home', home.dir]);
  const what = `noded ${args.join(' ')}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`;
  expect(res.code, what).toBe(exit);
  if (args.includes('--json')) {
    const envelope = JSON.parse(res.stdout);
    expect(envelope.error.exit, what).toBe(exit);
    expect(envelope.error.code, what).toMatch(/^[A-Z_]+$/);
    expect(envelope.error.message, what).not.toBe('');
  }
}

describe('exit codes, one truth for every command', () => {
  it('covers every command in the manifest', () => {
    expect(commandIds.sort()).toEqual(
      [
        'abci:kvstore',
        'block:get',
        'da:serve',
        'doctor',
        'exec:serve',
        'ha:status',
        'ha:step-down',
        'init',
        'reset:evm',
        'reset:hard',
        'reset:soft',
        'start',
        'status',
        'tx:post',
      ].sort(),
    );
  });

  // One process per command: under --json where the command has it (the exit and the envelope, the path
  // NodedCommand.catch fixes), else plain. The plain path of a --json command is oclif's own, the same for
  // every command: the first --json command checks it once.
  const firstJson = commandIds.find((id) => manifest.commands[id]!.enableJsonFlag);
  it.each(commandIds)('%s: an unknown flag is bad usage (2), under --json when it has it', async (id) => {
    const argv = id.split(':');
    const json = manifest.commands[id]!.enableJsonFlag;
    await expectExit([...argv, '--no-such-flag', ...(json ? ['--json'] : [])], 2);
    if (id === firstJson) await expectExit([...argv, '--no-such-flag'], 2);
  });

  // Bad values of declared flags: usage (2). Failures of a well-formed command: 1. Not here, as their own
  // files check them with exit and message: start --node.node.block_time (test/e2e/lifecycle.test.ts),
  // da serve --listen and --block-time (test/da/serve-command.test.ts).
  const cases: Array<[string[], number]> = [
    [['start', '--node.execution.type', 'zz'], 2],
    [['init', '--execution', 'bogus', '--json'], 2],
    [['block', 'get', '--height', 'abc', '--json'], 2],
    [['doctor', '--check', 'nope', '--json'], 2],
    [['doctor', '--timeout', 'x', '--json'], 2],
    // A check that fails: here ha, with ha on and nothing at its etcd endpoint.
    [['doctor', '--check', 'ha', '--node.ha.enabled', '--node.ha.etcd_endpoints', 'http://127.0.0.1:1'], 1],
    [['abci', 'kvstore', '--address', 'nope'], 2],
    [['reset', 'evm', '--json', '--yes'], 2],
    [['ha', 'step-down', '--timeout', 'x', '--json'], 2],
    [['ha', 'status', '--node.ha.etcd_endpoints', 'nope', '--json'], 2],
    // A home with no ha.etcd_endpoints: the command needs the flag or the config key (HA_NOT_CONFIGURED).
    [['ha', 'status', '--json'], 2],
    [['init', '--json'], 1],
  ];
  it.each(cases)('noded %j exits %i', async (args, exit) => {
    await expectExit(args, exit);
  });

  it('a command that finds no node exits 1, its envelope too', async () => {
    await expectExit(['status', '--node', noNode, '--json'], 1);
    await expectExit(['block', 'get', '--height', '1', '--node', noNode, '--json'], 1);
  });
});
