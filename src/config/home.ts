import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** Where everything of a node lives inside its home directory (DESIGN §4). */
export interface HomePaths {
  home: string;
  configDir: string;
  /** config/node.yml */
  configFile: string;
  genesisFile: string;
  /** Aggregator signing key, mode 0600. */
  signerFile: string;
  /** libp2p identity, mode 0600. */
  nodeKeyFile: string;
  /** Everything a soft reset deletes. */
  dataDir: string;
  storeDir: string;
  /** Clearable on its own. */
  cacheDir: string;
  localDaDir: string;
  /** `noded exec serve --type kv`'s state and ledger (a soft reset deletes it with the node's store: the node replays into a fresh one). */
  execKvDir: string;
  /** `noded exec serve --type abci`'s ledger. */
  execAbciDir: string;
  /** Present while the daemon runs. */
  pidFile: string;
  logsDir: string;
}

function expandTilde(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

export function homePaths(home: string): HomePaths {
  const root = resolve(expandTilde(home));
  const configDir = join(root, 'config');
  const dataDir = join(root, 'data');
  return {
    home: root,
    configDir,
    configFile: join(configDir, 'node.yml'),
    genesisFile: join(configDir, 'genesis.json'),
    signerFile: join(configDir, 'signer.json'),
    nodeKeyFile: join(configDir, 'node_key.json'),
    dataDir,
    storeDir: join(dataDir, 'store'),
    cacheDir: join(dataDir, 'cache'),
    localDaDir: join(dataDir, 'local-da'),
    execKvDir: join(dataDir, 'exec-kv'),
    execAbciDir: join(dataDir, 'exec-abci'),
    pidFile: join(dataDir, 'node.pid'),
    logsDir: join(root, 'logs'),
  };
}

/** The home to use: --home, else env NODED_HOME, else ~/.node; absolute, with a leading `~` expanded. Empty values count as unset. */
export function resolveHome(flagValue?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(expandTilde(flagValue || env.NODED_HOME || '~/.node'));
}

/** The home of `noded start --dev`. */
export const DEV_HOME = resolveHome('~/.node-devnet');

/** A path from the config (execution.jwt_secret_file, log.file, …): `~` expanded, relative ones under the home. */
export function resolveHomePath(home: string, path: string): string {
  const expanded = expandTilde(path);
  return isAbsolute(expanded) ? expanded : join(homePaths(home).home, expanded);
}
