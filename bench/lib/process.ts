import { readFileSync } from 'node:fs';
import { exited, type Scope } from './scope.js';

/** Wall time in ms from spawning `node …args` to its exit; an exit code other than `expectedExit` fails the figure. */
export async function wallTimeMs(scope: Scope, args: string[], expectedExit = 0): Promise<number> {
  const start = performance.now();
  const child = scope.spawn(process.execPath, args);
  const code = await exited(child);
  const ms = performance.now() - start;
  if (code !== expectedExit) throw new Error(`node ${args.join(' ')} exited with ${code}, expected ${expectedExit}`);
  return ms;
}

/** Resident set size of a live process in MB (VmRSS of /proc/<pid>/status). */
export function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) / 1024;
}
