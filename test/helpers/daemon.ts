import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Spawned } from './spawned.js';
import { WaitAborted, waitFor } from './wait.js';

export const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

export { WaitAborted, waitFor } from './wait.js';

export function tempHome(prefix = 'noded-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `noded …` to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 45_000): Promise<RunResult> {
  const proc = new Spawned(
    spawn(process.execPath, [RUN_JS, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
    `noded ${args.join(' ')}`,
  );
  let stdout = '';
  proc.child.stdout!.on('data', (d) => (stdout += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.child.kill('SIGKILL');
      reject(new Error(`noded ${args.join(' ')} did not finish in ${timeoutMs}ms\n${proc.describe()}`));
    }, timeoutMs);
    void proc.exited.then((code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: proc.stderr });
    });
  });
}

const running = new Set<NodedProcess>();

/** A long-running `noded …` child process, registered so killAll ends it whatever a test does. */
export class NodedProcess extends Spawned {
  protected constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    super(
      spawn(process.execPath, [RUN_JS, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
      `noded ${args.join(' ')}`,
    );
    this.child.stdout!.resume();
    running.add(this);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Waits for a JSON log line with this message and returns it parsed; fails at once if the process exits. */
  protected waitForLog(message: string, what: string, timeoutMs = 45_000): Promise<Record<string, unknown>> {
    // A bound for a machine under load (a start has taken 20 s there). Its stderr goes in the error itself:
    // a beforeAll's failure is no test's, so showStderrOnFailure does not see it.
    return waitFor(
      () => {
        const line = this.stderr.split('\n').find((l) => l.includes(`"${message}"`));
        if (line) return JSON.parse(line) as Record<string, unknown>;
        if (!this.running) throw new WaitAborted(`${what}: the process ended\n${this.describe()}`);
        return null;
      },
      what,
      timeoutMs,
    ).catch((err: Error) => {
      throw err instanceof WaitAborted ? err : new Error(`${err.message}\n${this.describe()}`);
    });
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }
}

/** A `noded start` child process whose addresses are read from its JSON log. */
export class Daemon extends NodedProcess {
  rpc = '';
  status = '';
  /** The DA address the node posts to or reads from (its built-in DA's when da.local). */
  da = '';
  /** The node's full P2P address (/ip4/127.0.0.1/tcp/<port>/p2p/<peer_id>), for other nodes' p2p.peers. */
  p2p = '';
  /** http://host:port of the Prometheus listener ('' when instrumentation.prometheus is off). */
  metrics = '';

  /**
   * Starts `noded start` on ephemeral ports (unless args set them) and waits for
   * the "node started" line. Extra args go after the defaults, so they win.
   */
  static async start(home: string, args: string[] = [], opts: { wait?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Daemon> {
    const d = new Daemon(['start', '--home', home, ...defaultStartArgs(args), ...args], opts.env);
    if (opts.wait === false) return d;
    // The "node started" line's listener fields (src/node): host:port each, metrics only when enabled.
    const rec = (await d.waitForLog('node started', 'noded start to report "node started"', opts.timeoutMs)) as Record<string, unknown> & {
      rpc: string;
      status: string;
      metrics?: string;
    };
    d.rpc = `http://${rec.rpc}`;
    d.status = `http://${rec.status}`;
    d.da = String(rec.da).split(' ')[0]!;
    d.p2p = (rec.p2p as string[])[0]!;
    if (rec.metrics) d.metrics = `http://${rec.metrics}`;
    return d;
  }
}

/** Ephemeral ports and JSON logs, for each of those flags the caller did not give itself. */
function defaultStartArgs(args: string[]): string[] {
  const defaults: Array<[string, ...string[]]> = [
    ['--node.rpc.address', '127.0.0.1:0'],
    ['--node.rpc.status_address', '127.0.0.1:0'],
    ['--node.p2p.listen_address', '/ip4/127.0.0.1/tcp/0'],
    ['--node.log.format', 'json'],
    // An aggregator posts to a built-in DA of its own on an ephemeral port, with fast DA blocks.
    ['--node.da.address', 'http://127.0.0.1:0'],
    ['--node.da.block_time', '100ms'],
  ];
  const given = (flag: string) => args.includes(flag) || args.includes(flag.replace('--', '--no-'));
  const out = defaults.filter(([flag]) => !given(flag)).flat();
  if (!given('--node.da.local') && !args.includes('--node.da.address')) out.push('--node.da.local');
  return out;
}

/** Kills every daemon a test started; call from afterEach/afterAll so none outlives a failing test. */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((d) => d.kill('SIGKILL')));
  running.clear();
}

export function getBlockJson(rpc: string, body: unknown): Promise<{ status: number; json: any; text: string }> {
  return fetchJson(`${rpc}/node.v1.StoreService/GetBlock`, typeof body === 'string' ? body : JSON.stringify(body));
}

/** A GET, or with `body` a JSON POST: the status, the body's text and its JSON (undefined when it is not JSON). */
export async function fetchJson(url: string, body?: string): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(url, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

export async function latestHeight(rpc: string): Promise<number> {
  const r = await getBlockJson(rpc, { height: 0 });
  return r.status === 200 ? r.json.block.header.header.height : 0;
}

export { freePort } from '../../bench/lib/ports.js';

/** A process other than the node listening on a TCP port of 127.0.0.1, once it listens; kill it in afterEach. */
export async function squatPort(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${port}, '127.0.0.1'); setInterval(() => {}, 1e6)`], { stdio: 'ignore' });
  try {
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const s = connect({ host: '127.0.0.1', port }, () => (s.destroy(), resolve(true)));
          s.once('error', () => resolve(false));
        }),
      `a process listening on ${port}`,
    );
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return child;
}
