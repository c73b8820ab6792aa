import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { HomePaths } from '../config/index.js';

/** This home's node as its pid file tells it. */
export type NodeProcess =
  | { state: 'none' }
  | { state: 'running'; pid: number; pidFile: string }
  /** A pid file whose process is gone: a node that was killed, or crashed. */
  | { state: 'stale'; pid: number; pidFile: string }
  /** A pid file that holds no pid. */
  | { state: 'invalid'; pidFile: string; content: string };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads `data/node.pid`: running (a live process), stale (gone), invalid, or none. */
export function nodeProcess(paths: Pick<HomePaths, 'pidFile'>): NodeProcess {
  let text: string;
  try {
    text = readFileSync(paths.pidFile, 'utf8');
  } catch {
    return { state: 'none' };
  }
  const trimmed = text.trim();
  const pid = /^\d{1,10}$/.test(trimmed) ? Number(trimmed) : NaN;
  if (!Number.isSafeInteger(pid) || pid <= 0) return { state: 'invalid', pidFile: paths.pidFile, content: trimmed.slice(0, 40) };
  return alive(pid) ? { state: 'running', pid, pidFile: paths.pidFile } : { state: 'stale', pid, pidFile: paths.pidFile };
}

/** A process found holding a port. */
export interface PortHolder {
  pid: number;
  /** Its command line, shortened; empty when it cannot be read. */
  command: string;
}

/** Inodes of the sockets listening on `port` (TCP, v4 and v6), from /proc/net/tcp*. Linux only; empty elsewhere. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (f.length < 10) continue;
      const local = f[1]!;
      if (f[3] === '0A' && local.slice(local.lastIndexOf(':') + 1) === hexPort && f[9] !== '0') inodes.add(f[9]!);
    }
  }
  return inodes;
}

export function commandLine(pid: number, max = 120): string {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  } catch {
    return '';
  }
}

function holdsSocket(pid: string, wanted: ReadonlySet<string>): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if (wanted.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
    } catch {
      // Closed while we looked.
    }
  }
  return false;
}

/**
 * The process listening on a TCP port, found through /proc/net/tcp and
 * /proc/<pid>/fd (Linux); `likely` (this home's node) is looked at first.
 * Undefined when none is found: another OS, or a process of another user
 * whose descriptors cannot be read.
 */
export function portHolder(port: number, likely?: number): PortHolder | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  const wanted = new Set([...inodes].map((i) => `socket:[${i}]`));
  if (likely !== undefined && holdsSocket(String(likely), wanted)) return { pid: likely, command: commandLine(likely) };
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const pid = pids.find((p) => holdsSocket(p, wanted));
  return pid === undefined ? undefined : { pid: Number(pid), command: commandLine(Number(pid)) };
}
