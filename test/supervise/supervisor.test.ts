import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigText, type SuperviseEntry } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { SuperviseError, Supervisor, type ChildStatus } from '../../src/supervise/index.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, fetchJson, freePort, killAll, runCli, tempHome, waitFor } from '../helpers/daemon.js';

const running: Supervisor[] = [];
const home = tempHome('noded-supervise-');

afterEach(async () => {
  await Promise.all([killAll(), ...running.splice(0).map((s) => s.stop())]);
});

/** A `supervise:` entry as node.yml gives it, running `node -e script`. */
function entry(name: string, script: string, extra: Record<string, string> = {}): SuperviseEntry {
  const fields = Object.entries(extra).map(([k, v]) => `    ${k}: ${v}`);
  const yml = [
    'supervise:',
    `  - name: ${name}`,
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ["-e", ${JSON.stringify(script)}]`,
    ...fields,
  ].join('\n');
  return parseConfigText(yml, 'node.yml').supervise[0]!;
}

function captureLogs() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d) => (text += d));
  return {
    logger: createLogger({ level: 'info', format: 'json', destination: stream }),
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

/** Starts a supervisor without waiting for it: its logs can be read while it waits for a child to be ready. */
function launch(entries: SuperviseEntry[], onGiveUp: (err: SuperviseError) => void = () => undefined) {
  const logs = captureLogs();
  const started = Supervisor.start(entries, { home: home.dir, logger: logs.logger, onGiveUp });
  void started.then(
    (s) => running.push(s),
    () => undefined,
  );
  return { started, ...logs };
}

async function start(entries: SuperviseEntry[], onGiveUp?: (err: SuperviseError) => void) {
  const { started, ...logs } = launch(entries, onGiveUp);
  return { supervisor: await started, ...logs };
}

describe('Supervisor', () => {
  it('waits for the ready URL, prefixes output with the name, restarts a crashed child and reports it', async () => {
    const port = await freePort();
    // Serves HTTP once the test creates the file `go` names (every run: its cwd is the home), and exits 3 on SIGTERM.
    const go = `serve-${port}`;
    const script = `const fs=require('fs');console.log('hello from child');process.on('SIGTERM',()=>process.exit(3));
      const serve=()=>require('http').createServer((q,s)=>s.end('ok')).listen(${port},'127.0.0.1');
      const poll=setInterval(()=>{if(fs.existsSync(${JSON.stringify(go)})){clearInterval(poll);serve()}},20);`;
    const { started, lines } = launch([entry('svc', script, { ready: `http://127.0.0.1:${port}/` })]);
    let ready = false;
    void started.then(
      () => (ready = true),
      () => undefined,
    );
    await waitFor(() => lines().some((l) => l.module === 'svc' && l.msg === 'hello from child'), 'the child to run');
    await waitFor(() => lines().some((l) => l.msg === `waiting for svc to answer at http://127.0.0.1:${port}/`), 'the supervisor to wait for the ready URL');
    expect(ready, 'start() resolved before the child answered').toBe(false);

    writeFileSync(join(home.dir, go), '');
    const supervisor = await started;
    const [first] = supervisor.status();
    expect(first).toMatchObject({ name: 'svc', state: 'running', restarts: 0, last_exit: null });

    process.kill(first!.pid!, 'SIGTERM'); // the crash
    const after = await waitFor(() => {
      const [s] = supervisor.status();
      return s!.restarts === 1 && s!.state === 'running' ? s : null;
    }, 'the restart');
    expect(after.last_exit).toMatchObject({ code: 3, signal: null });
    expect(after.pid).toBeGreaterThan(0);
    expect(after.pid).not.toBe(first!.pid);
    expect(lines().map((l) => l.msg)).toContainEqual(expect.stringMatching(/^svc exited \(exit code 3\); restarting it in \d+ms$/));
  });

  it('gives up on a child that keeps crashing, with a message naming it, its exit and its output', async () => {
    const gaveUp: SuperviseError[] = [];
    const script = `console.error('fatal: cannot open database'); process.exitCode = 1`;
    // No ready URL: it counts as running at once, so its crashes go to the restart policy.
    await start([entry('flaky', script, { max_restarts: '2', restart_window: '1m' })], (err) => gaveUp.push(err));
    const err = await waitFor(() => gaveUp[0], 'the supervisor to give up', 20_000);
    expect(err.message).toMatch(
      /^supervised process flaky keeps crashing: it exited \(exit code 1\) after 2 restarts within 60s \(supervise max_restarts 2\); stopping the node/,
    );
    expect(err.message).toContain('fatal: cannot open database');
  });

  it('stops a child with SIGTERM, and SIGKILL after stop_grace when it ignores SIGTERM', async () => {
    const { supervisor, lines } = await start([
      entry('polite', `setInterval(() => {}, 1000)`),
      entry('stubborn', `process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('armed'); setInterval(() => {}, 1000)`, {
        stop_grace: '300ms',
      }),
    ]);
    await waitFor(() => lines().some((l) => l.module === 'stubborn' && l.msg === 'armed'), 'the SIGTERM handler');
    await supervisor.stop();
    const [polite, stubborn] = supervisor.status();
    expect(polite).toMatchObject({ state: 'stopped', last_exit: { signal: 'SIGTERM' } });
    expect(stubborn).toMatchObject({ state: 'stopped', last_exit: { signal: 'SIGKILL' } });
  });

  it('fails start when a child exits before it is ready, and stops the ones already started', async () => {
    const port = await freePort();
    const { started, lines } = launch([
      entry('first', `setInterval(() => {}, 1000)`),
      entry('broken', `console.log('bad flag --x'); process.exit(2)`, { ready: `http://127.0.0.1:${port}/` }),
    ]);
    const err = await started.catch((e: unknown) => e as SuperviseError);
    expect(err).toBeInstanceOf(SuperviseError);
    expect((err as Error).message).toMatch(
      new RegExp(`^supervised process broken exited \\(exit code 2\\) before it was ready at http://127.0.0.1:${port}/; its last output:\\n  bad flag --x`),
    );
    expect(lines().map((l) => l.msg)).toContain('first stopped (killed by SIGTERM)');
  });
});

