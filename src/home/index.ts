import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { homePaths, parseConfigText, renderNodeYml, type ConfigOverrides, type HomePaths, type SuperviseEntryYaml } from '../config/index.js';
// keys.js alone: the types index also loads every generated protobuf message, which a home never needs.
import { Ed25519Key, libp2pPeerId } from '../types/keys.js';
import { homeEntries } from './layout.js';

export { homeEntries, type HomeEntry } from './layout.js';

export interface Genesis {
  chainId: string;
  initialHeight: bigint;
  /** Unix nanoseconds. */
  startTime: bigint;
  proposerAddress: Uint8Array;
  daStartHeight: bigint;
  /**
   * DA blocks per forced-inclusion epoch (genesis `da_epoch_forced_inclusion`,
   * ev-node pkg/genesis/genesis.go): at least 1; 50 when genesis leaves it out,
   * ev-node's NewGenesis default.
   */
  daEpochForcedInclusion: bigint;
  /** The ABCI app's genesis state (`app_state`, any JSON), sent in InitChain as its JSON bytes; absent when genesis has none. */
  appState?: Uint8Array;
}

export interface NodeKey {
  key: Ed25519Key;
  peerId: string;
}

/** Everything a node reads from its home before it starts. */
export interface Home {
  paths: HomePaths;
  genesis: Genesis;
  signer: Ed25519Key;
  nodeKey: NodeKey;
}

export class HomeError extends Error {
  constructor(
    message: string,
    readonly code: 'HOME_MISSING' | 'HOME_EXISTS' | 'HOME_INVALID',
  ) {
    super(message);
    this.name = 'HomeError';
  }
}

/** Keys, and node.yml (it may hold da.auth_token): readable by the node's user alone. */
const PRIVATE_FILE_MODE = 0o600;
/** config/ holds those files: others may not even list it. */
const CONFIG_DIR_MODE = 0o700;

/** Writes a file only its owner can read. Removed first: the mode of a file that exists would stay as it is. */
function writePrivateFile(path: string, text: string): void {
  rmSync(path, { force: true });
  writeFileSync(path, text, { mode: PRIVATE_FILE_MODE });
}

function writeKeyFile(path: string, key: Ed25519Key, extra: Record<string, string>): void {
  const body = {
    type: 'ed25519',
    ...extra,
    pub_key: Buffer.from(key.publicKey).toString('base64'),
    priv_key: Buffer.from(key.seed).toString('base64'),
  };
  writePrivateFile(path, JSON.stringify(body, null, 2) + '\n');
}

function readJson(path: string, what: string): Record<string, unknown> {
  if (!existsSync(path)) throw new HomeError(`${what} ${path} is missing; run \`noded init\` to create the home`, 'HOME_MISSING');
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new HomeError(`${what} ${path} is not valid JSON: ${(err as Error).message}`, 'HOME_INVALID');
  }
}

function readKeyFile(path: string, what: string): Ed25519Key {
  const body = readJson(path, what);
  const seed = Buffer.from(typeof body.priv_key === 'string' ? body.priv_key : '', 'base64');
  if (body.type !== 'ed25519' || seed.length !== 32) {
    throw new HomeError(`${what} ${path} must hold an ed25519 key: {"type":"ed25519","priv_key":"<base64 of 32 bytes>"}`, 'HOME_INVALID');
  }
  return Ed25519Key.fromSeed(seed);
}

/** What init accepts as a chain id (and `init --join` checks a fetched genesis against). */
export const CHAIN_ID_PATTERN = /^[A-Za-z0-9._-]{1,50}$/;
export const CHAIN_ID_FORM = '1 to 50 letters, digits, ".", "_" or "-"';

function parseGenesis(path: string): Genesis {
  return parseGenesisObject(readJson(path, 'genesis file'), `genesis file ${path}`);
}

