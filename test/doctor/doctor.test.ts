import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { initHome } from '../../src/home/index.js';
import { CHECK_IDS, type CheckResult, type CheckStatus } from '../../src/doctor/index.js';
import { Daemon, RUN_JS, freePort, killAll, runCli, squatPort, tempHome, waitFor, type RunResult } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { EthereumJs, killAllEthereumJs } from './ethereumjs.js';

const homes: Array<ReturnType<typeof tempHome>> = [];
const newDir = () => {
  const h = tempHome('noded-doctor-');
  homes.push(h);
  return h.dir;
};

/** Processes one test starts (a port squatter, a second DA); the shared devnet lives until afterAll. */
const perTest: Array<{ kill: () => unknown }> = [];
afterEach(async () => {
  await Promise.all(perTest.splice(0).map((p) => p.kill()));
});
afterAll(async () => {
  await Promise.all([killAll(), killAllEthereumJs()]);
  for (const h of homes) h.cleanup();
});

interface DoctorRun extends RunResult {
  results: CheckResult[];
  byId: Record<string, CheckResult>;
}

/** Each check's bound: wide enough that a loaded machine's live daemons answer within it (no check here waits for one to run out). */
const TIMEOUT = ['--timeout', '10s'];

/** `noded doctor --json` on a home, with the TIMEOUT bound unless the args give one. */
async function doctor(home: string, args: string[] = []): Promise<DoctorRun> {
  const timeout = args.includes('--timeout') ? [] : TIMEOUT;
  const res = await runCli(['doctor', '--home', home, '--json', ...timeout, ...args]);
  let results: CheckResult[];
  try {
    results = JSON.parse(res.stdout) as CheckResult[];
  } catch {
    throw new Error(`doctor printed no JSON (exit ${res.code}):\n${res.stdout}\n${res.stderr}`);
  }
  return { ...res, results, byId: Object.fromEntries(results.map((r) => [r.id, r])) };
}

/**
 * Exactly `id` fails, with a remedy; the DA checks in `deferred` say they were
 * not checked (warn, pointing at the check that owns the cause); every other
 * check has the status of the healthy baseline.
 */
function expectOnlyFailure(run: DoctorRun, id: string, opts: { deferred?: string[]; baseline?: Partial<Record<string, CheckStatus>> } = {}): CheckResult {
  expect(run.code, run.stdout).toBe(1);
  const failed = run.byId[id]!;
  expect(failed.status, JSON.stringify(failed)).toBe('fail');
  expect(failed.remedy).not.toBe('');
  for (const r of run.results) {
    if (r.id === id) continue;
    if (opts.deferred?.includes(r.id)) {
      expect(r.status, `${r.id}: ${r.message}`).toBe('warn');
      expect(r.message).toMatch(/^not checked/);
      expect(r.remedy).toBe(`see ${id}`);
    } else {
      expect(r.status, `${r.id}: ${r.message}`).toBe(opts.baseline?.[r.id] ?? 'ok');
    }
  }
  return failed;
}

/** A process other than the node holding a TCP port, killed after the test. */
async function squat(port: number): Promise<ChildProcess> {
  const child = await squatPort(port);
  perTest.push({ kill: () => child.kill('SIGKILL') });
  return child;
}