describe('noded start with supervise: entries', () => {
  it('runs the children beside the node, shows them in status, and stops the node when one keeps crashing', async () => {
    const nodeHome = tempHome('noded-supervise-home-');
    try {
      expect((await runCli(['init', '--home', nodeHome.dir, '--chain-id', 'supervise-1', '--aggregator'])).code).toBe(0);
      const yml = join(nodeHome.dir, 'config', 'node.yml');
      // Runs until the test sends it SIGTERM: then it crashes (exit 1), naming why.
      const sidecar = `process.on('SIGTERM', () => { console.error('giving up'); process.exit(1) }); console.log('armed'); setInterval(() => {}, 1e6)`;
      // prettier-ignore
      writeFileSync(yml, readFileSync(yml, 'utf8').replace('supervise: []', [
        'supervise:',
        `  - { name: sidecar, command: ${JSON.stringify(process.execPath)}, args: ["-e", ${JSON.stringify(sidecar)}], max_restarts: "1" }`,
      ].join('\n')));
      const node = await Daemon.start(nodeHome.dir);
      const child = async () => ((await fetchJson(`${node.rpc}/node_info`)).json.children as ChildStatus[])[0]!;
      // A run has its SIGTERM handler once it has said so: the runs so far that have.
      const armed = () => node.stderr.split('\n').filter((l) => l.includes('"module":"sidecar","msg":"armed"')).length;
      await waitFor(() => armed() === 1, 'the sidecar to arm its SIGTERM handler');
      const first = await child();
      expect(first).toMatchObject({ name: 'sidecar', state: 'running', restarts: 0 });
      const status = await runCli(['status', '--home', nodeHome.dir], { NODED_RPC_ADDRESS: node.rpc.slice(7), NODED_RPC_STATUS_ADDRESS: node.status.slice(7) });
      expect(status.stdout).toMatch(new RegExp(`^child {8}sidecar running, pid ${first.pid}, .*0 restarts`, 'm'));

      process.kill(first.pid!, 'SIGTERM'); // the first crash: restarted
      const second = await waitFor(async () => {
        const c = await child();
        return c.restarts === 1 && c.state === 'running' ? c : null;
      }, 'the sidecar to be restarted');
      expect(second.last_exit).toMatchObject({ code: 1, signal: null });
      expect(node.running, 'the node runs on after one restart').toBe(true);
      await waitFor(() => armed() === 2, 'the restarted sidecar to arm its SIGTERM handler');

      process.kill(second.pid!, 'SIGTERM'); // the second: past max_restarts 1
      expect(await node.exited).toBe(1);
      expect(node.stderr).toContain('supervised process sidecar keeps crashing: it exited (exit code 1) after 1 restarts');
      expect(node.stderr).toContain('giving up');
      expect(node.stderr).toContain('"msg":"node stopped"');
    } finally {
      nodeHome.cleanup();
    }
  }, 60_000);
});
