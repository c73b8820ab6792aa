import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { homePaths, resolveHomePath, type HomePaths } from '../config/index.js';
import { buildContext, nodeProcess, type NodeProcess } from '../doctor/index.js';
import { assertInside, isWithin, realDir, UnsafePathError } from './safe-remove.js';

export type ResetKind = 'soft' | 'hard' | 'evm';

/** A reset that must not go ahead; `exit` is the process exit status. */
export class ResetError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly exit = 1,
  ) {
    super(message);
  }
}

/** One thing a reset deletes. */
export interface ResetTarget {
  /** The path as the home names it. */
  path: string;
  /** `entry`: the path itself (a link is removed, not followed); `contents`: what is inside the directory, which stays. */
  mode: 'entry' | 'contents';
  what: string;
}

export interface ResetPlan {
  kind: ResetKind;
  home: string;
  targets: ResetTarget[];
  /** Directories deletion may reach into (canonical): the home, and for `evm` the execution database. */
  roots: string[];
  /** Kept, for the operator's peace of mind. */
  kept: string[];
  /** Things the operator should know before saying yes. */
  notes: string[];
  /** `hard`: what init runs with afterwards. */
  reinit?: { chainId: string; aggregator: boolean };
  /** What to do after the reset. */
  next: string[];
}

export interface PlanOptions {
  home: string;
  env?: NodeJS.ProcessEnv;
  /** `hard`: override the chain id read from the old genesis. */
  chainId?: string;
  /** `hard`: override the role read from the old node.yml. */
  aggregator?: boolean;
  /** `evm`: the execution client's database, over execution.db_path. */
  executionDb?: string;
  /** `evm`: go ahead although the execution client answers. */
  force?: boolean;
  /** `evm`: how long to wait for the Engine API to answer. */
  probeTimeoutMs?: number;
}

function describeNode(node: NodeProcess, paths: HomePaths): string[] {
  switch (node.state) {
    case 'running':
      throw new ResetError(
        `this home's node is running (process ${node.pid}, ${paths.pidFile}); stop it first (SIGINT or SIGTERM, or Ctrl-C where it runs), then reset`,
        'NODE_RUNNING',
      );
    case 'stale':
      return [`${node.pidFile} names process ${node.pid}, which is gone (a killed or crashed node): ignored`];
    case 'invalid':
      return [`${node.pidFile} holds no pid: ignored`];
    default:
      return [];
  }
}

/** `path`: its kind as shown in the plan (links say where they point). */
function entryWhat(path: string): string {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return `symlink to ${readlinkSync(path)} (the link is removed, not what it points to)`;
  return st.isDirectory() ? 'directory' : 'file';
}

const DATA_ENTRY_WHAT: Record<string, string> = {
  store: 'the block store (blocks, state, DA heights)',
  cache: 'the DA cache',
  'local-da': "the built-in DA's blocks (with da.local, this chain's DA history)",
  'node.pid': 'stale pid file',
};

/** Every entry of `dir` as a target, each checked to lie inside `roots`. */
function entriesOf(dir: string, roots: string[], describe: (name: string, path: string) => string): ResetTarget[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.map((name) => {
    const path = join(dir, name);
    assertInside(path, roots);
    return { path, mode: 'entry', what: describe(name, path) };
  });
}

function homeRoot(paths: HomePaths): string {
  const root = realDir(paths.home);
  if (!root) throw new ResetError(`${paths.home} does not exist: there is nothing to reset`, 'HOME_MISSING');
  return root;
}

