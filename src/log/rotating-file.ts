import { existsSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Writable } from 'node:stream';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import { rotatedPath, type LogFile } from './file.js';

/**
 * Hands rotating-file-stream one line per write: it checks the size after each
 * write, and pino's worker thread passes many lines at once, so a file is
 * rotated at the line that reaches the cap, not a whole batch later.
 */
class LineWriter extends Writable {
  constructor(private readonly file: RotatingFileStream) {
    super({ decodeStrings: false });
    file.on('error', (err) => this.destroy(err));
  }

  override _write(chunk: string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const lines = chunk.split(/(?<=\n)/);
    for (const line of lines.slice(0, -1)) this.file.write(line);
    this.file.write(lines.at(-1)!, done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.file.end(done);
  }

  /** pino's logger.flush reaches here (thread-stream calls a destination's flush): done once every line before it is written. */
  flush(done: (err?: Error | null) => void): void {
    this.write('', done);
  }
}

/**
 * The pino transport (run in a worker thread by pino.transport, see index.ts;
 * only the worker loads this module)
 * that appends log lines to `file`, rotated as logrotate does: rotating-file-stream's
 * classical rotation renames node.log.<n-1> → node.log.<n> … node.log → node.log.1.
 * What falls past max_files (max_files 0, or files an earlier run with a larger
 * max_files kept) is deleted after each rotation.
 */
export default function logFileTransport(file: LogFile): Writable {
  const stream = createStream(basename(file.path), {
    path: dirname(file.path),
    size: `${file.maxBytes}B`,
    // Classical rotation needs at least one rotated file; with max_files 0 it is deleted at once below.
    rotate: Math.max(1, file.maxFiles),
  });
  stream.on('rotated', () => {
    for (let n = file.maxFiles + 1; existsSync(rotatedPath(file.path, n)); n++) rmSync(rotatedPath(file.path, n));
  });
  return new LineWriter(stream);
}
