import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { HomePaths } from '../config/index.js';
import { commandLine, nodeProcess } from '../doctor/index.js';

/** This home's node is running (`pid`: the process, when known). */
export interface RunningNode {
  pid?: number;
  /** How it was found, in the operator's words. */
  evidence: string;
}

/**
 * True when another process holds the store's LevelDB lock. The store is
 * opened and closed at once; a directory without a LOCK file has never been
 * opened as a LevelDB, so nothing can hold it, and it is not touched.
 * Any other error (a store that does not open) is not a lock: not running.
 */
async function storeLocked(storeDir: string): Promise<boolean> {
  if (!existsSync(join(storeDir, 'LOCK'))) return false;
  const db = new ClassicLevel(storeDir, { createIfMissing: false });
  try {
    await db.open();
    await db.close();
    return false;
  } catch (err) {
    return (err as { cause?: { code?: string } }).cause?.code === 'LEVEL_LOCKED';
  }
}

/**
 * The process holding a POSIX lock on `file`, from /proc/locks (Linux; LevelDB
 * locks its LOCK file with fcntl). Undefined elsewhere, or when none is listed.
 * A line reads `1: POSIX  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF`.
 */
function lockHolder(file: string): number | undefined {
  let text: string;
  let inode: number;
  try {
    inode = statSync(file).ino;
    text = readFileSync('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    // "->" marks a process waiting for the lock, not holding it.
    if (f[1] !== 'POSIX' || f.includes('->')) continue;
    const pid = Number(f[4]);
    if (Number(f[5]?.split(':')[2]) === inode && Number.isSafeInteger(pid) && pid > 0) return pid;
  }
  return undefined;
}

/**
 * Whether this home's node runs: its pid file names a live process, or — the
 * pid file gone, stale or garbled — something holds the store's LevelDB lock
 * (a node whose pid file was deleted still has its store open). `notes`: a
 * stale or garbled pid file, reported and ignored.
 */
export async function runningNode(paths: HomePaths): Promise<{ running?: RunningNode; notes: string[] }> {
  const node = nodeProcess(paths);
  if (node.state === 'running') return { running: { pid: node.pid, evidence: `${paths.pidFile} names process ${node.pid}, which is alive` }, notes: [] };
  const notes =
    node.state === 'stale'
      ? [`${node.pidFile} names process ${node.pid}, which is gone (a killed or crashed node): ignored`]
      : node.state === 'invalid'
        ? [`${node.pidFile} holds no pid: ignored`]
        : [];
  if (await storeLocked(paths.storeDir)) {
    const pid = lockHolder(join(paths.storeDir, 'LOCK'));
    const command = pid === undefined ? '' : commandLine(pid);
    const who = pid === undefined ? 'another process' : `process ${pid}${command ? ` (${command})` : ''}`;
    const pidFile = node.state === 'none' ? `${paths.pidFile} is missing` : `${paths.pidFile} does not name it`;
    return { running: { pid, evidence: `the store ${paths.storeDir} is locked by ${who}, so a node has it open although ${pidFile}` }, notes };
  }
  return { notes };
}
