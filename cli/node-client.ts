import { Flags } from '@oclif/core';
import { ConfigError, loadConfig, resolveHome } from '../src/config/index.js';
import { NodeClient } from '../src/client/index.js';
import { CommandFailure } from './base.js';

export const nodeFlag = Flags.string({
  description: 'RPC address of the node (host:port or URL); default: rpc.address from the home\'s config',
});

/**
 * A client for the node of this home: addresses from its config (defaults when
 * the home has none), or the --node URL.
 */
export function clientFor(flags: { home?: string; node?: string }): NodeClient {
  let config;
  try {
    config = loadConfig({ home: resolveHome(flags.home) });
  } catch (err) {
    if (err instanceof ConfigError) throw new CommandFailure(err.message, err.code);
    throw err;
  }
  return new NodeClient(flags.node ?? config.rpc.address, config.rpc.status_address);
}