function planSoft(paths: HomePaths, roots: string[], notes: string[]): ResetPlan {
  const st = existsSync(paths.dataDir) ? lstatSync(paths.dataDir) : undefined;
  if (!st) throw new ResetError(`${paths.dataDir} does not exist: there is nothing to reset`, 'HOME_MISSING');
  if (st.isSymbolicLink()) {
    const real = realDir(paths.dataDir);
    if (!real || !isWithin(roots[0]!, real)) {
      throw new ResetError(
        `${paths.dataDir} is a symlink to ${readlinkSync(paths.dataDir)}, outside the home: a reset deletes only inside the home; empty that directory yourself, or replace the link with a directory`,
        'UNSAFE_PATH',
      );
    }
  } else if (!st.isDirectory()) {
    throw new ResetError(`${paths.dataDir} is not a directory; move it away by hand (a reset deletes only what is inside data/)`, 'DATA_NOT_DIR');
  }
  const targets = entriesOf(paths.dataDir, roots, (name, path) => DATA_ENTRY_WHAT[name] ?? entryWhat(path));
  if (targets.some((t) => t.path === paths.localDaDir)) {
    notes.push("data/local-da holds the built-in DA's blocks: a devnet's chain starts again from height 1");
  }
  return {
    kind: 'soft',
    home: paths.home,
    targets,
    roots,
    kept: [`${paths.configDir}/ (node.yml, genesis.json, keys)`],
    notes,
    next: [`start the node: \`noded start --home ${paths.home}\`; it resyncs (a full node from DA or peers)`],
  };
}

function readChainId(paths: HomePaths): string | undefined {
  try {
    const g = JSON.parse(readFileSync(paths.genesisFile, 'utf8')) as { chain_id?: unknown };
    return typeof g.chain_id === 'string' && g.chain_id ? g.chain_id : undefined;
  } catch {
    return undefined;
  }
}

function planHard(paths: HomePaths, roots: string[], notes: string[], opts: PlanOptions): ResetPlan {
  const root = roots[0]!;
  const home = resolve(homedir());
  if (root === '/' || isWithin(root, home)) {
    throw new ResetError(`refusing to delete ${paths.home}${root !== paths.home ? ` (really ${root})` : ''}: it is / or holds your home directory`, 'UNSAFE_PATH');
  }
  if (!existsSync(paths.configFile) && !existsSync(paths.genesisFile)) {
    throw new ResetError(`${paths.home} is not a node home (no config/node.yml, no config/genesis.json): refusing to delete it`, 'NOT_A_HOME');
  }
  const chainId = opts.chainId ?? readChainId(paths);
  if (!chainId) throw new ResetError(`cannot read the chain id from ${paths.genesisFile}; give it with --chain-id`, 'CHAIN_ID_UNKNOWN', 2);
  let aggregator = opts.aggregator;
  if (aggregator === undefined) {
    // node.yml alone (no env, no flags): the role the home was made with.
    const ctx = buildContext({ home: paths.home, env: {}, checks: ['config'] });
    const raw = ctx.raw.get('node.aggregator');
    aggregator = ctx.config.node.aggregator;
    if (raw && String(raw.value) !== String(aggregator)) {
      notes.push(`node.aggregator in node.yml is unreadable (${JSON.stringify(raw.value)}): re-initialising as a full node; pass --aggregator to override`);
    }
  }
  notes.push('keys are regenerated: the node gets a new identity (a new signing key and P2P peer id)');
  notes.push('node.yml is rewritten with the defaults: settings you made in it are lost');
  if (!aggregator) notes.push("a full node needs the chain's genesis.json again: copy it from the aggregator into config/ before starting");
  else notes.push("the new genesis names the new signing key as proposer: full nodes of this chain need the new genesis.json");
  return {
    kind: 'hard',
    home: paths.home,
    targets: entriesOf(paths.home, roots, (name, path) => (name === 'config' ? 'config: node.yml, genesis.json and the keys' : name === 'data' ? 'data: store, cache, everything' : entryWhat(path))),
    roots,
    kept: [],
    notes,
    reinit: { chainId, aggregator },
    next: [`start the node: \`noded start --home ${paths.home}\``],
  };
}

