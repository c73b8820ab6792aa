/** A log file and its size-based rotation (log.file, log.max_size, log.max_files). */
export interface LogFile {
  path: string;
  /** Once the file reaches this size (after the line that takes it there) it is rotated and a fresh file begins. */
  maxBytes: number;
  /** Rotated files kept: `<path>.1` (newest) … `<path>.<maxFiles>` (oldest). */
  maxFiles: number;
}

/** `<path>.<n>`: the n-th newest rotated file; 0 is the live file. */
export const rotatedPath = (path: string, n: number): string => (n === 0 ? path : `${path}.${n}`);
