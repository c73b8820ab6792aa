import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs a TypeScript fixture in a process of its own and waits for it to end by
 * itself (it never calls process.exit): the exit code, or null when it was
 * still running after `timeoutMs` (something kept it alive) and was killed.
 */
export function runToExit(script: URL, timeoutMs = 30_000): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(script)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}
