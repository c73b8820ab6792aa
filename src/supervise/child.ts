import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { execa, type ResultPromise } from 'execa';
import { request } from 'undici';
import { resolveHomePath, type SuperviseEntry } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { backoffDelay, sleep, type BackoffPolicy } from '../util/index.js';

export type ChildState = 'starting' | 'running' | 'restarting' | 'stopped' | 'failed';

/** How a run of the child ended. */
export interface ChildExit {
  code: number | null;
  signal: string | null;
  /** Unix ms. */
  at: number;
}

/** A supervised child as `noded status` and the dashboard show it. */
export interface ChildStatus {
  name: string;
  state: ChildState;
  pid: number | null;
  /** Unix ms the current run started; null while not running. */
  started_at: number | null;
  restarts: number;
  last_exit: ChildExit | null;
}

/** A child the supervisor could not start, or one that keeps crashing; the message says which and why. */
export class SuperviseError extends Error {
  readonly code = 'SUPERVISED_CHILD_FAILED';
}

/** Lines of output kept for the message when the child fails. */
const TAIL_LINES = 15;
/** Waits before a restart: the n-th restart within restart_window waits the n-th backoff. */
const RESTART_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 30_000 };
const READY_POLL_MS = 100;

/** `ethereumjs running, pid 4242, up 3m12s, 1 restart, last exit: killed by SIGKILL 2m ago`: one child on one line. */
export function describeChild(child: Omit<ChildStatus, 'state' | 'last_exit'> & { state: string; last_exit?: ChildExit | null }, now = Date.now()): string {
  const parts = [`${child.name} ${child.state}`];
  if (child.pid !== null) parts.push(`pid ${child.pid}`);
  if (child.started_at !== null) parts.push(`up ${ago(now - child.started_at)}`);
  parts.push(`${child.restarts} restart${child.restarts === 1 ? '' : 's'}`);
  if (child.last_exit) parts.push(`last exit: ${describeExit(child.last_exit)} ${ago(now - child.last_exit.at)} ago`);
  return parts.join(', ');
}

/** 3m12s, 45s, 2h5m. */
function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

