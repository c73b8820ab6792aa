import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** A log file and its size-based rotation (log.file, log.max_size, log.max_files). */
export interface LogFile {
  path: string;
  /** A line that would take the file past this size goes to a fresh file. */
  maxBytes: number;
  /** Rotated files kept: `<path>.1` (newest) … `<path>.<maxFiles>` (oldest). */
  maxFiles: number;
}

/** `<path>.<n>`: the n-th newest rotated file; 0 is the live file. */
export const rotatedPath = (path: string, n: number): string => (n === 0 ? path : `${path}.${n}`);

/**
 * Appends log lines to a file, rotating it by size. Writes are synchronous, so
 * a line logged just before `process.exit` is on disk, and rotation cannot
 * interleave with a write.
 */
export class RotatingFile {
  private fd: number;
  private size: number;
  private failing = false;

  constructor(private readonly file: LogFile) {
    mkdirSync(dirname(file.path), { recursive: true });
    this.fd = openSync(file.path, 'a');
    this.size = fstatSync(this.fd).size;
  }

  write(line: string): void {
    const bytes = Buffer.from(line);
    try {
      if (this.size > 0 && this.size + bytes.length > this.file.maxBytes) this.rotate();
      writeSync(this.fd, bytes);
      this.size += bytes.length;
      this.failing = false;
    } catch (err) {
      // A full disk must not stop the node: say so once on stderr, and keep trying with later lines.
      if (!this.failing) process.stderr.write(`cannot write the log file ${this.file.path}: ${(err as Error).message}\n`);
      this.failing = true;
    }
  }

  /** node.log.<n-1> → node.log.<n> down to node.log → node.log.1; what falls past max_files is deleted. */
  private rotate(): void {
    closeSync(this.fd);
    const { path, maxFiles } = this.file;
    // The oldest kept file is overwritten by a rename below; any older (an earlier run kept more) goes now.
    for (let n = maxFiles + 1; existsSync(rotatedPath(path, n)); n++) rmSync(rotatedPath(path, n));
    for (let n = maxFiles; n >= 1; n--) {
      const from = rotatedPath(path, n - 1);
      if (existsSync(from)) renameSync(from, rotatedPath(path, n));
    }
    this.fd = openSync(path, maxFiles === 0 ? 'w' : 'a');
    this.size = 0;
  }
}
