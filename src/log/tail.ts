import { open } from 'node:fs/promises';
import { rotatedPath } from './file.js';

/**
 * The last `maxBytes` of a log as text, oldest line first. When the live file
 * is shorter (it was rotated a moment ago), the rest comes from the end of
 * `<file>.1`, `<file>.2`, …, so a reader sees the latest lines across a
 * rotation. Starts at a line boundary. Rejects when the live file cannot be read.
 */
export async function readLogText(file: string, maxBytes: number): Promise<string> {
  const parts: Buffer[] = [];
  let left = maxBytes;
  let cut = false;
  for (let n = 0; left > 0; n++) {
    let handle;
    try {
      handle = await open(rotatedPath(file, n), 'r');
    } catch (err) {
      if (n > 0 && (err as NodeJS.ErrnoException).code === 'ENOENT') break;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, left);
      const buf = Buffer.alloc(length);
      await handle.read(buf, 0, length, size - length);
      parts.unshift(buf);
      left -= length;
      cut = length < size;
    } finally {
      await handle.close();
    }
  }
  const text = Buffer.concat(parts).toString('utf8');
  // A read that starts mid-file starts mid-line: drop that partial line.
  return cut ? text.slice(text.indexOf('\n') + 1) : text;
}
