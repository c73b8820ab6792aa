import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Spawned } from './spawned.js';

/**
 * Runs a TypeScript fixture in a process of its own and waits for it to end by
 * itself (it never calls process.exit): the exit code, or null when it was
 * still running after `timeoutMs` (something kept it alive) and was killed.
 */
export async function runToExit(script: URL, timeoutMs = 30_000): Promise<{ code: number | null; out: string }> {
  const path = fileURLToPath(script);
  const proc = new Spawned(spawn(process.execPath, ['--import', 'tsx', path], { stdio: ['ignore', 'pipe', 'pipe'] }), `node ${path}`);
  let out = '';
  proc.child.stdout!.on('data', (d) => (out += d));
  proc.child.stderr!.on('data', (d) => (out += d));
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), timeoutMs);
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, out };
}
