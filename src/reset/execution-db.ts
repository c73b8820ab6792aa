import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { realDir } from './safe-remove.js';

/** The directories an operating system is made of: never an execution database, nor are their ancestors (only `/`). */
const SYSTEM_DIRS = ['/', '/etc', '/usr', '/var', '/bin', '/sbin', '/boot', '/home', '/opt', '/srv', '/proc', '/sys', '/dev'];

/**
 * The system directories as given and as they really are (`/lib*` as this
 * machine has them): on a merged-/usr system `/lib` is a link to `/usr/lib`,
 * which must be refused as well.
 */
export function systemDirs(): Set<string> {
  let lib: string[] = [];
  try {
    lib = readdirSync('/')
      .filter((name) => name.startsWith('lib'))
      .map((name) => `/${name}`);
  } catch {
    // No readable root: the fixed list alone.
  }
  const dirs = new Set<string>();
  for (const dir of [...SYSTEM_DIRS, ...lib]) {
    dirs.add(dir);
    const real = realDir(dir);
    if (real) dirs.add(real);
  }
  return dirs;
}

/** Entries that together mark one execution client's database directory. */
interface ClientSign {
  client: string;
  /** Paths relative to the directory, all of which must exist. */
  entries: string[];
  /** Also found one level down: clients that keep one directory per network under the data directory. */
  perNetwork?: boolean;
}

const CLIENT_SIGNS: ClientSign[] = [
  // go-ethereum: node.Config.ResolvePath puts the instance's data in <datadir>/geth (the client name), and
  // cmd/utils.MakeChainDatabase opens "chaindata" there. Erigon's datadir has a chaindata/ as well.
  { client: 'geth', entries: ['geth/chaindata'] },
  { client: 'geth or erigon', entries: ['chaindata'] },
  // reth: crates/node/core/src/dirs.rs, ChainPath::db() is <datadir>/db, ::static_files() <datadir>/static_files;
  // without --datadir the data directory is reth/<chain>, one per network. db/ itself is an MDBX environment (mdbx.dat).
  { client: 'reth', entries: ['db', 'static_files'], perNetwork: true },
  { client: 'reth', entries: ['mdbx.dat'] },
  // EthereumJS: @ethereumjs/client src/config.ts, getDataDirectory() is <datadir>/<chain name>/{chain,state,meta}.
  { client: 'EthereumJS', entries: ['chain', 'state'], perNetwork: true },
  // Nethermind: Nethermind.Db/DbNames.cs names its databases blocks, headers, state, … in <base db path>/<network>.
  { client: 'Nethermind', entries: ['blocks', 'headers', 'state'], perNetwork: true },
];

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * What makes `dir` look like an execution client's database ("EthereumJS:
 * devnet/chain, devnet/state"), or undefined when nothing does.
 */
export function executionDbSign(dir: string): string | undefined {
  const matches = (base: string, sign: ClientSign) => sign.entries.every((e) => existsSync(join(base, e)));
  for (const sign of CLIENT_SIGNS) {
    if (matches(dir, sign)) return `${sign.client}: ${sign.entries.join(', ')}`;
  }
  const subdirs = readdirSync(dir).filter((name) => isDir(join(dir, name)));
  for (const sign of CLIENT_SIGNS.filter((s) => s.perNetwork)) {
    const network = subdirs.find((name) => matches(join(dir, name), sign));
    if (network) return `${sign.client}: ${sign.entries.map((e) => `${network}/${e}`).join(', ')}`;
  }
  return undefined;
}

/** The signs looked for, for the message that says none was found. */
export function executionDbSignsText(): string {
  return CLIENT_SIGNS.map((s) => `${s.client} ${s.entries.join(' + ')}${s.perNetwork ? ' (or in a per-network subdirectory)' : ''}`).join('; ');
}
