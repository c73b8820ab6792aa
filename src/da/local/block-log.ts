import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, unlinkSync, writeFileSync, writeSync, writevSync } from 'node:fs';
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log/index.js';

/** A blob as the built-in DA keeps it: the wire's base64 strings, so GetAll answers without re-encoding. */
export interface StoredBlob {
  namespace: string;
  data: string;
  commitment: string;
}

/**
 * `blobs` as they appear in a block's line: what JSON.stringify writes for each,
 * comma-separated, written straight into one buffer (a third of the time of
 * building the string first). Their strings must be strict base64, as the
 * server's decoding leaves them: one byte per character, none that JSON escapes.
 */
function blobsJson(blobs: StoredBlob[]): Buffer {
  let size = blobs.length - 1; // the commas
  for (const b of blobs) size += BLOB_JSON_FRAME + b.namespace.length + b.data.length + b.commitment.length;
  const json = Buffer.allocUnsafe(Math.max(size, 0));
  let at = 0;
  for (const b of blobs) {
    if (at > 0) at += json.write(',', at, 'latin1');
    at += json.write(`{"namespace":"${b.namespace}","data":"`, at, 'latin1');
    at += json.write(b.data, at, 'latin1');
    at += json.write(`","commitment":"${b.commitment}"}`, at, 'latin1');
  }
  return json;
}

/** One sealed DA block: a line of `blocks.log`. */
export interface SealedBlock {
  height: number;
  /** RFC 3339, as `Date.toISOString` writes it. */
  time: string;
  blobs: StoredBlob[];
}

/** Where a sealed block's line lies in `blocks.log` (without its newline). */
export interface LogSpan {
  start: number;
  length: number;
}

/**
 * What the server keeps in memory of a sealed block: a few numbers and its
 * namespaces, however much its blobs weigh. The blobs are read back from the
 * log (`BlockLog.read`) when asked for.
 */
export interface BlockSummary {
  height: number;
  /** Milliseconds since the epoch (`time` round-trips through `Date` exactly: checked on replay). */
  time: number;
  /** The distinct namespaces of its blobs (base64), empty for an empty block. */
  namespaces: string[];
  span: LogSpan;
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
const COMMA = Buffer.from(',');
const LINE_START = Buffer.from('{"blobs":[');
/** The bytes of a blob's JSON besides its three strings: `{"namespace":"","data":"","commitment":""}`. */
const BLOB_JSON_FRAME = '{"namespace":"","data":"","commitment":""}'.length;
/** The log is replayed in reads of this many bytes: start-up holds one line at a time, never the whole file. */
const REPLAY_CHUNK_BYTES = 1024 * 1024;
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
 * (`{"blobs":[{namespace,data,commitment}],"height","time"}`; servers before
 * 2026-11-26 wrote `height` and `time` first, which reads the same), empty
 * blocks included so heights survive restarts. A `LOCK` file holding the pid
 * keeps a second server off the same directory; a lock left by a dead process
 * is taken over.
 *
 * A block's line is written as it fills: each accepted submission's blobs when
 * it is accepted (`add`), its height and time when it is sealed (`seal`), so
 * that sealing writes a few bytes however much the block holds and its
 * submitters are answered at once. Until then the line is unfinished, which is
 * what a crash leaves: replay cuts it off, and none of its blobs was confirmed.
 */
export class BlockLog {
  private fd: number | undefined;
  /** Bytes in the file: past `sealedSize`, the part of the next block's line written so far. */
  private size: number;
  /** The distinct namespaces of the blobs added to the next block. */
  private readonly namespaces = new Set<string>();

  private constructor(
    readonly file: string,
    private readonly lockFile: string,
    fd: number,
    /** Reads blobs back for GetAll; closing it waits for reads under way. */
    private readonly reader: FileHandle,
    /** Bytes in the file up to the end of the last sealed block: where the next line starts. */
    private sealedSize: number,
  ) {
    this.fd = fd;
    this.size = sealedSize;
  }

  /**
   * Opens (creating) `dir/blocks.log` and replays it a chunk at a time: `onBlock`
   * sees every sealed block's summary in height order. A torn last line (a crash
   * mid-write) is cut off with a warning; damage anywhere else is an error that
   * says what to do.
   */
  static async open(dir: string, logger: Logger, onBlock: (block: BlockSummary) => void): Promise<BlockLog> {
    mkdirSync(dir, { recursive: true });
    const lockFile = join(dir, LOCK_FILE);
    acquireLock(lockFile, dir);
    const file = join(dir, BLOCK_LOG_FILE);
    let fd: number | undefined;
    let reader: FileHandle | undefined;
    try {
      fd = openSync(file, 'a+');
      const good = replay(fd, file, logger, onBlock);
      let size = good.size;
      if (good.truncateTo !== undefined) {
        ftruncateSync(fd, good.truncateTo);
        size = good.truncateTo;
      }
      if (good.appendNewline) size += writeSync(fd, '\n');
      reader = await openFile(file, 'r');
      return new BlockLog(file, lockFile, fd, reader, size);
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      await reader?.close();
      releaseLock(lockFile);
      throw err;
    }
  }

  /**
   * Writes `blobs` (of one accepted submission; strict base64, as the server
   * decodes them) into the line of the block being filled. The write reaches
   * the OS before this returns; one that fails is cut off again, and the
   * submission must be refused.
   */
  add(blobs: StoredBlob[]): void {
    this.write([this.size === this.sealedSize ? LINE_START : COMMA, blobsJson(blobs)], this.size);
    for (const b of blobs) this.namespaces.add(b.namespace);
  }

