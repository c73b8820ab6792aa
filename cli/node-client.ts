import { Flags } from '@oclif/core';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { ConfigError, homePaths, loadConfig, resolveHome } from '../src/config/index.js';
import { connectNode, NodeUnreachableError, uncheckedClient, WrongNodeError, type NodeClient, type NodeTarget } from '../src/client/index.js';
// process.js alone: the doctor's index loads every check and what each check reads (DA, EVM, listr2).
import { nodeProcess } from '../src/doctor/process.js';
import { HomeError, readHome } from '../src/home/index.js';
import { CommandFailure } from './base.js';

export const nodeFlag = Flags.string({
  description:
    "Read the node at this address instead of this home's node: its RPC listener (rpc.address, 7331) or its status listener (rpc.status_address, 26657), host:port or URL; everything is then read from that node",
});

/** The node a command reads: --node as given, else this home's node at its config's rpc.address, checked to be that home's. */
function targetFor(flags: { home?: string; node?: string }): NodeTarget {
  if (flags.node !== undefined) return { address: flags.node };
  const home = resolveHome(flags.home);
  if (!existsSync(homePaths(home).configFile)) {
    throw new CommandFailure(
      `no node home at ${home} (config/node.yml is missing): give the node's home with --home (or NODED_HOME), or its address with --node URL`,
      'HOME_MISSING',
    );
  }
  try {
    const config = loadConfig({ home });
    const { genesis, nodeKey, paths } = readHome(home);
    const node = nodeProcess(paths);
    return {
      home,
      rpcAddress: config.rpc.address,
      chainId: genesis.chainId,
      peerId: nodeKey.peerId,
      nodeKeyFile: relative(home, paths.nodeKeyFile),
      ...(node.state === 'running' ? { runningPid: node.pid } : {}),
    };
  } catch (err) {
    if (err instanceof ConfigError) throw new CommandFailure(err.message, err.code);
    if (err instanceof HomeError) throw new CommandFailure(`${err.message}; or give --node URL to read a node by its address`, err.code);
    throw err;
  }
}

/**
 * A client for exactly one node, the one `--node` names or this home's: both
 * of its listeners as that node reports them. Fails (exit 1) when nothing
 * answers, when what answers is not a node, or when the node at the home's
 * address is not the home's.
 */
export async function clientFor(flags: { home?: string; node?: string }): Promise<NodeClient> {
  try {
    return await connectNode(targetFor(flags));
  } catch (err) {
    if (err instanceof NodeUnreachableError || err instanceof WrongNodeError) throw new CommandFailure(err.message, err.code);
    throw err;
  }
}

/**
 * As clientFor, but when nothing answers yet, a client that waits for the
 * node at the RPC address (`status --watch` shows "no node … retrying" until
 * it starts); a node that answers but is not the one asked for still fails.
 */
export async function watchClientFor(flags: { home?: string; node?: string }): Promise<NodeClient> {
  const target = targetFor(flags);
  try {
    return await connectNode(target);
  } catch (err) {
    if (err instanceof NodeUnreachableError) return uncheckedClient(target);
    if (err instanceof WrongNodeError) throw new CommandFailure(err.message, err.code);
    throw err;
  }
}
