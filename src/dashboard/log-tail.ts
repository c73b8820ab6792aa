import { readLogText } from '../log/index.js';
import { clockTime } from './view-model.js';

/** Bytes read from the end of the log: far more than the lines any screen shows. */
const TAIL_BYTES = 32 * 1024;

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** The text format's `[HH:MM:SS.mmm] LEVEL: `, shortened to `HH:MM:SS LEVEL `. */
const TEXT_PREFIX = /^\[(\d\d:\d\d:\d\d)\.\d+\] ([A-Z]+): /;

/** A log line in few columns: the text format's time to the second, a JSON line (log.format json) as text. */
export function formatLogLine(line: string): string {
  if (!line.startsWith('{')) return line.replace(TEXT_PREFIX, '$1 $2 ');
  try {
    const rec = JSON.parse(line) as { time?: string | number; level?: number; module?: string; msg?: string; error?: string };
    const time = rec.time === undefined ? '' : clockTime(new Date(rec.time).getTime());
    const level = LEVEL_NAMES[rec.level ?? 30] ?? String(rec.level);
    const module = rec.module ? `[${rec.module}] ` : '';
    return `${time} ${level} ${module}${rec.msg ?? ''}${rec.error ? ` error=${rec.error}` : ''}`;
  } catch {
    return line;
  }
}

/** The last `lines` lines of a log file (across a rotation), formatted for the log panel; [] when the file does not exist yet. */
export async function readLogTail(file: string, lines: number): Promise<string[]> {
  let text: string;
  try {
    text = await readLogText(file, TAIL_BYTES);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(-lines)
    .map(formatLogLine);
}
