import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../util/index.js';

/**
 * The EthereumJS execution client is an optional dependency (131 of the
 * production packages): a kv or abci node installs without it
 * (`npm install --omit=optional`). Only `init --execution evm` and the child it
 * supervises load it, through here.
 */
export const ETHEREUMJS_CLIENT = '@ethereumjs/client';

/** The optional execution client is not installed; the message says how to install it. */
export class ExecutionClientMissingError extends Error {
  readonly code = 'EL_CLIENT_NOT_INSTALLED';
}

/**
 * Path of the EthereumJS client's command line (`dist/esm/bin/cli.js` of the
 * package), or ExecutionClientMissingError naming the install command when the
 * package cannot be resolved. `moduleName` is for tests.
 */
export function ethereumJsCli(moduleName = ETHEREUMJS_CLIENT): string {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${moduleName}/package.json`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    const root = packageRoot();
    const { optionalDependencies = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };
    const version = optionalDependencies[moduleName];
    throw new ExecutionClientMissingError(
      `the EVM execution layer runs the EthereumJS client (${moduleName}${version ? ` ${version}` : ''}), an optional dependency that is not installed ` +
        `(an install with --omit=optional leaves it out); install it with: cd ${JSON.stringify(root)} && npm install --include=optional`,
    );
  }
  return join(dirname(manifest), 'dist', 'esm', 'bin', 'cli.js');
}
