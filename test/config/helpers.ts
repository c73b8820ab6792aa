import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { ConfigError } from '../../src/config/index.js';

/** A fresh home per test, removed after it. */
export function useTempHome(): () => string {
  const homes: string[] = [];
  afterEach(() => {
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });
  return () => {
    const home = mkdtempSync(join(tmpdir(), 'noded-config-'));
    homes.push(home);
    return home;
  };
}

/** Writes <home>/config/node.yml and returns its path. */
export function writeNodeYml(home: string, text: string): string {
  mkdirSync(join(home, 'config'), { recursive: true });
  const file = join(home, 'config', 'node.yml');
  writeFileSync(file, text);
  return file;
}

/** The ConfigError `run` throws; fails the test when it throws nothing or something else. */
export function configErrorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError, got none');
}