/** True when something accepts a TCP connection at the URL's host and port within the timeout. */
function answers(url: string, timeoutMs: number): Promise<boolean> {
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  return new Promise((resolveAnswer) => {
    const socket = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolveAnswer(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Why a directory must not be emptied as the execution database (as given, or its real path); undefined when it may. */
function unsafeDbReason(dir: string, paths: HomePaths, home: string): string | undefined {
  const real = (p: string) => realDir(p) ?? p;
  if (dir === '/') return 'it is /';
  if (dir === home) return 'it is the node home';
  if (isWithin(dir, home)) return 'it holds the node home';
  if (isWithin(dir, resolve(homedir()))) return 'it holds your home directory';
  if (isWithin(real(paths.configDir), dir) || isWithin(paths.configDir, dir)) return "it is inside the home's config/ (keys)";
  if (dir === real(paths.dataDir) || isWithin(real(paths.storeDir), dir)) return "it is the node's own data";
  return undefined;
}

async function planEvm(paths: HomePaths, roots: string[], notes: string[], opts: PlanOptions): Promise<ResetPlan> {
  const ctx = buildContext({ home: paths.home, env: opts.env ?? process.env, checks: ['config'] });
  const configured = ctx.config.execution.db_path;
  const given = opts.executionDb ?? configured;
  if (!given) {
    throw new ResetError('the execution client database is not configured: set execution.db_path in node.yml, or give --execution-db DIR', 'EXECUTION_DB_UNSET', 2);
  }
  const db = opts.executionDb !== undefined ? resolve(opts.executionDb) : resolveHomePath(paths.home, configured);
  const home = roots[0]!;
  const realDb = realDir(db);
  for (const candidate of realDb && realDb !== db ? [db, realDb] : [db]) {
    const why = unsafeDbReason(candidate, paths, home);
    if (why) throw new ResetError(`refusing to use ${db}${candidate !== db ? ` (really ${candidate})` : ''} as the execution database: ${why}`, 'UNSAFE_PATH');
  }
  const engineUrl = ctx.config.execution.engine_url;
  if (await answers(engineUrl, opts.probeTimeoutMs ?? 2000)) {
    if (!opts.force) {
      throw new ResetError(
        `the execution client answers at ${engineUrl} (execution.engine_url): stop it first, it holds its database open; or pass --force if that is not it`,
        'ENGINE_RUNNING',
      );
    }
    notes.push(`the execution client answers at ${engineUrl}; going ahead because of --force`);
  }
  if (ctx.config.execution.type !== 'evm') notes.push(`execution.type is ${ctx.config.execution.type}, not evm`);
  const evmRoots = realDb ? [...roots, realDb] : roots;
  const targets: ResetTarget[] = [];
  if (realDb) {
    entriesOf(db, evmRoots, () => '');
    targets.push({ path: db, mode: 'contents', what: 'the execution client database' });
  } else {
    notes.push(`${db} does not exist: no execution database to delete`);
  }
  if (existsSync(paths.cacheDir)) {
    entriesOf(paths.cacheDir, evmRoots, () => '');
    targets.push({ path: paths.cacheDir, mode: 'contents', what: "the node's cache" });
  }
  return {
    kind: 'evm',
    home: paths.home,
    targets,
    roots: evmRoots,
    kept: [`${paths.storeDir}/ (blocks)`, `${paths.configDir}/`],
    notes,
    next: [
      `start the execution client first (with the same genesis and jwt.hex; it rebuilds its database${realDb ? ` in ${db}` : ''}), and wait until its Engine API answers at ${engineUrl}`,
      `then start the node: \`noded start --home ${paths.home}\``,
    ],
  };
}

/** What a reset would delete, after every refusal rule: a running node, unsafe paths, a live execution client. */
export async function planReset(kind: ResetKind, opts: PlanOptions): Promise<ResetPlan> {
  const paths = homePaths(opts.home);
  const notes = describeNode(nodeProcess(paths), paths);
  const roots = [homeRoot(paths)];
  try {
    if (kind === 'soft') return planSoft(paths, roots, notes);
    if (kind === 'hard') return planHard(paths, roots, notes, opts);
    return await planEvm(paths, roots, notes, opts);
  } catch (err) {
    if (err instanceof UnsafePathError) throw new ResetError(err.message, err.code);
    throw err;
  }
}