/** A genesis.json's content, checked field by field; `what` names where it came from in the error. */
export function parseGenesisObject(g: Record<string, unknown>, what: string): Genesis {
  const problems: string[] = [];
  const int = (name: string): bigint => {
    const v = g[name];
    if ((typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'string' && /^\d+$/.test(v))) return BigInt(v);
    problems.push(`${name}: got ${JSON.stringify(v)}, expected a non-negative integer`);
    return 0n;
  };
  const chainId = typeof g.chain_id === 'string' && g.chain_id ? g.chain_id : (problems.push('chain_id: expected a non-empty string'), '');
  const startMs = Date.parse(String(g.start_time));
  if (Number.isNaN(startMs)) problems.push(`start_time: got ${JSON.stringify(g.start_time)}, expected an RFC 3339 time`);
  const proposer = Buffer.from(typeof g.proposer_address === 'string' ? g.proposer_address : '', 'base64');
  if (proposer.length !== 32) problems.push('proposer_address: expected the base64 of a 32-byte address');
  const genesis: Genesis = {
    chainId,
    initialHeight: int('initial_height'),
    startTime: BigInt(Number.isNaN(startMs) ? 0 : startMs) * 1_000_000n,
    proposerAddress: new Uint8Array(proposer),
    daStartHeight: int('da_start_height'),
    daEpochForcedInclusion: g.da_epoch_forced_inclusion === undefined ? DEFAULT_FORCED_INCLUSION_EPOCH : int('da_epoch_forced_inclusion'),
    ...(g.app_state === undefined ? {} : { appState: new TextEncoder().encode(JSON.stringify(g.app_state)) }),
  };
  if (genesis.initialHeight < 1n) problems.push('initial_height: must be at least 1');
  // ev-node pkg/genesis/genesis.go, Validate: "da_epoch_forced_inclusion must be at least 1".
  if (g.da_epoch_forced_inclusion !== undefined && genesis.daEpochForcedInclusion < 1n) {
    problems.push(
      `da_epoch_forced_inclusion: got ${JSON.stringify(g.da_epoch_forced_inclusion)}, expected the number of DA blocks per forced-inclusion epoch, at least 1`,
    );
  }
  if (problems.length) throw new HomeError(`${what} is invalid:\n  ${problems.join('\n  ')}`, 'HOME_INVALID');
  return genesis;
}

/** DA blocks per forced-inclusion epoch when genesis does not say: ev-node's NewGenesis default (pkg/genesis/genesis.go). */
export const DEFAULT_FORCED_INCLUSION_EPOCH = 50n;

/** Reads genesis and keys of an initialised home, with errors that say which file and what to do. */
export function readHome(home: string): Home {
  const paths = homePaths(home);
  const genesis = parseGenesis(paths.genesisFile);
  const signer = readKeyFile(paths.signerFile, 'signing key file');
  const key = readKeyFile(paths.nodeKeyFile, 'node key file');
  return { paths, genesis, signer, nodeKey: { key, peerId: libp2pPeerId(key.publicKey) } };
}

/**
 * Why `home` is not a noded home, one line per file (empty when it is one): a
 * home has config/node.yml, config/genesis.json, config/signer.json and
 * config/node_key.json, each present and parseable.
 */
export function homeProblems(home: string): string[] {
  const paths = homePaths(home);
  const problems: string[] = [];
  const check = (file: string, parse: () => unknown) => {
    const name = relative(paths.home, file);
    if (!existsSync(file)) {
      problems.push(`${name} is missing`);
      return;
    }
    try {
      parse();
    } catch (err) {
      problems.push(`${name} does not parse: ${(err as Error).message.replace(/\s*\n\s*/g, '; ')}`);
    }
  };
  check(paths.configFile, () => parseConfigText(readFileSync(paths.configFile, 'utf8'), paths.configFile));
  check(paths.genesisFile, () => parseGenesis(paths.genesisFile));
  check(paths.signerFile, () => readKeyFile(paths.signerFile, 'signing key file'));
  check(paths.nodeKeyFile, () => readKeyFile(paths.nodeKeyFile, 'node key file'));
  return problems;
}