describe('noded doctor against a running devnet', () => {
  let home: string;
  let da: DaServer;
  let agg: Daemon;
  let el: EthereumJs;
  let ports: { rpc: number; status: number; p2p: number };
  const ready = async () => (await fetch(`${agg.rpc}/health/ready`).catch(() => undefined))?.status === 200;

  beforeAll(async () => {
    home = newDir();
    [da, el] = await Promise.all([DaServer.start(newDir()), EthereumJs.start(newDir())]);
    ports = { rpc: await freePort(), status: await freePort(), p2p: await freePort() };
    const config = {
      'rpc.address': `127.0.0.1:${ports.rpc}`,
      'rpc.status_address': `127.0.0.1:${ports.status}`,
      'p2p.listen_address': `/ip4/127.0.0.1/tcp/${ports.p2p}`,
      'da.address': da.address,
    } as const;
    initHome({ home, chainId: 'doctor-1', aggregator: true, force: false, config });
    // A valid secret for the engine cases, which point execution at EthereumJS by flags.
    writeFileSync(join(home, 'config', 'jwt.hex'), readFileSync(el.jwtFile));
    agg = await Daemon.start(home, [
      '--node.rpc.address',
      config['rpc.address'],
      '--node.rpc.status_address',
      config['rpc.status_address'],
      '--no-node.da.local',
      '--node.da.address',
      da.address,
      '--node.node.block_time',
      '100ms',
    ]);
    await waitFor(ready, 'the aggregator to be ready');
  });

  beforeEach(async () => {
    await waitFor(ready, 'the aggregator to be ready again', 20_000);
  });

  it('a healthy devnet: exit 0, and --json is a stable array of {id, status, message, remedy}', async () => {
    const [run, plain] = await Promise.all([doctor(home), runCli(['doctor', '--home', home, ...TIMEOUT])]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.results.map((r) => r.id)).toEqual([...CHECK_IDS]);
    for (const r of run.results) {
      expect(Object.keys(r), r.id).toEqual(['id', 'status', 'message', 'remedy']);
      expect(r.status, `${r.id}: ${r.message}`).toBe('ok');
      expect(r.remedy).toBe('');
      expect(r.message).not.toBe('');
    }
    expect(run.byId.ports!.message).toContain(`${ports.rpc} (rpc.address): held by this home's node (pid ${agg.pid})`);
    expect(run.byId.ports!.message).toContain(`${ports.p2p} (p2p.listen_address): free`);
    expect(run.byId['da-sync']!.message).toMatch(/synced at height \d+/);
    expect(run.byId.peers!.message).toMatch(/DA-only mode/);
    expect(run.byId.node!.message).toMatch(new RegExp(`live, ready, not catching up \\(pid ${agg.pid}, height \\d+\\)`));

    // Without a TTY: one plain line per check, no colour codes.
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines.slice(0, CHECK_IDS.length).map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual(CHECK_IDS.map((id) => `ok ${id}`));
    expect(lines.at(-1)).toBe(`${CHECK_IDS.length} checks: ${CHECK_IDS.length} ok, 0 warn, 0 fail`);
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('broken YAML: config fails with line and column; the other checks still run on what parses', async () => {
    const file = join(home, 'config', 'node.yml');
    const original = readFileSync(file, 'utf8');
    const lines = original.split('\n');
    const at = lines.indexOf('  format: text');
    lines[at] = '  format: text: json';
    writeFileSync(file, lines.join('\n'));
    try {
      const run = await doctor(home);
      const failed = expectOnlyFailure(run, 'config');
      expect(failed.message).toContain(`not valid YAML at line ${at + 1}, column 11`);
      expect(failed.remedy).toContain(`line ${at + 1}, column 11 of ${file}`);
    } finally {
      writeFileSync(file, original);
    }
  });

  it('a port held by another process: ports fails naming the port, the process and the flag that moves it', async () => {
    const squatted = await freePort();
    const squatter = await squat(squatted);
    const run = await doctor(home, ['--node.p2p.listen_address', `/ip4/127.0.0.1/tcp/${squatted}`]);
    const failed = expectOnlyFailure(run, 'ports');
    expect(failed.message).toContain(`port ${squatted} (p2p.listen_address) is in use by process ${squatter.pid} (`);
    expect(failed.remedy).toContain(`stop process ${squatter.pid}`);
    expect(failed.remedy).toMatch(new RegExp(`--node\\.p2p\\.listen_address /ip4/127\\.0\\.0\\.1/tcp/\\d+`));
  });

  it('DA stopped: da-health fails with "DA endpoint unreachable"; the other DA checks defer to it', async () => {
    await da.setFaults({ refuse: true });
    try {
      const run = await doctor(home);
      const failed = expectOnlyFailure(run, 'da-health', { deferred: ['da-sync', 'da-auth', 'da-balance'] });
      expect(failed.message).toMatch(/^DA endpoint unreachable: .*connection refused/);
      expect(failed.remedy).toContain(`--node.da.address (now ${da.address})`);
    } finally {
      await da.setFaults({ refuse: false });
    }
  });

  it('DA not synced: da-sync fails with how far behind', async () => {
    await da.setFaults({ notSynced: true });
    try {
      const run = await doctor(home);
      const failed = expectOnlyFailure(run, 'da-sync');
      expect(failed.message).toMatch(/^DA node not synced: at height (\d+) of \d+, 100 behind/);
      expect(failed.remedy).toMatch(/wait for the DA node to finish syncing/);
    } finally {
      await da.setFaults({ notSynced: false });
    }
  });

  it('a DA with a token and a wrong one configured (or none): da-auth fails saying the token is wrong (or missing) and how to make one', async () => {
    const tokenDa = await DaServer.start(newDir(), ['--token', 'right-token-1']);
    perTest.push(tokenDa);
    const [wrong, none, right] = await Promise.all([
      doctor(home, ['--node.da.address', tokenDa.address, '--node.da.auth_token', 'wrong-token-2']),
      doctor(home, ['--node.da.address', tokenDa.address]),
      doctor(home, ['--node.da.address', tokenDa.address, '--node.da.auth_token', 'right-token-1']),
    ]);
    const failed = expectOnlyFailure(wrong, 'da-auth', { deferred: ['da-sync', 'da-balance'] });
    expect(failed.message).toMatch(/^DA token wrong: header\.NetworkHead to DA node \S+: HTTP 401: the DA node rejected the token in da\.auth_token/);
    expect(failed.remedy).toContain('celestia <light|bridge> auth write --p2p.network <network>');
    expect(failed.remedy).toContain('da.auth_token');
    expect(wrong.stdout).not.toContain('right-token-1');
    expect(wrong.byId['da-health']!.message).toMatch(/it refuses the token: see da-auth/);

    const missing = expectOnlyFailure(none, 'da-auth', { deferred: ['da-sync', 'da-balance'] });
    expect(missing.message).toMatch(
      /^DA token missing: .*missing permission to invoke 'NetworkHead' \(need 'read'\): no auth token is set \(da\.auth_token is empty\)/,
    );
    expect(missing.remedy).toContain('celestia <light|bridge> auth write --p2p.network <network>');

    expect(right.code, right.stdout).toBe(0);
    expect(right.byId['da-auth']!.message).toMatch(/accepts the token/);
  });

  it('a node log with a code 19 line: da-balance fails with "check the balance, fund the account, or raise --node.da.gas_price"', async () => {
    await da.setFaults({ submitError: 'already_in_mempool' });
    let log = '';
    try {
      await waitFor(
        () => agg.stderr.split('\n').some((l) => l.includes('DA layer submission failed') && l.includes('code 19')),
        'a code 19 failure in the node log',
      );
      log = join(newDir(), 'node.log');
      writeFileSync(log, agg.stderr);
    } finally {
      await da.setFaults({ submitError: null });
    }
    const run = await doctor(home, ['--log', log]);
    const failed = expectOnlyFailure(run, 'da-balance');
    expect(failed.message).toMatch(
      /^\d+ DA submission failure\(s\) with codespace sdk code 19 in .*node\.log, the last at \S+, and no submission succeeded since/,
    );
    expect(failed.remedy).toContain('check the balance, fund the account, or raise --node.da.gas_price');
  });

  it('a DA account with no funds: da-balance fails with "fund the account"', async () => {
    await da.setFaults({ balance: '0' });
    try {
      const failed = expectOnlyFailure(await doctor(home), 'da-balance');
      expect(failed.message).toMatch(/^the DA account has no funds \(0 utia\)/);
      expect(failed.remedy).toMatch(/^fund the account/);
    } finally {
      await da.setFaults({ balance: null });
    }
  });

  const evm = (engineUrl: string, jwtFile?: string) => [
    '--node.execution.type',
    'evm',
    '--node.execution.engine_url',
    engineUrl,
    ...(jwtFile ? ['--node.execution.jwt_secret_file', jwtFile] : []),
  ];

  it('Engine API down: engine fails with "Engine API unreachable"', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const failed = expectOnlyFailure(await doctor(home, evm(url)), 'engine');
    expect(failed.message).toMatch(new RegExp(`^Engine API unreachable at ${url}: ECONNREFUSED`));
    expect(failed.remedy).toContain('--node.execution.engine_url');
  });

  it('the real EthereumJS client: the right JWT passes (beside the running kv node: out of sync → warn); a wrong one fails', async () => {
    // A home with no node running: nothing to compare heights with, so reachable and authorised is ok.
    const idle = newDir();
    initHome({ home: idle, chainId: 'doctor-evm', aggregator: false, force: false, config: { 'execution.type': 'evm', 'execution.engine_url': el.engineUrl } });
    writeFileSync(join(idle, 'config', 'jwt.hex'), readFileSync(el.jwtFile));
    const wrongJwt = join(newDir(), 'wrong.hex');
    writeFileSync(wrongJwt, randomBytes(32).toString('hex'));
    const [ok, beside, wrong] = await Promise.all([
      doctor(idle, ['--check', 'engine']),
      doctor(home, evm(el.engineUrl)),
      doctor(home, evm(el.engineUrl, wrongJwt)),
    ]);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.results).toEqual([
      {
        id: 'engine',
        status: 'ok',
        message: `Engine API at ${el.engineUrl} reachable and authorised; execution layer at height 0 (node not answering: heights not compared)`,
        remedy: '',
      },
    ]);

    // Beside this home's running (kv) node, well past height 1, the fresh execution chain at 0 is behind.
    expect(beside.code, beside.stdout).toBe(0);
    expect(beside.byId.engine).toMatchObject({ status: 'warn', remedy: expect.stringMatching(/execution client's logs/) });
    expect(beside.byId.engine!.message).toMatch(/^execution layer out of sync: at height 0, the node at \d+ \(behind\)/);

    const failed = expectOnlyFailure(wrong, 'engine');
    expect(failed.message).toMatch(new RegExp(`^Engine API at ${el.engineUrl} rejected the JWT \\(HTTP 401`));
    expect(failed.remedy).toMatch(/share one secret/);
  });

  it('a bad jwt.hex: engine fails naming the file', async () => {
    const dir = newDir();
    const bad = join(dir, 'jwt.hex');
    writeFileSync(bad, 'not-hex-at-all\n');
    const short = join(dir, 'short.hex');
    writeFileSync(short, `0x${randomBytes(16).toString('hex')}\n`);
    const missing = join(dir, 'missing.hex');
    const [notHex, tooShort, gone] = await Promise.all([bad, short, missing].map((f) => doctor(home, evm(el.engineUrl, f))));
    const failed = expectOnlyFailure(notHex!, 'engine');
    expect(failed.message).toBe(`JWT secret file ${bad} must hold 32 bytes as 64 hex digits; it has characters that are not hex`);
    expect(failed.remedy).toContain(`openssl rand -hex 32 > ${bad}`);
    expect(expectOnlyFailure(tooShort!, 'engine').message).toBe(`JWT secret file ${short} must hold 32 bytes as 64 hex digits; it has 32 hex digits`);
    expect(expectOnlyFailure(gone!, 'engine').message).toBe(`JWT secret file ${missing} is missing`);
  });

  it('a bare peer id: peers fails with the full format; a full address whose port is closed warns', async () => {
    const bare = '12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN';
    const closed = await freePort();
    const [run, down] = await Promise.all([
      doctor(home, ['--node.p2p.peers', bare]),
      doctor(home, ['--node.p2p.peers', `/ip4/127.0.0.1/tcp/${closed}/p2p/${bare}`]),
    ]);
    const failed = expectOnlyFailure(run, 'peers');
    expect(failed.message).toBe(`"${bare}" is a bare peer id: a peer address also says where to reach the peer (from flag --node.p2p.peers)`);
    expect(failed.remedy).toContain('/ip4/<ip>/tcp/<port>/p2p/<peer_id>');
    expect(run.byId.config!.message).toMatch(/p2p\.peers is reported by the peers check/);

    expect(down.code, down.stdout).toBe(0);
    expect(down.byId.peers).toMatchObject({
      status: 'warn',
      message: expect.stringMatching(new RegExp(`^firewall or peer down: 127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\)`)),
    });
  });

  it('a data path that is a file: data-dir fails alone; so do key files readable by others', async () => {
    // Three more homes of the same devnet, on ports of their own, not running: as made, with data/ a file, with a key file 0644.
    const made = async (chainId: string) => {
      const dir = newDir();
      const [rpc, status, p2p] = [await freePort(), await freePort(), await freePort()];
      initHome({
        home: dir,
        chainId,
        aggregator: false,
        force: false,
        config: {
          'rpc.address': `127.0.0.1:${rpc}`,
          'rpc.status_address': `127.0.0.1:${status}`,
          'p2p.listen_address': `/ip4/127.0.0.1/tcp/${p2p}`,
          'da.address': da.address,
        },
      });
      return dir;
    };
    const [asMade, dataFile, openKey] = [await made('doctor-2'), await made('doctor-3'), await made('doctor-4')];
    const data = join(dataFile, 'data');
    rmSync(data, { recursive: true });
    writeFileSync(data, 'not a directory\n');
    chmodSync(join(openKey, 'config', 'signer.json'), 0o644);
    const [before, file, open] = await Promise.all([doctor(asMade), doctor(dataFile), doctor(openKey)]);

    expect(before.code, before.stdout).toBe(0);
    expect(before.results.filter((r) => r.status !== 'ok').map((r) => r.id)).toEqual(['node']);
    expect(before.byId.node!.message).toMatch(/not running/);
    const notRunning = { baseline: { node: 'warn' as const } };
    const failed = expectOnlyFailure(file, 'data-dir', notRunning);
    expect(failed.message).toBe(`${data} is not a directory (a file); the node cannot keep its data there`);
    expect(failed.remedy).toContain(`mv ${data} ${data}.bak`);
    const keys = expectOnlyFailure(open, 'data-dir', notRunning);
    expect(keys.message).toBe(`key files readable by others: ${join(openKey, 'config', 'signer.json')} is 0644`);
    expect(keys.remedy).toMatch(/^`chmod 600 /);
  });

  it('on a terminal: a listr2 task list with colours', async () => {
    const cmd = `stty cols 200; ${process.execPath} ${RUN_JS} doctor --home ${home} ${TIMEOUT.join(' ')} --check config,peers,node`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NO_COLOR' && k !== 'FORCE_COLOR'));
    const tty = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', env, timeout: 30_000 });
    expect(tty.status, tty.stdout + tty.stderr).toBe(0);
    expect(tty.stdout).toContain('\u001b[32m✔\u001b[39m config: ');
    expect(tty.stdout).toContain('✔\u001b[39m node: live, ready');
    expect(tty.stdout).toContain('3 checks: 3 ok, 0 warn, 0 fail');
  });
});

describe('noded doctor: usage', () => {
  it('--list-checks, --check, and exit 2 for an unknown id, a bad --timeout or a missing --log', async () => {
    const home = newDir();
    initHome({ home, chainId: 'doctor-3', aggregator: false, force: false });
    const noEtcd = `http://127.0.0.1:${await freePort()}`;
    const [list, listJson, unknown, badTimeout, noLog, some, haOff, haDown] = await Promise.all([
      runCli(['doctor', '--list-checks']),
      runCli(['doctor', '--list-checks', '--json']),
      runCli(['doctor', '--home', home, '--check', 'config,bogus', '--json']),
      runCli(['doctor', '--home', home, '--timeout', 'soon']),
      runCli(['doctor', '--home', home, '--log', join(home, 'nope.log')]),
      doctor(home, ['--check', 'peers', '--check', 'config,engine']),
      doctor(home, ['--check', 'ha']),
      runCli(['doctor', '--home', home, '--check', 'ha', '--node.ha.enabled', '--node.ha.etcd_endpoints', noEtcd, ...TIMEOUT]),
    ]);
    expect(list.code).toBe(0);
    expect(
      list.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(' ')[0]),
    ).toEqual([...CHECK_IDS]);
    expect(JSON.parse(listJson.stdout).map((c: { id: string }) => c.id)).toEqual([...CHECK_IDS]);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout).error).toMatchObject({
      code: 'UNKNOWN_CHECK',
      exit: 2,
      message: `unknown check "bogus"; the checks are ${CHECK_IDS.join(', ')}`,
    });
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toMatch(/--timeout: got "soon"/);
    expect(noLog.code).toBe(2);
    expect(noLog.stderr).toMatch(/--log: .*nope\.log is not a file/);
    expect(some.code).toBe(0);
    expect(some.results.map((r) => r.id)).toEqual(['config', 'engine', 'peers']);
    // The ha check: skipped without ha.enabled; an etcd that does not answer fails it (exit 1), the remedy under it.
    expect(haOff.code, haOff.stderr).toBe(0);
    expect(haOff.results).toEqual([{ id: 'ha', status: 'ok', message: 'skipped: ha.enabled is false (this node runs without an HA cluster)', remedy: '' }]);
    expect(haDown.code, haDown.stdout + haDown.stderr).toBe(1);
    const [line, remedy] = haDown.stdout.split('\n');
    expect(line).toMatch(new RegExp(`^fail {2}ha +etcd at ${noEtcd} did not answer`));
    expect(remedy).toMatch(new RegExp(`^ +remedy: start etcd at ${noEtcd} `));
  });
});
