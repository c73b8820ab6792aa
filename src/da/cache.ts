import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log/index.js';

/**
 * The last submission sent to DA: a restart searches DA for it unless the
 * store records all its blocks as included (one that was included stays named
 * until the next is sent, which saves a write per submission).
 */
export interface PendingSubmission {
  fromHeight: string;
  toHeight: string;
  /** DA head when it was sent: after a crash, DA is searched from here for it. */
  daHeadBefore: string;
}

export interface DaCacheState {
  /** The last submission sent; null after one the DA node refused, or once a search settled it. */
  pending?: PendingSubmission | null;
  /** A full node's DA scan position: every DA height below it was read. */
  scannedDaHeight?: string;
}

/**
 * What the DA components keep in `data/cache/da.json`: hints that save work
 * (where a DA scan stopped, which submission was in flight). Everything in it
 * can be rebuilt from the store and DA, so it may be deleted while the node is
 * stopped. Writes are atomic (temp file, fsync, rename).
 */
export class DaCache {
  private state: DaCacheState;
  readonly path: string;
  /** True when the file existed and parsed: without it, callers rebuild from store and DA. */
  readonly loaded: boolean;

  constructor(dir: string, logger: Logger) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, 'da.json');
    const read = readCacheFile(this.path, logger);
    this.state = read ?? {};
    this.loaded = read !== null;
  }

  get(): Readonly<DaCacheState> {
    return this.state;
  }

  update(patch: Partial<DaCacheState>): void {
    this.state = { ...this.state, ...patch };
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state));
    const fd = openSync(tmp, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.path);
  }
}

/** Deletes the cache directory's contents (`start --node.clear_cache`). */
export function clearCache(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

function readCacheFile(path: string, logger: Logger): DaCacheState | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    return JSON.parse(text) as DaCacheState;
  } catch {
    logger.warn({ path }, 'DA cache file is unreadable; rebuilding it from the store and DA');
    return null;
  }
}
