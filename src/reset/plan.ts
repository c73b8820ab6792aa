import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { homePaths, parseConfigText, resolveHomePath, type HomePaths } from '../config/index.js';
import { buildContext } from '../doctor/index.js';
import { homeEntries, homeProblems, readHome, type HomeEntry } from '../home/index.js';
import { executionDbSign, executionDbSignsText, systemDirs } from './execution-db.js';
import { runningNode } from './running.js';
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
  /** The path deleted: as the home names it, or for the execution database its real path (links resolved). */
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
  /** Entries beside the home's own that noded did not make: never deleted. */
  leftAlone: string[];
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
  /** `evm`: go ahead although the execution client answers, or the directory does not look like its database. */
  force?: boolean;
  /** `evm`: how long to wait for the Engine API to answer. */
  probeTimeoutMs?: number;
}

/** The home's own entries that exist, as targets, each checked to lie inside `roots`; a symlink says where it points. */
function ownTargets(entries: HomeEntry[], roots: string[]): ResetTarget[] {
  const targets: ResetTarget[] = [];
  for (const entry of entries) {
    let st;
    try {
      st = lstatSync(entry.path);
    } catch {
      continue; // not there: nothing to delete
    }
    assertInside(entry.path, roots);
    const what = st.isSymbolicLink() ? `symlink to ${readlinkSync(entry.path)} (the link is removed, not what it points to)` : entry.what;
    targets.push({ path: entry.path, mode: 'entry', what });
  }
  return targets;
}

/** Entries of `dir` that are none of `own`: not made by noded, so never deleted. */
function othersIn(dir: string, own: string[]): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names.map((name) => join(dir, name)).filter((path) => !own.includes(path));
}

function homeRoot(paths: HomePaths): string {
  const root = realDir(paths.home);
  if (!root) throw new ResetError(`${paths.home} does not exist: there is nothing to reset; check --home (or NODED_HOME)`, 'HOME_MISSING');
  return root;
}

/** Refuses a directory that is not a noded home: a reset deletes only what a home is made of, so it must be one. */
function assertHome(paths: HomePaths): void {
  const problems = homeProblems(paths.home);
  if (problems.length === 0) return;
  throw new ResetError(
    `${paths.home} is not a noded home (${problems.join('; ')}): a home holds config/node.yml, config/genesis.json, config/signer.json and config/node_key.json, as \`noded init\` makes them. Check --home (or NODED_HOME); nothing was deleted`,
    'NOT_A_HOME',
  );
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
  const own = homeEntries(paths).data;
  const targets = ownTargets(own, roots);
  if (targets.some((t) => t.path === paths.localDaDir)) {
    notes.push("data/local-da holds the built-in DA's blocks: a devnet's chain starts again from height 1");
  }
  return {
    kind: 'soft',
    home: paths.home,
    targets,
    roots,
    kept: [`${paths.configDir}/ (node.yml, genesis.json, keys)`],
    leftAlone: othersIn(
      paths.dataDir,
      own.map((e) => e.path),
    ),
    notes,
    next: [`start the node: \`noded start --home ${paths.home}\`; it resyncs (a full node from DA or peers)`],
  };
}

