import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every child a benchmark spawned and has not yet seen exit: killed on any way out of the process. */
const liveChildren = new Set<ChildProcess>();

/** Kills every child still running; synchronous, so it also works from an 'exit' handler. */
export function killLiveChildren(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
  liveChildren.clear();
}

/**
 * Resources a figure holds (temp dirs, children, servers, nodes), released in
 * reverse order by `close()` — in a `finally`, so an error still releases them.
 */
export class Scope {
  private readonly releases: Array<() => unknown> = [];

  /** `release` may return a promise: close() awaits it. */
  defer(release: () => unknown): void {
    this.releases.push(release);
  }

  async close(): Promise<void> {
    for (const release of this.releases.splice(0).reverse()) {
      try {
        await release();
      } catch (err) {
        // One failed release must not keep the others (a running child) alive.
        process.stderr.write(`bench: cleanup failed: ${(err as Error).message}\n`);
      }
    }
  }

  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.defer(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** Spawns a child that is killed when the scope closes (or the process exits) if it still runs. */
  spawn(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
    const child = spawn(command, args, { stdio: 'ignore', ...options });
    liveChildren.add(child);
    child.once('exit', () => liveChildren.delete(child));
    this.defer(() => stopChild(child));
    return child;
  }
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** SIGTERM, then SIGKILL if the child has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}
