import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/index.js';

/** A blob as the built-in DA keeps it: the wire's base64 strings, so GetAll answers without re-encoding. */
export interface StoredBlob {
  namespace: string;
  data: string;
  commitment: string;
}

/** One sealed DA block: a line of `blocks.log`. */
export interface SealedBlock {
  height: number;
  /** RFC 3339. */
  time: string;
  blobs: StoredBlob[];
}

/** The built-in DA's data directory cannot be used; `code` says why. */
export class LocalDaError extends Error {
  constructor(
    message: string,
    readonly code: 'LOCAL_DA_LOCKED' | 'LOCAL_DA_LOG_DAMAGED' | 'LOCAL_DA_ADMIN_EXPOSED',
  ) {
    super(message);
    this.name = 'LocalDaError';
  }
}

export const BLOCK_LOG_FILE = 'blocks.log';
const LOCK_FILE = 'LOCK';
const NEWLINE = 0x0a;
/** Lock files this process holds: a lock naming our own pid but not listed here was left by an earlier process that had the same pid (a container restarted after a crash). */
const heldLocks = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The append-only file log of the built-in DA: one JSON line per sealed block
 * (`{"height","time","blobs":[{namespace,data,commitment}]}`), empty blocks
 * included so heights survive restarts. A `LOCK` file holding the pid keeps a
 * second server off the same directory; a lock left by a dead process is taken over.
 */
export class BlockLog {
  private fd: number | undefined;

  private constructor(
    readonly file: string,
    private readonly lockFile: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /**
   * Opens (creating) `dir/blocks.log` and replays it: `onBlock` sees every sealed
   * block in height order. A torn last line (a crash mid-write) is cut off with a
   * warning; damage anywhere else is an error that says what to do.
   */
  static open(dir: string, logger: Logger, onBlock: (block: SealedBlock) => void): BlockLog {
    mkdirSync(dir, { recursive: true });
    const lockFile = join(dir, LOCK_FILE);
    acquireLock(lockFile, dir);
    const file = join(dir, BLOCK_LOG_FILE);
    let fd: number | undefined;
    try {
      fd = openSync(file, 'a+');
      const good = replay(readFileSync(file), file, logger, onBlock);
      if (good.truncateTo !== undefined) ftruncateSync(fd, good.truncateTo);
      if (good.appendNewline) writeSync(fd, '\n');
      return new BlockLog(file, lockFile, fd);
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      releaseLock(lockFile);
      throw err;
    }
  }

  /** Appends a sealed block. The write reaches the OS before this returns (it survives the process, not a power cut: no fsync). */
  append(block: SealedBlock): void {
    if (this.fd === undefined) throw new Error('the local DA block log is closed');
    writeSync(this.fd, JSON.stringify(block) + '\n');
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    releaseLock(this.lockFile);
  }
}

function acquireLock(lockFile: string, dir: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      heldLocks.add(lockFile);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let pid = NaN;
    try {
      pid = Number(readFileSync(lockFile, 'utf8').trim());
    } catch {
      // Removed meanwhile: try again.
    }
    const ours = pid === process.pid;
    if (Number.isSafeInteger(pid) && pid > 0 && (ours ? heldLocks.has(lockFile) : isAlive(pid))) {
      const who = ours ? 'another local DA server in this process' : `process ${pid}`;
      throw new LocalDaError(
        `the local DA data directory ${dir} is in use by ${who}; stop it first, or give this one another home (--home). If no such server runs, delete ${lockFile}`,
        'LOCAL_DA_LOCKED',
      );
    }
    try {
      unlinkSync(lockFile); // stale: its process is gone
    } catch {
      // Someone else took it over first; the next attempt tells.
    }
  }
  throw new LocalDaError(`could not take the lock ${lockFile} of the local DA data directory`, 'LOCAL_DA_LOCKED');
}

function releaseLock(lockFile: string): void {
  heldLocks.delete(lockFile);
  try {
    if (readFileSync(lockFile, 'utf8').trim() === String(process.pid)) unlinkSync(lockFile);
  } catch {
    // Already gone.
  }
}

function isStoredBlob(b: unknown): b is StoredBlob {
  const o = b as StoredBlob;
  return typeof o === 'object' && o !== null && typeof o.namespace === 'string' && typeof o.data === 'string' && typeof o.commitment === 'string';
}

function replay(buf: Buffer, file: string, logger: Logger, onBlock: (block: SealedBlock) => void): { truncateTo?: number; appendNewline?: boolean } {
  let start = 0;
  let lineNo = 0;
  let expected: number | undefined;
  while (start < buf.length) {
    lineNo++;
    const nl = buf.indexOf(NEWLINE, start);
    const last = nl === -1;
    const end = last ? buf.length : nl;
    let block: SealedBlock | undefined;
    try {
      const parsed = JSON.parse(buf.toString('utf8', start, end)) as SealedBlock;
      if (
        Number.isSafeInteger(parsed.height) &&
        parsed.height >= 1 &&
        typeof parsed.time === 'string' &&
        Array.isArray(parsed.blobs) &&
        parsed.blobs.every(isStoredBlob)
      ) {
        block = parsed;
      }
    } catch {
      // Reported below.
    }
    if (!block) {
      if (last) {
        logger.warn(
          { file, line: lineNo, bytes: end - start },
          'local DA: ignoring a torn last line of the block log (the server stopped while writing it); the blobs of that block were never confirmed to their submitter',
        );
        return { truncateTo: start };
      }
      throw new LocalDaError(
        `${file} line ${lineNo} is not a sealed block; the log is damaged. Move data/local-da aside to start a fresh local DA (nodes using it must then be reset)`,
        'LOCAL_DA_LOG_DAMAGED',
      );
    }
    if (expected !== undefined && block.height !== expected) {
      throw new LocalDaError(
        `${file} line ${lineNo} holds height ${block.height} where ${expected} was expected; the log is damaged. Move data/local-da aside to start a fresh local DA`,
        'LOCAL_DA_LOG_DAMAGED',
      );
    }
    expected = block.height + 1;
    onBlock(block);
    if (last) return { appendNewline: true };
    start = nl + 1;
  }
  return {};
}
