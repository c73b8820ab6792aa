/**
 * Durations as operators write them (`500ms`, `1s`, `2m`, `1h`, `1m30s`), held
 * in memory as whole milliseconds.
 */

/** What a bad duration is told it should look like. */
export const DURATION_FORM = 'a duration like 500ms, 1s or 2m';

// Largest unit first: formatDuration walks this order.
const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;

// `ms` must precede `m` in the alternation, or `500ms` would read as 500m + "s".
const WHOLE_DURATION = /^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

/** Milliseconds of `text`, or undefined when it is not a duration (a unit is required). */
export function tryParseDuration(text: string): number | undefined {
  if (!WHOLE_DURATION.test(text)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) ms += Number(amount) * UNIT_MS[unit as Unit];
  // `1.0005s` is allowed; nothing here times finer than a millisecond.
  return Math.round(ms);
}

/** Milliseconds of `text`; throws when it is not a duration. */
export function parseDuration(text: string): number {
  const ms = tryParseDuration(text);
  if (ms === undefined) throw new RangeError(`got ${JSON.stringify(text)}, expected ${DURATION_FORM}`);
  return ms;
}

/** The shortest form parseDuration reads back as `ms`: 1000 → `1s`, 90000 → `1m30s`, 0 → `0s`. */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`formatDuration: expected whole milliseconds >= 0, got ${ms}`);
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const [unit, size] of Object.entries(UNIT_MS)) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      text += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return text;
}
