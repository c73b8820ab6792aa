import { execFileSync } from 'node:child_process';
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

/**
 * Resident set size of a live process in MB (VmRSS of /proc/<pid>/status), or
 * one of its parts: RssAnon (its own memory), RssFile (pages of files it maps).
 */
export function residentMb(pid: number, field: 'VmRSS' | 'RssAnon' | 'RssFile' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1];
  if (!kb) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) a live process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3, `state`; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

/** Share of one core `pid` uses over `windowMs`, in %. */
export async function cpuPercent(pid: number, windowMs: number): Promise<number> {
  const before = cpuSeconds(pid);
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  return ((cpuSeconds(pid) - before) / ((performance.now() - start) / 1000)) * 100;
}
