import { join } from 'node:path';
import type { HomePaths } from '../config/index.js';

/** An entry noded itself makes in a home, with what it holds (as a reset's plan shows it). */
export interface HomeEntry {
  path: string;
  what: string;
}

/**
 * Every entry noded makes in a home (DESIGN.md §4): `init` writes config/ and
 * data/cache, `init --execution evm` config/el-genesis.json, config/jwt.hex and
 * the EthereumJS database data/evm (src/exec/evm/devnet.ts), `exec serve`
 * data/exec-kv, `start` the rest.
 * A reset deletes these and nothing beside them: an operator's own files in the
 * home are left alone.
 */
export function homeEntries(paths: HomePaths): { config: HomeEntry[]; data: HomeEntry[]; logs: HomeEntry } {
  return {
    config: [
      { path: paths.configFile, what: 'the configuration' },
      { path: paths.genesisFile, what: 'the genesis' },
      { path: paths.signerFile, what: 'the signing key' },
      { path: paths.nodeKeyFile, what: 'the P2P identity' },
      { path: join(paths.configDir, 'jwt.hex'), what: 'the Engine API secret' },
      { path: join(paths.configDir, 'el-genesis.json'), what: "the EVM chain's genesis" },
    ],
    data: [
      { path: paths.storeDir, what: 'the block store (blocks, state, DA heights)' },
      { path: paths.cacheDir, what: 'the DA cache' },
      { path: paths.localDaDir, what: "the built-in DA's blocks (with da.local, this chain's DA history)" },
      { path: join(paths.dataDir, 'evm'), what: "the EthereumJS client's database (init --execution evm)" },
      { path: paths.execKvDir, what: "`noded exec serve`'s kv state and ledger (init --execution grpc)" },
      { path: paths.execAbciDir, what: "`noded exec serve --type abci`'s ledger" },
      { path: paths.pidFile, what: 'pid file' },
    ],
    logs: { path: paths.logsDir, what: "the node's log (start --dashboard)" },
  };
}
