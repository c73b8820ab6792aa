import { afterEach, describe, expect, it } from 'vitest';
import { Daemon, freePort, killAll, runCli, tempHome, waitFor } from '../../helpers/daemon.js';
import { Homes } from '../../helpers/homes.js';
import { ExecServeProcess, grpcFlags } from './helpers.js';

// What an operator sees when execution.type grpc is set wrong, or the executor is away or refuses (issue 22).

const homes = new Homes();
const execHomes: Array<ReturnType<typeof tempHome>> = [];
afterEach(async () => {
  await killAll();
  homes.cleanup();
  for (const h of execHomes.splice(0)) h.cleanup();
});

function execHome(): string {
  const h = tempHome('noded-exec-');
  execHomes.push(h);
  return h.dir;
}

const ports = ['--node.rpc.address', '127.0.0.1:0', '--node.rpc.status_address', '127.0.0.1:0', '--node.p2p.listen_address', '/ip4/127.0.0.1/tcp/0'];
const localDa = ['--node.da.local', '--node.da.address', 'http://127.0.0.1:0'];

describe('execution.type grpc: bad values and a bad executor', () => {
  it('a grpc_address that is not an http(s) URL is refused before anything starts', async () => {
    const home = await homes.create('exec-grpc-bad-url', true);
    const res = await runCli(['start', '--home', home, ...grpcFlags('127.0.0.1:50051'), ...ports, ...localDa], { OCLIF_COLUMNS: '1000' });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain('execution.grpc_address: got "127.0.0.1:50051", expected an http(s) URL like http://127.0.0.1:50051');
  });

  it('an unreachable executor: the node says what it waits for, and starts once the executor answers', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const home = await homes.create('exec-grpc-unreachable', true);
    const node = await Daemon.start(home, grpcFlags(url), { wait: false });
    await waitFor(
      () => node.stderr.includes(`waiting for the executor to initialise the chain: executor unreachable at ${url}`),
      'the waiting log line',
      60_000,
    );
    await ExecServeProcess.start(execHome(), { port });
    await waitFor(() => node.stderr.includes('"node started"'), 'the node started once the executor answers', 60_000);
  }, 120_000);

  it('a token the executor does not take, and an address that is no executor, stop the start with the remedy', async () => {
    const exec = await ExecServeProcess.start(execHome(), { token: 'right' });
    const home = await homes.create('exec-grpc-refused', true);
    const wrong = await runCli(['start', '--home', home, ...grpcFlags(exec.url), '--node.execution.grpc_auth_token', 'wrong', ...ports, ...localDa], {
      OCLIF_COLUMNS: '1000',
    });
    expect(wrong.code, wrong.stderr).toBe(1);
    expect(wrong.stderr).toContain(
      `the executor at ${exec.url} refused InitChain: wrong bearer token; set execution.grpc_auth_token to the token it was started with`,
    );
    expect(wrong.stderr).not.toContain('"wrong"');

    // Another node's RPC listener speaks Connect, but serves no ExecutorService.
    const other = await Daemon.start(await homes.create('exec-grpc-other', true));
    const notExec = await runCli(['start', '--home', home, ...grpcFlags(other.rpc), ...ports, ...localDa], { OCLIF_COLUMNS: '1000' });
    expect(notExec.code, notExec.stderr).toBe(1);
    expect(notExec.stderr).toContain(`${other.rpc} does not serve node.v1.ExecutorService (InitChain:`);
    expect(notExec.stderr).toContain("set execution.grpc_address to the executor's address");

    const right = await Daemon.start(home, [...grpcFlags(exec.url), '--node.execution.grpc_auth_token', 'right']);
    expect(right.stderr).toContain('"node started"');
  }, 180_000);
});
