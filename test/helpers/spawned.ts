import type { ChildProcess } from 'node:child_process';
import { beforeEach } from 'vitest';

/** Lines of each process's stderr a failed test shows (the end: where it went wrong). */
const SHOWN_LINES = 60;

/**
 * A child process spawned by a test helper, its stderr captured. Every one is
 * registered, so that any failing assertion, waitFor timeout or hook error of a
 * test carries the stderr of the processes that ran during it (see
 * showStderrOnFailure, installed for every test file by vitest.config.ts).
 */
export class Spawned {
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly child: ChildProcess,
    /** How the test started it, e.g. `noded start --home /tmp/x`. */
    readonly label: string,
  ) {
    child.stderr?.on('data', (d) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    registry.add(this);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How a failure message names it: `--- stderr of noded start --home /tmp/x (pid 42`. */
  get heading(): string {
    return `--- stderr of ${this.label} (pid ${this.child.pid}`;
  }

  /** `--- stderr of noded start --home /tmp/x (pid 42, killed by SIGKILL):` and the last lines of its stderr. */
  describe(): string {
    const { exitCode, signalCode } = this.child;
    const state = this.running ? 'still running' : signalCode ? `killed by ${signalCode}` : `exit code ${exitCode}`;
    const lines = this.stderr.trimEnd().split('\n');
    const shown = lines.length > SHOWN_LINES ? [`… ${lines.length - SHOWN_LINES} earlier lines`, ...lines.slice(-SHOWN_LINES)] : lines;
    return `${this.heading}, ${state}):\n${this.stderr.trim() ? shown.join('\n') : '(empty)'}`;
  }
}

const registry = new Set<Spawned>();

/**
 * Appends to a failed test's errors the stderr of every process spawned during
 * it, and of those still running from before it (a beforeAll's daemon): the
 * assertion, wherever it is, shows what the processes said.
 */
export function showStderrOnFailure(): void {
  beforeEach(({ onTestFailed }) => {
    for (const s of registry) if (!s.running) registry.delete(s);
    onTestFailed(({ task }) => {
      for (const error of task.result?.errors ?? []) {
        // Not again for a process the error already shows (a helper's own message may carry its stderr).
        const untold = [...registry].filter((s) => !error.message.includes(s.heading));
        if (untold.length > 0) error.message += `\n\n${untold.map((s) => s.describe()).join('\n\n')}`;
      }
    });
  });
}