  /**
   * Finishes the line of the block being filled with its `height` and `time`
   * (RFC 3339) and says where it lies. The write reaches the OS before this
   * returns (it survives the process, not a power cut: no fsync). When it fails
   * the whole line is cut off: the block was not sealed and none of the
   * submissions added to it may be confirmed.
   */
  seal(height: number, time: string): BlockSummary {
    const end = Buffer.from(`],"height":${height},"time":${JSON.stringify(time)}}\n`);
    this.write(this.size === this.sealedSize ? [LINE_START, end] : [end], this.sealedSize);
    const span = { start: this.sealedSize, length: this.size - this.sealedSize - 1 };
    this.sealedSize = this.size;
    const summary = summarize(height, time, [...this.namespaces], span);
    this.namespaces.clear();
    return summary;
  }

  /** Appends `parts`; when that fails, cuts the file back to `cutTo` (forgetting the blobs added since, when that is the sealed end) and throws. */
  private write(parts: Buffer[], cutTo: number): void {
    if (this.fd === undefined) throw new Error('the local DA block log is closed');
    const length = parts.reduce((n, p) => n + p.length, 0);
    try {
      const written = writevSync(this.fd, parts);
      if (written !== length) throw new Error(`wrote ${written} of ${length} bytes`);
    } catch (err) {
      ftruncateSync(this.fd, cutTo);
      this.size = cutTo;
      if (cutTo === this.sealedSize) this.namespaces.clear();
      throw err;
    }
    this.size += length;
  }

  /** The sealed block whose line lies at `span`, read back from the file; `height` is what the index says it holds. */
  async read(span: LogSpan, height: number): Promise<SealedBlock> {
    const buf = Buffer.allocUnsafe(span.length);
    const { bytesRead } = await this.reader.read(buf, 0, span.length, span.start);
    const block = bytesRead === span.length ? parseBlock(buf) : undefined;
    if (block?.height !== height) {
      throw new LocalDaError(
        `${this.file} no longer holds height ${height} at byte ${span.start}: the log was changed while the server ran`,
        'LOCAL_DA_LOG_DAMAGED',
      );
    }
    return block;
  }

  /** Closes the log, cutting off the line of a block that was never sealed (its submitters were refused). */
  async close(): Promise<void> {
    if (this.fd === undefined) return;
    if (this.size > this.sealedSize) ftruncateSync(this.fd, this.sealedSize);
    closeSync(this.fd);
    this.fd = undefined;
    await this.reader.close();
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

/** A line as a sealed block, or undefined when it is not one. */
function parseBlock(line: Buffer): SealedBlock | undefined {
  try {
    const parsed = JSON.parse(line.toString('utf8')) as SealedBlock;
    if (
      Number.isSafeInteger(parsed.height) &&
      parsed.height >= 1 &&
      typeof parsed.time === 'string' &&
      isIsoTime(parsed.time) &&
      Array.isArray(parsed.blobs) &&
      parsed.blobs.every(isStoredBlob)
    ) {
      return parsed;
    }
  } catch {
    // Not JSON.
  }
  return undefined;
}

/** Whether `time` is what `Date.toISOString` writes, so the index can keep it as a number and give back the same text. */
function isIsoTime(time: string): boolean {
  const ms = Date.parse(time);
  return Number.isFinite(ms) && new Date(ms).toISOString() === time;
}

function summarize(height: number, time: string, namespaces: string[], span: LogSpan): BlockSummary {
  return { height, time: Date.parse(time), namespaces: [...new Set(namespaces)], span };
}

interface ReplayEnd {
  /** Bytes in the file as read. */
  size: number;
  truncateTo?: number;
  appendNewline?: boolean;
}

/** Reads the log from `fd` a chunk at a time, one line in memory at a time. */
function replay(fd: number, file: string, logger: Logger, onBlock: (block: BlockSummary) => void): ReplayEnd {
  const chunk = Buffer.allocUnsafe(REPLAY_CHUNK_BYTES);
  /** The current line's bytes from earlier chunks (copied: the chunk is reused). */
  let partial: Buffer[] = [];
  let lineStart = 0;
  let lineNo = 0;
  let expected: number | undefined;
  const take = (line: Buffer, last: boolean): ReplayEnd | undefined => {
    lineNo++;
    const block = parseBlock(line);
    if (!block) {
      if (last) {
        logger.warn(
          { file, line: lineNo, bytes: line.length },
          'local DA: ignoring a torn last line of the block log (the server stopped while writing it); the blobs of that block were never confirmed to their submitter',
        );
        return { size: lineStart + line.length, truncateTo: lineStart };
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
    onBlock(
      summarize(
        block.height,
        block.time,
        block.blobs.map((b) => b.namespace),
        { start: lineStart, length: line.length },
      ),
    );
    return last ? { size: lineStart + line.length, appendNewline: true } : undefined;
  };
  let pos = 0;
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, pos);
    if (n === 0) break;
    const read = chunk.subarray(0, n);
    let from = 0;
    for (let nl = read.indexOf(NEWLINE); nl !== -1; nl = read.indexOf(NEWLINE, from)) {
      const tail = read.subarray(from, nl);
      take(partial.length > 0 ? Buffer.concat([...partial, tail]) : tail, false);
      lineStart = pos + nl + 1;
      partial = [];
      from = nl + 1;
    }
    if (from < n) partial.push(Buffer.from(read.subarray(from)));
    pos += n;
  }
  return (partial.length > 0 ? take(Buffer.concat(partial), true) : undefined) ?? { size: pos };
}
