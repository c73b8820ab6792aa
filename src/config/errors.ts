export type ConfigErrorCode = 'CONFIG_SYNTAX' | 'CONFIG_UNKNOWN_KEY' | 'CONFIG_INVALID' | 'CONFIG_UNREADABLE';

/**
 * A config that cannot be used. The message is for the operator: one problem
 * per line, each naming where the value came from and what it should be.
 */
export class ConfigError extends Error {
  constructor(
    readonly code: ConfigErrorCode,
    readonly problems: readonly string[],
    /** Every bad value came from a command-line flag: bad usage (exit 2), not a bad home (exit 1). */
    readonly fromFlags = false,
  ) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The candidate nearest to `name`, if it is close enough to be the intended one (a typo, not a different word). */
export function nearest(name: string, candidates: readonly string[]): string | undefined {
  const tolerance = Math.max(2, Math.floor(name.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate);
    if (distance <= tolerance && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