function planHard(paths: HomePaths, roots: string[], notes: string[], opts: PlanOptions): ResetPlan {
  const root = roots[0]!;
  if (root === '/' || isWithin(root, resolve(homedir()))) {
    throw new ResetError(
      `refusing to reset ${paths.home}${root !== paths.home ? ` (really ${root})` : ''}: it is / or holds your home directory; give a node its own home directory (--home DIR); nothing was deleted`,
      'UNSAFE_PATH',
    );
  }
  // The home parses (assertHome): its chain id, and its role from node.yml alone (no env, no flags), as it was made.
  const chainId = opts.chainId ?? readHome(paths.home).genesis.chainId;
  const aggregator = opts.aggregator ?? parseConfigText(readFileSync(paths.configFile, 'utf8'), paths.configFile).node.aggregator;
  notes.push('keys are regenerated: the node gets a new identity (a new signing key and P2P peer id)');
  notes.push('node.yml is rewritten with the defaults: settings you made in it are lost');
  if (!aggregator) notes.push("a full node needs the chain's genesis.json again: copy it from the aggregator into config/ before starting");
  else notes.push('the new genesis names the new signing key as proposer: full nodes of this chain need the new genesis.json');
  const own = homeEntries(paths);
  return {
    kind: 'hard',
    home: paths.home,
    targets: ownTargets([...own.config, ...own.data, own.logs], roots),
    roots,
    kept: [],
    leftAlone: [
      ...othersIn(paths.home, [paths.configDir, paths.dataDir, paths.logsDir]),
      ...othersIn(
        paths.configDir,
        own.config.map((e) => e.path),
      ),
      ...othersIn(
        paths.dataDir,
        own.data.map((e) => e.path),
      ),
    ],
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

/**
 * Why a directory must not be emptied as the execution database (as given, or
 * its real path), or undefined when it may: a system directory or one holding
 * it, the home or one holding it, your home directory or one holding it, the
 * home's config/ (keys), or the node's own data.
 */
function unsafeDbReason(dir: string, paths: HomePaths, home: string): string | undefined {
  const real = (p: string) => realDir(p) ?? p;
  for (const sys of systemDirs()) {
    if (dir === sys) return `it is the system directory ${sys}`;
    if (isWithin(dir, sys)) return `it holds the system directory ${sys}`;
  }
  if (dir === home) return 'it is the node home';
  if (isWithin(dir, home)) return 'it holds the node home';
  if (isWithin(dir, resolve(homedir()))) return 'it holds your home directory';
  if (isWithin(real(paths.configDir), dir) || isWithin(paths.configDir, dir)) return "it is inside the home's config/ (keys)";
  if (dir === real(paths.dataDir)) return "it is the node's data/";
  for (const own of [paths.storeDir, paths.cacheDir, paths.localDaDir]) {
    if (isWithin(dir, real(own)) || isWithin(real(own), dir)) return `it is the node's own ${relative(paths.home, own)}`;
  }
  return undefined;
}

/** Throws UnsafePathError when an entry of `dir` lies outside `roots` (a symlinked directory leading out). */
function assertEntriesInside(dir: string, roots: string[]): void {
  for (const name of readdirSync(dir)) assertInside(join(dir, name), roots);
}

async function planEvm(paths: HomePaths, roots: string[], notes: string[], opts: PlanOptions): Promise<ResetPlan> {
  const ctx = buildContext({ home: paths.home, env: opts.env ?? process.env, checks: ['config'] });
  const configured = ctx.config.execution.db_path;
  const given = opts.executionDb ?? configured;
  if (!given) {
    throw new ResetError(
      'the execution client database is not configured: set execution.db_path in node.yml, or give --execution-db DIR',
      'EXECUTION_DB_UNSET',
      2,
    );
  }
  const db = opts.executionDb !== undefined ? resolve(opts.executionDb) : resolveHomePath(paths.home, configured);
  const home = roots[0]!;
  // Links resolved: the plan shows, and the reset empties, the directory that really holds the data.
  const realDb = realDir(db);
  const shown = realDb && realDb !== db ? `${db} (really ${realDb})` : db;
  for (const candidate of realDb && realDb !== db ? [db, realDb] : [db]) {
    const why = unsafeDbReason(candidate, paths, home);
    if (why) {
      throw new ResetError(
        `refusing to use ${shown} as the execution database: ${why}. Give the directory your execution client keeps its database in (its --datadir) with --execution-db or execution.db_path; nothing was deleted`,
        'UNSAFE_PATH',
      );
    }
  }
  if (realDb && !statSync(realDb).isDirectory()) {
    throw new ResetError(
      `${shown} is not a directory: give the execution client's database directory with --execution-db or execution.db_path`,
      'EXECUTION_DB_NOT_DIR',
    );
  }
  const contents = realDb ? readdirSync(realDb) : [];
  const sign = realDb && contents.length > 0 ? executionDbSign(realDb) : undefined;
  if (realDb && contents.length > 0 && !sign) {
    if (!opts.force) {
      throw new ResetError(
        `${shown} does not look like an execution client's database (none of: ${executionDbSignsText()}); check --execution-db or execution.db_path, or pass --force if you are sure; nothing was deleted`,
        'NOT_EXECUTION_DB',
      );
    }
    notes.push(`${realDb} does not look like an execution client's database; going ahead because of --force`);
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
  if (!realDb) notes.push(`${db} does not exist: no execution database to delete`);
  else if (contents.length === 0) notes.push(`${shown} is empty: no execution database to delete`);
  else {
    const link = realDb !== db ? `, linked from ${db}` : '';
    targets.push({ path: realDb, mode: 'contents', what: `the execution client's database${link}${sign ? ` (${sign})` : ''}` });
  }
  if (existsSync(paths.cacheDir)) {
    assertEntriesInside(paths.cacheDir, evmRoots);
    targets.push({ path: paths.cacheDir, mode: 'contents', what: "the node's cache" });
  }
  return {
    kind: 'evm',
    home: paths.home,
    targets,
    roots: evmRoots,
    kept: [`${paths.storeDir}/ (blocks)`, `${paths.configDir}/`],
    leftAlone: [],
    notes,
    next: [
      `start the execution client first (with the same genesis and jwt.hex; it rebuilds its database${realDb ? ` in ${realDb}` : ''}), and wait until its Engine API answers at ${engineUrl}`,
      `then start the node: \`noded start --home ${paths.home}\``,
    ],
  };
}

/**
 * What a reset would delete, after every refusal rule: not a noded home, a
 * running node, unsafe paths, a live execution client or a directory that is
 * no execution database (both unless --force).
 */
export async function planReset(kind: ResetKind, opts: PlanOptions): Promise<ResetPlan> {
  const paths = homePaths(opts.home);
  const roots = [homeRoot(paths)];
  // Checked first: a directory that is no home is never looked into further (its store is not opened).
  assertHome(paths);
  const { running, notes } = await runningNode(paths);
  if (running) {
    const stop = running.pid === undefined ? 'Ctrl-C where it runs, or SIGINT/SIGTERM to it' : `Ctrl-C where it runs, or \`kill -INT ${running.pid}\``;
    throw new ResetError(`this home's node is running: ${running.evidence}. Stop it first (${stop}), then reset; nothing was deleted`, 'NODE_RUNNING');
  }
  try {
    if (kind === 'soft') return planSoft(paths, roots, notes);
    if (kind === 'hard') return planHard(paths, roots, notes, opts);
    return await planEvm(paths, roots, notes, opts);
  } catch (err) {
    if (err instanceof UnsafePathError)
      throw new ResetError(`${err.message}, through a symlink; remove or replace that link by hand, then reset again; nothing was deleted`, err.code);
    throw err;
  }
}
