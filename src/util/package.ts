import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This package's directory (the one holding noded's package.json), from src/ or dist/src/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

/**
 * The built JavaScript file `relative` to the module at `moduleUrl`, for a
 * worker thread or a child process to run. Plain node cannot load the .ts
 * sources tests import, so from a source module this is its twin under dist/
 * (vitest's globalSetup builds it).
 */
export function builtFile(moduleUrl: string, file: string): string {
  const path = fileURLToPath(new URL(file, moduleUrl));
  if (!moduleUrl.endsWith('.ts')) return path;
  const root = packageRoot();
  return join(root, 'dist', relative(root, path));
}