export interface InitOptions {
  home: string;
  chainId: string;
  aggregator: boolean;
  /** Replace an existing home: new keys and genesis, an emptied data directory. */
  force: boolean;
  /** Genesis start time; now by default. */
  now?: Date;
  /** node.yml values other than the defaults. */
  config?: ConfigOverrides;
  /** node.yml `supervise:` entries. */
  supervise?: SuperviseEntryYaml[];
  /** Genesis `da_epoch_forced_inclusion` (`init --forced-inclusion-epoch`); DEFAULT_FORCED_INCLUSION_EPOCH when absent. */
  forcedInclusionEpoch?: number;
  /** genesis.json's text, written as is (a chain this node joins); a new chain's genesis, with this home's signer as proposer, when absent. */
  genesisJson?: string;
}

export interface InitResult {
  home: string;
  chainId: string;
  aggregator: boolean;
  /** Paths written, in the order written. */
  created: string[];
  signerAddress: string;
  peerId: string;
}

/** True when the path holds a home: a config file, or any of the data noded makes (other files in data/ are not a home's). */
export function homeExists(home: string): boolean {
  const paths = homePaths(home);
  return existsSync(paths.configFile) || homeEntries(paths).data.some((e) => existsSync(e.path));
}

/** Writes a new home (DESIGN.md §4). */
export function initHome(opts: InitOptions): InitResult {
  const paths = homePaths(opts.home);
  if (homeExists(opts.home) && !opts.force) {
    throw new HomeError(`${opts.home} already holds a node home; pass --force to replace it (its keys and data are lost)`, 'HOME_EXISTS');
  }
  if (opts.force) for (const entry of homeEntries(paths).data) rmSync(entry.path, { recursive: true, force: true });
  const created: string[] = [];
  for (const dir of [paths.configDir, paths.dataDir, paths.cacheDir]) {
    mkdirSync(dir, { recursive: true });
    created.push(dir + '/');
  }
  // mkdir's mode applies only to a directory it creates: an existing config/ (re-init) is tightened too.
  chmodSync(paths.configDir, CONFIG_DIR_MODE);
  const signer = Ed25519Key.generate();
  const nodeKey = Ed25519Key.generate();
  const peerId = libp2pPeerId(nodeKey.publicKey);

  writePrivateFile(paths.configFile, renderNodeYml({ ...opts.config, 'node.aggregator': opts.aggregator }, opts.supervise));
  created.push(paths.configFile);
  const genesis = {
    chain_id: opts.chainId,
    initial_height: 1,
    start_time: (opts.now ?? new Date()).toISOString(),
    proposer_address: Buffer.from(signer.address).toString('base64'),
    da_start_height: 0,
    da_epoch_forced_inclusion: opts.forcedInclusionEpoch ?? Number(DEFAULT_FORCED_INCLUSION_EPOCH),
  };
  writeFileSync(paths.genesisFile, opts.genesisJson ?? JSON.stringify(genesis, null, 2) + '\n');
  created.push(paths.genesisFile);
  writeKeyFile(paths.signerFile, signer, { address: Buffer.from(signer.address).toString('base64') });
  created.push(paths.signerFile);
  writeKeyFile(paths.nodeKeyFile, nodeKey, { peer_id: peerId });
  created.push(paths.nodeKeyFile);

  return {
    home: opts.home,
    chainId: opts.chainId,
    aggregator: opts.aggregator,
    created,
    signerAddress: Buffer.from(signer.address).toString('base64'),
    peerId,
  };
}

/**
 * What to do when a node's genesis is not its chain's (GenesisMismatchError); `noded init --join` makes a new home, so
 * it names a directory of its own. Here rather than beside the guard so that `noded doctor` need not load the block types.
 */
export function genesisMismatchRemedy(genesisFile: string): string {
  return `copy the aggregator's config/genesis.json to ${genesisFile} and restart the node, or make a new home from the aggregator's RPC: \`noded init --join http://<aggregator host>:7331 --home <new dir>\``;
}
