import { lstatSync, readdirSync, realpathSync, rmdirSync, unlinkSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** A deletion that would reach outside the paths a reset may touch; nothing was deleted. */
export class UnsafePathError extends Error {
  readonly code = 'UNSAFE_PATH';
}

/** `child` is `root` or lies under it (both absolute and canonical). */
export function isWithin(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

/**
 * Where a path really is: its parent's real path (every symlink on the way
 * resolved) joined with its own name, which is not followed. Deleting `path`
 * deletes exactly that entry.
 */
export function canonicalEntry(path: string): string {
  const abs = resolve(path);
  return resolve(realpathSync(dirname(abs)), basename(abs));
}

/** The real path of a directory, or undefined when it does not exist. */
export function realDir(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Throws UnsafePathError unless the entry `path` lies inside one of `roots` (canonical directories). */
export function assertInside(path: string, roots: readonly string[]): string {
  const where = canonicalEntry(path);
  if (!roots.some((root) => isWithin(root, where) && where !== root)) {
    const shown = where === resolve(path) ? where : `${resolve(path)} (really ${where})`;
    throw new UnsafePathError(`refusing to delete ${shown}: it is outside ${roots.join(' and ')}`);
  }
  return where;
}

/**
 * Deletes an entry and, for a directory, everything below it, without ever
 * following a symlink: a link is removed, never what it points to. The entry
 * itself must lie inside one of `roots`; returns how many entries were removed.
 */
export function removeEntry(path: string, roots: readonly string[]): number {
  const where = assertInside(path, roots);
  return removeTree(where);
}

function removeTree(path: string): number {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  if (!st.isDirectory()) {
    unlinkSync(path);
    return 1;
  }
  let count = 0;
  for (const name of readdirSync(path)) count += removeTree(resolve(path, name));
  rmdirSync(path);
  return count + 1;
}

/** Deletes everything inside a directory (kept itself), under the same rule. */
export function emptyDir(dir: string, roots: readonly string[]): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let count = 0;
  for (const name of names) count += removeEntry(resolve(dir, name), roots);
  return count;
}
