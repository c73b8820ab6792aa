/**
 * The supervised child `init --execution evm` writes: runs the EthereumJS
 * client's command line with this process's arguments (its yargs reads
 * process.argv past the script), or says how to install the client when the
 * optional dependency is absent.
 */
import { pathToFileURL } from 'node:url';
import { ExecutionClientMissingError, ethereumJsCli } from './client-module.js';

try {
  await import(pathToFileURL(ethereumJsCli()).href);
} catch (err) {
  if (!(err instanceof ExecutionClientMissingError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exitCode = 1;
}
