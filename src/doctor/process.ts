import { closeSync, openSync, readFileSync, readSync, readdirSync, readlinkSync } from 'node:fs';
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

/** One /proc/net/tcp* entry in LISTEN state (st 0A): its local port (hex) and socket inode (after 5 more columns). */
const LISTEN_ENTRY = /^\s*\d+: [0-9A-F]+:([0-9A-F]{4}) [0-9A-F]+:[0-9A-F]{4} 0A (?:\S+ +){5}(\d+)/gm;
const TABLE_CHUNK_BYTES = 64 * 1024;

/**
 * The listening part of a /proc/net/tcp* table. The kernel writes the
 * listening sockets first, then the established ones and those in TIME_WAIT
 * (net/ipv4/tcp_ipv4.c, tcp_get_idx: listening_get_idx before
 * established_get_idx), and it makes the text as it is read; on a busy host
 * the table ran to ~5,000 lines, ~30 ms to read whole and as long again to
 * split, for each port. So it is read in chunks until an entry that is not
 * listening appears.
 */
function listeningPart(table: string): string {
  let fd: number;
  try {
    fd = openSync(table, 'r');
  } catch {
    return '';
  }
  try {
    const chunk = Buffer.allocUnsafe(TABLE_CHUNK_BYTES);
    let text = '';
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return text;
      text += chunk.toString('latin1', 0, n);
      // Any complete entry past the header that is not in LISTEN state ends the listening part.
      const entries = text.slice(text.indexOf('\n') + 1, text.lastIndexOf('\n') + 1);
      if (/^\s*\d+: \S+ \S+ (?!0A )/m.test(entries)) return text;
    }
  } finally {
    closeSync(fd);
  }
}

/** Inodes of the listening TCP sockets (v4 and v6) by local port, from /proc/net/tcp*. Linux only; empty elsewhere. */
export function listeningSockets(): Map<number, Set<string>> {
  const byPort = new Map<number, Set<string>>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const m of listeningPart(table).matchAll(LISTEN_ENTRY)) {
      const port = parseInt(m[1]!, 16);
      if (m[2] === '0') continue;
      let inodes = byPort.get(port);
      if (!inodes) byPort.set(port, (inodes = new Set()));
      inodes.add(m[2]!);
    }
  }
  return byPort;
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
 * /proc/<pid>/fd (Linux); `likely` (this home's node) is looked at first;
 * `listening` (listeningSockets()) may be read once for several ports.
 * Undefined when none is found: another OS, or a process of another user
 * whose descriptors cannot be read.
 */
export function portHolder(port: number, likely?: number, listening: ReadonlyMap<number, ReadonlySet<string>> = listeningSockets()): PortHolder | undefined {
  const inodes = listening.get(port);
  if (!inodes) return undefined;
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
