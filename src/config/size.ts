/**
 * Byte sizes as operators write them (`512KB`, `10MB`, `1GB`), held in memory
 * as bytes. Units are binary (1KB = 1024 bytes), as `ls -h` and `du -h` count.
 */

/** What a bad size is told it should look like. */
export const SIZE_FORM = 'a size like 512KB, 10MB or 1GB (B, KB, MB, GB; 1KB = 1024 bytes)';

const UNIT_BYTES = { b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 } as const;

// A unit is required: a bare `10` could mean bytes or megabytes, and is refused rather than guessed at.
const SIZE = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i;

/** Bytes of `text`, or undefined when it is not a size. */
export function tryParseSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  const unit = match && UNIT_BYTES[match[2]!.toLowerCase() as keyof typeof UNIT_BYTES];
  return unit ? Math.round(Number(match[1]) * unit) : undefined;
}