export const describeExit = (exit: Pick<ChildExit, 'code' | 'signal'>): string => (exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`);

/**
 * One `supervise:` entry: runs it with execa, logs its output line by line
 * under its name, restarts it after a crash with exponential backoff, and
 * gives up (calling `onGiveUp`) when it crashes more than max_restarts times
 * within restart_window.
 */
export class SupervisedChild {
  private state: ChildState = 'stopped';
  private proc: ResultPromise | null = null;
  private exited: Promise<void> = Promise.resolve();
  private startedAt: number | null = null;
  private restarts = 0;
  /** When each restart within the window happened. */
  private recentRestarts: number[] = [];
  private lastExit: ChildExit | null = null;
  private readonly tail: string[] = [];
  private readonly stopping = new AbortController();
  private readonly log: Logger;

  constructor(
    readonly entry: SuperviseEntry,
    private readonly home: string,
    logger: Logger,
    private readonly onGiveUp: (err: SuperviseError) => void,
  ) {
    this.log = logger.child({ module: entry.name });
  }

  status(): ChildStatus {
    return {
      name: this.entry.name,
      state: this.state,
      pid: this.proc?.pid ?? null,
      started_at: this.state === 'running' || this.state === 'starting' ? this.startedAt : null,
      restarts: this.restarts,
      last_exit: this.lastExit,
    };
  }

  /** Launches the child and waits until its ready URL answers; throws SuperviseError when it exits first or the wait runs out. */
  async start(): Promise<void> {
    this.spawn();
    const { ready, ready_timeout, name } = this.entry;
    if (!ready) {
      this.state = 'running';
      return;
    }
    const deadline = Date.now() + ready_timeout;
    this.log.info({ ready }, `waiting for ${name} to answer at ${ready}`);
    while (!(await answers(ready))) {
      if (this.state !== 'starting')
        throw new SuperviseError(`supervised process ${name} ${this.exitText()} before it was ready at ${ready}${this.tailText()}`);
      if (Date.now() > deadline) {
        throw new SuperviseError(
          `supervised process ${name} did not answer at ${ready} within ${ready_timeout / 1000}s (supervise ready_timeout)${this.tailText()}`,
        );
      }
      await sleep(READY_POLL_MS, this.stopping.signal);
    }
    if (this.state === 'starting') this.state = 'running';
    this.log.info({ pid: this.proc?.pid }, `${name} is ready`);
  }

  /** SIGTERM, then SIGKILL after stop_grace; resolves once it has exited. */
  async stop(): Promise<void> {
    this.stopping.abort(new Error('supervisor stopping'));
    const proc = this.proc;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      this.log.info({ pid: proc.pid, graceMs: this.entry.stop_grace }, `stopping ${this.entry.name}`);
      proc.kill('SIGTERM');
    }
    await this.exited;
    this.state = this.state === 'failed' ? 'failed' : 'stopped';
  }

  private spawn(): void {
    const { command, args, env, cwd } = this.entry;
    this.state = this.restarts > 0 ? 'restarting' : 'starting';
    const proc = execa(command, args, {
      cwd: resolveHomePath(this.home, cwd || '.'),
      env,
      stdin: 'ignore',
      buffer: false,
      reject: false,
      forceKillAfterDelay: this.entry.stop_grace,
    });
    this.proc = proc;
    this.startedAt = Date.now();
    this.follow(proc.stdout);
    this.follow(proc.stderr);
    this.exited = proc.then((result) => {
      // Neither an exit code nor a signal: it never ran (no such program, say), and execa says why.
      const neverRan = result.exitCode === undefined && result.signal === undefined;
      this.onExit({ code: result.exitCode ?? null, signal: result.signal ?? null, at: Date.now() }, neverRan ? result.shortMessage : undefined);
    });
    if (this.restarts > 0) void this.markRunningWhenReady(proc);
  }

  /** After a restart the node does not wait: the child counts as running once it answers (or at once without a ready URL). */
  private async markRunningWhenReady(proc: ResultPromise): Promise<void> {
    const { ready } = this.entry;
    while (ready && this.proc === proc && this.state === 'restarting' && !(await answers(ready))) {
      await sleep(READY_POLL_MS, this.stopping.signal).catch(() => undefined);
    }
    if (this.proc === proc && this.state === 'restarting') this.state = 'running';
  }

  private follow(stream: Readable | null): void {
    if (!stream) return;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      this.tail.push(line);
      if (this.tail.length > TAIL_LINES) this.tail.shift();
      this.log.info(line);
    });
  }

  private onExit(exit: ChildExit, launchError?: string): void {
    this.lastExit = exit;
    // `code` in a log line is the stable code alerts match on; the exit code is logged as exitCode.
    const logged = { exitCode: exit.code, signal: exit.signal, at: exit.at };
    const { name, restart, max_restarts, restart_window } = this.entry;
    if (this.stopping.signal.aborted) {
      this.log.info(logged, `${name} stopped (${describeExit(exit)})`);
      return;
    }
    const why = launchError ?? describeExit(exit);
    const wanted = restart === 'always' || (restart === 'on-failure' && (exit.code !== 0 || exit.signal !== null));
    if (this.state === 'starting' || !wanted) {
      // A child that dies before it is ready fails start(); one not to restart just ends.
      this.log.warn({ code: 'CHILD_EXITED', ...logged }, `${name} exited (${why})${wanted ? '' : `; restart policy ${restart}: not restarting`}`);
      this.state = this.state === 'starting' ? 'failed' : 'stopped';
      return;
    }
    this.recentRestarts = this.recentRestarts.filter((at) => exit.at - at < restart_window);
    if (this.recentRestarts.length >= max_restarts) {
      this.state = 'failed';
      this.onGiveUp(
        new SuperviseError(
          `supervised process ${name} keeps crashing: it exited (${why}) after ${this.recentRestarts.length} restarts within ${restart_window / 1000}s (supervise max_restarts ${max_restarts}); stopping the node${this.tailText()}`,
        ),
      );
      return;
    }
    const delay = backoffDelay(this.recentRestarts.length + 1, RESTART_BACKOFF);
    this.recentRestarts.push(exit.at);
    this.restarts++;
    this.state = 'restarting';
    this.log.warn({ code: 'CHILD_EXITED', ...logged, restartInMs: delay, restarts: this.restarts }, `${name} exited (${why}); restarting it in ${delay}ms`);
    sleep(delay, this.stopping.signal).then(
      () => this.spawn(),
      () => undefined, // stopping: no restart
    );
  }

  private exitText(): string {
    return this.lastExit ? `exited (${describeExit(this.lastExit)})` : 'stopped';
  }

  private tailText(): string {
    return this.tail.length ? `; its last output:\n  ${this.tail.join('\n  ')}` : '';
  }
}

/** True when anything answers HTTP at `url` (any status: an Engine port answers 401 without a JWT). */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await request(url, { method: 'GET', headersTimeout: 1000, bodyTimeout: 1000 });
    await res.body.dump();
    return true;
  } catch {
    return false;
  }
}
