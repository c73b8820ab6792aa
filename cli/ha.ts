import { existsSync } from 'node:fs';
import type { Etcd3 } from 'etcd3';
import { ConfigError, homePaths, loadConfig, resolveHome } from '../src/config/index.js';
import { createEtcdClient, etcdSettingsOf, haKeyPrefix, type EtcdSettings } from '../src/ha/index.js';
import { HomeError, readHome } from '../src/home/index.js';
import { CommandFailure } from './base.js';
import { configFlags, givenConfigFlags } from './config-flags.js';

/** The `--node.ha.*` flags, for an HA node started with them rather than with node.yml's ha section. */
export const haConfigFlags = () => configFlags('ha');

/** The etcd of the home's HA cluster, reached as the node reaches it (its ha section: endpoints, TLS, user). */
export function haEtcdFor(flags: { home?: string } & Record<string, unknown>): { etcd: Etcd3; settings: EtcdSettings; prefix: string } {
  const home = resolveHome(flags.home);
  if (!existsSync(homePaths(home).configFile)) {
    throw new CommandFailure(`no node home at ${home} (config/node.yml is missing): give the HA node's home with --home (or NODED_HOME)`, 'HOME_MISSING');
  }
  try {
    const config = loadConfig({ home, flags: givenConfigFlags(flags) });
    if (!config.ha.etcd_endpoints) {
      throw new CommandFailure(
        `the home at ${home} sets no ha.etcd_endpoints: give the node's ha section, or --node.ha.etcd_endpoints URL`,
        'HA_NOT_CONFIGURED',
        2,
      );
    }
    const settings = etcdSettingsOf(config.ha, home);
    return { etcd: createEtcdClient(settings), settings, prefix: haKeyPrefix(config, readHome(home).genesis.chainId) };
  } catch (err) {
    if (err instanceof ConfigError) throw new CommandFailure(err.message, err.code, err.fromFlags ? 2 : 1);
    if (err instanceof HomeError) throw new CommandFailure(err.message, err.code);
    throw err;
  }
}
