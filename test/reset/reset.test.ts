import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { initHome } from '../../src/home/index.js';
import { parseConfigText } from '../../src/config/index.js';
import { emptyDir, planReset, removeEntry, ResetError, UnsafePathError } from '../../src/reset/index.js';
import { Daemon, RUN_JS, freePort, getBlockJson, killAll, latestHeight, runCli, tempHome, waitFor } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { EthereumJs, killAllEthereumJs } from '../doctor/ethereumjs.js';

const homes: Array<ReturnType<typeof tempHome>> = [];
const newDir = () => {
  const h = tempHome('noded-reset-');
  homes.push(h);
  return h.dir;
};

afterEach(async () => {
  await Promise.all([killAll(), killAllEthereumJs()]);
});
afterAll(() => {
  for (const h of homes) h.cleanup();
});

/**
 * Every entry under `dir` (links not followed) with its content: equal snapshots mean nothing was touched.
 * A real LevelDB store (one with a LOCK file) is one entry: the running-node probe opens it, and LevelDB
 * rewrites its log and manifest on every open.
 */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string, rel: string) => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) out[rel] = `-> ${readlinkSync(path)}`;
    else if (st.isDirectory() && existsSync(join(path, 'LOCK'))) out[rel] = 'leveldb';
    else if (st.isDirectory()) {
      out[rel] = 'dir';
      for (const name of readdirSync(path)) walk(join(path, name), `${rel}/${name}`);
    } else out[rel] = readFileSync(path, 'utf8');
  };
  walk(dir, '.');
  return out;
}

const reset = (kind: string, home: string, ...args: string[]) => runCli(['reset', kind, '--home', home, ...args]);
/** oclif's error on stderr as one line: it wraps long messages and marks each line with "›". */
const flat = (stderr: string) => stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ');
const errorOf = (stdout: string) => (JSON.parse(stdout) as { error: { code: string; message: string; exit: number } }).error;

/** A home with something in every place a reset looks. */
function filledHome(chainId: string, aggregator: boolean, config: Parameters<typeof initHome>[0]['config'] = {}): string {
  const home = newDir();
  initHome({ home, chainId, aggregator, force: false, config });
  mkdirSync(join(home, 'data', 'store'));
  writeFileSync(join(home, 'data', 'store', 'CURRENT'), 'MANIFEST-000001\n');
  writeFileSync(join(home, 'data', 'cache', 'da.json'), '{}\n');
  return home;
}

describe('reset soft against real processes', () => {
  it('refuses while the node runs; after it stops, empties data/, keeps config/, and start resyncs the full node from DA', async () => {
    const da = await DaServer.start(newDir());
    const aggHome = newDir();
    const fullHome = newDir();
    initHome({ home: aggHome, chainId: 'reset-soft', aggregator: true, force: false });
    initHome({ home: fullHome, chainId: 'reset-soft', aggregator: false, force: false });
    copyFileSync(join(aggHome, 'config', 'genesis.json'), join(fullHome, 'config', 'genesis.json'));
    const onDa = ['--no-node.da.local', '--node.da.address', da.address];
    const agg = await Daemon.start(aggHome, [...onDa, '--node.node.block_time', '100ms']);
    let full = await Daemon.start(fullHome, onDa);
    await waitFor(async () => (await latestHeight(full.rpc)) >= 5, 'the full node at height 5', 20_000);

    const before = snapshot(join(fullHome, 'config'));
    const [soft, hard, evm] = await Promise.all([
      reset('soft', fullHome, '--yes', '--json'),
      reset('hard', fullHome, '--yes', '--json'),
      reset('evm', fullHome, '--yes', '--json', '--execution-db', newDir()),
    ]);
    for (const res of [soft, hard, evm]) {
      expect(res.code, res.stdout).toBe(1);
      expect(errorOf(res.stdout)).toMatchObject({ code: 'NODE_RUNNING', message: expect.stringContaining(`process ${full.pid}`) });
    }
    expect(existsSync(join(fullHome, 'data', 'store'))).toBe(true);

    // Killed, not stopped: the pid file stays behind, names a dead process, and is reported and ignored.
    const pid = full.pid;
    await full.kill('SIGKILL');
    const data = snapshot(join(fullHome, 'data'));
    // One after the other: each reset opens the store for a moment to see whether a node holds it.
    const dry = await reset('soft', fullHome, '--dry-run', '--json');
    const unconfirmed = await reset('soft', fullHome);
    expect(dry.code, dry.stdout).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      action: 'soft',
      dry_run: true,
      deleted: expect.arrayContaining([join(fullHome, 'data', 'store'), join(fullHome, 'data', 'node.pid')]),
    });
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/pass --yes/);
    expect(snapshot(join(fullHome, 'data'))).toEqual(data);

    const done = await reset('soft', fullHome, '--yes');
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.stdout).toContain(`names process ${pid}, which is gone (a killed or crashed node): ignored`);
    expect(done.stdout).toContain(`deleted ${join(fullHome, 'data', 'store')}`);
    expect(readdirSync(join(fullHome, 'data'))).toEqual([]);
    expect(snapshot(join(fullHome, 'config'))).toEqual(before);

    full = await Daemon.start(fullHome, onDa);
    const target = await latestHeight(agg.rpc);
    await waitFor(async () => (await latestHeight(full.rpc)) >= target, `the full node to resync to ${target}`, 30_000);
    const [a, f] = await Promise.all([getBlockJson(agg.rpc, { height: 3 }), getBlockJson(full.rpc, { height: 3 })]);
    expect(f.text).toBe(a.text);
  });
});

describe('reset while the node runs without its pid file', () => {
  it('the store lock says it runs: all three resets refuse, naming the process, and delete nothing; once it stops, soft goes ahead', async () => {
    const home = newDir();
    initHome({ home, chainId: 'reset-locked', aggregator: true, force: false });
    const node = await Daemon.start(home, ['--node.node.block_time', '100ms']);
    await waitFor(async () => (await latestHeight(node.rpc)) >= 2, 'the node at height 2');
    rmSync(join(home, 'data', 'node.pid'));
    // The running node rewrites its cache and store as it goes: config/ and data/'s entries are what must stay.
    const [config, data] = [snapshot(join(home, 'config')), readdirSync(join(home, 'data')).sort()];

    const runs = await Promise.all([
      reset('soft', home, '--yes', '--json'),
      reset('hard', home, '--yes', '--json'),
      reset('evm', home, '--yes', '--json', '--execution-db', newDir()),
      reset('soft', home, '--yes'),
    ]);
    for (const res of runs.slice(0, 3)) {
      expect(res.code, res.stdout + res.stderr).toBe(1);
      expect(errorOf(res.stdout)).toEqual({
        code: 'NODE_RUNNING',
        exit: 1,
        message: expect.stringContaining(`the store ${join(home, 'data', 'store')} is locked by process ${node.pid}`),
      });
      expect(errorOf(res.stdout).message).toMatch(
        /although .*node\.pid is missing\. Stop it first \(Ctrl-C where it runs, or `kill -INT \d+`\), then reset; nothing was deleted$/,
      );
    }
    expect(runs[3].code, runs[3].stderr).toBe(1);
    expect(flat(runs[3].stderr)).toMatch(/this home's node is running: the store .* is locked by process \d+/);
    expect([snapshot(join(home, 'config')), readdirSync(join(home, 'data')).sort()]).toEqual([config, data]);
    expect(data).toEqual(['cache', 'local-da', 'store']);
    // The node never noticed: it keeps producing on its store.
    const height = await latestHeight(node.rpc);
    await waitFor(async () => (await latestHeight(node.rpc)) > height, `the node past height ${height}`);

    expect(await node.kill('SIGTERM'), node.stderr).toBe(0);
    const done = await reset('soft', home, '--yes', '--json');
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(JSON.parse(done.stdout).deleted).toContain(join(home, 'data', 'store'));
  });
});

describe('reset hard', () => {
  it('re-inits with the previous chain id and role; keys are regenerated; --chain-id overrides; what noded did not make is left alone', async () => {
    const agg = filledHome('hard-agg-1', true);
    const full = filledHome('hard-full-1', false);
    // The operator's own things beside the home's entries: a file, a sibling directory, a file in config/ and one in data/.
    writeFileSync(join(agg, 'notes.txt'), 'operator notes\n');
    mkdirSync(join(agg, 'backups'));
    writeFileSync(join(agg, 'backups', 'genesis.json.bak'), '{}\n');
    writeFileSync(join(agg, 'config', 'my-peers.txt'), 'peer list\n');
    writeFileSync(join(agg, 'data', 'export.csv'), 'height,txs\n');
    // Made loose by hand: the re-init writes node.yml 0600 and config/ 0700 again.
    chmodSync(join(agg, 'config'), 0o755);
    chmodSync(join(agg, 'config', 'node.yml'), 0o644);
    const strays = [join(agg, 'backups'), join(agg, 'notes.txt'), join(agg, 'config', 'my-peers.txt'), join(agg, 'data', 'export.csv')];
    const straysBefore = strays.map((p) => snapshot(p));
    const oldSigner = readFileSync(join(agg, 'config', 'signer.json'), 'utf8');
    const [a, f] = await Promise.all([reset('hard', agg, '--yes', '--json'), reset('hard', full, '--yes', '--chain-id', 'hard-full-2')]);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const result = JSON.parse(a.stdout);
    expect(result).toMatchObject({ action: 'hard', dry_run: false, init: { chain_id: 'hard-agg-1', aggregator: true } });
    expect(result.deleted).toEqual([
      ...['node.yml', 'genesis.json', 'signer.json', 'node_key.json'].map((f) => join(agg, 'config', f)),
      join(agg, 'data', 'store'),
      join(agg, 'data', 'cache'),
    ]);
    expect(result.left_alone).toEqual(strays);
    expect(strays.map((p) => snapshot(p))).toEqual(straysBefore);
    expect(result.notes).toContain('keys are regenerated: the node gets a new identity (a new signing key and P2P peer id)');
    expect(JSON.parse(readFileSync(join(agg, 'config', 'genesis.json'), 'utf8')).chain_id).toBe('hard-agg-1');
    expect(parseConfigText(readFileSync(join(agg, 'config', 'node.yml'), 'utf8'), 'node.yml').node.aggregator).toBe(true);
    expect(readFileSync(join(agg, 'config', 'signer.json'), 'utf8')).not.toBe(oldSigner);
    expect(readdirSync(join(agg, 'data')).sort()).toEqual(['cache', 'export.csv']);
    expect(statSync(join(agg, 'config')).mode & 0o777).toBe(0o700);
    expect(statSync(join(agg, 'config', 'node.yml')).mode & 0o777).toBe(0o600);

    expect(f.code, f.stdout + f.stderr).toBe(0);
    expect(f.stdout).toContain('Then runs: noded init --chain-id hard-full-2\n');
    expect(f.stdout).toMatch(/keys are regenerated/);
    expect(f.stdout).toMatch(/a full node needs the chain's genesis.json again/);
    expect(JSON.parse(readFileSync(join(full, 'config', 'genesis.json'), 'utf8')).chain_id).toBe('hard-full-2');
    expect(parseConfigText(readFileSync(join(full, 'config', 'node.yml'), 'utf8'), 'node.yml').node.aggregator).toBe(false);
  });

  it('soft deletes only what noded keeps in data/ and lists the rest as left alone', async () => {
    const home = filledHome('soft-strays', true);
    mkdirSync(join(home, 'data', 'snapshots'));
    writeFileSync(join(home, 'data', 'snapshots', 'h100.tar'), 'snapshot\n');
    const res = await reset('soft', home, '--yes');
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain(`Leaves alone (not made by noded): ${join(home, 'data', 'snapshots')}\n`);
    expect(readdirSync(join(home, 'data'))).toEqual(['snapshots']);
    expect(readFileSync(join(home, 'data', 'snapshots', 'h100.tar'), 'utf8')).toBe('snapshot\n');
  });
});

describe('reset: only a noded home', () => {
  it('refuses a directory without config, one holding only config/node.yml, and a home whose genesis does not parse, naming what is missing; nothing is deleted', async () => {
    const bare = newDir();
    mkdirSync(join(bare, 'data', 'store'), { recursive: true });
    writeFileSync(join(bare, 'data', 'store', 'precious'), 'x\n');
    const configOnly = newDir();
    mkdirSync(join(configOnly, 'config'));
    writeFileSync(join(configOnly, 'config', 'node.yml'), 'node:\n  aggregator: true\n');
    mkdirSync(join(configOnly, 'unrelated'));
    writeFileSync(join(configOnly, 'unrelated', 'precious'), 'x\n');
    const badGenesis = filledHome('bad-genesis', true);
    writeFileSync(join(badGenesis, 'config', 'genesis.json'), '{"chain_id":');
    const before = [bare, configOnly, badGenesis].map(snapshot);

    const runs = await Promise.all([
      reset('soft', bare, '--yes', '--json'),
      reset('hard', bare, '--yes', '--json'),
      reset('evm', bare, '--yes', '--json', '--execution-db', newDir()),
      reset('hard', configOnly, '--yes', '--json'),
      reset('soft', badGenesis, '--yes', '--json'),
      reset('soft', bare, '--yes'),
    ]);
    const expected: Array<[number, RegExp]> = [
      [0, /config\/node\.yml is missing; config\/genesis\.json is missing; config\/signer\.json is missing; config\/node_key\.json is missing/],
      [1, /config\/node\.yml is missing/],
      [2, /config\/node\.yml is missing/],
      [3, /^\S+ is not a noded home \(config\/genesis\.json is missing; config\/signer\.json is missing; config\/node_key\.json is missing\)/],
      [4, /is not a noded home \(config\/genesis\.json does not parse: genesis file .* is not valid JSON/],
    ];
    for (const [i, message] of expected) {
      const res = runs[i]!;
      expect(res.code, `${i}: ${res.stdout}${res.stderr}`).toBe(1);
      expect(errorOf(res.stdout), String(i)).toEqual({ code: 'NOT_A_HOME', exit: 1, message: expect.stringMatching(message) });
      expect(errorOf(res.stdout).message).toContain('a home holds config/node.yml, config/genesis.json, config/signer.json and config/node_key.json');
    }
    expect(runs[5].code).toBe(1);
    expect(flat(runs[5].stderr)).toMatch(/is not a noded home .*Check --home \(or NODED_HOME\); nothing was deleted/);
    expect([bare, configOnly, badGenesis].map(snapshot)).toEqual(before);
  });
});

describe('reset evm against the real EthereumJS client', () => {
  it('refuses while the execution client answers; once it is stopped, empties exactly its database and data/cache; the client then rebuilds', async () => {
    const outside = newDir();
    const db = join(outside, 'el-db');
    const enginePort = await freePort();
    const home = filledHome('reset-evm', true, {
      'execution.type': 'evm',
      'execution.engine_url': `http://127.0.0.1:${enginePort}`,
      'execution.db_path': db,
    });
    writeFileSync(join(outside, 'keep.txt'), 'beside the database\n');
    let el = await EthereumJs.start(join(outside, 'el'), { dataDir: db, enginePort });
    expect(readdirSync(db).length).toBeGreaterThan(0);

    const live = await reset('evm', home, '--yes', '--json');
    expect(live.code, live.stdout).toBe(1);
    expect(errorOf(live.stdout)).toMatchObject({ code: 'ENGINE_RUNNING', message: expect.stringContaining(`answers at http://127.0.0.1:${enginePort}`) });
    // --force goes past it (shown with --dry-run, which deletes nothing).
    const forced = await reset('evm', home, '--yes', '--force', '--dry-run');
    expect(forced.code, forced.stdout + forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/going ahead because of --force/);
    await el.kill();

    const homeBefore = snapshot(home);
    const outsideBefore = snapshot(outside);
    const res = await reset('evm', home, '--yes');
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain(`deleted ${db}/*`);
    expect(res.stdout).toContain(`deleted ${join(home, 'data', 'cache')}/*`);
    expect(res.stdout).toMatch(/\n1\. start the execution client first .*\n2\. then start the node: `noded start --home /);
    expect(readdirSync(db)).toEqual([]);
    expect(readdirSync(join(home, 'data', 'cache'))).toEqual([]);
    // Everything else is as it was: the home but data/cache's contents, the outside dir but the database's contents.
    const keptHome = Object.fromEntries(Object.entries(homeBefore).filter(([k]) => !k.startsWith('./data/cache/')));
    expect(snapshot(home)).toEqual(keptHome);
    const keptOutside = Object.fromEntries(Object.entries(outsideBefore).filter(([k]) => !k.startsWith('./el-db/')));
    expect(snapshot(outside)).toEqual(keptOutside);

    el = await EthereumJs.start(join(outside, 'el'), { dataDir: db, enginePort, jwtFile: el.jwtFile });
    expect(readdirSync(db).length).toBeGreaterThan(0);
  });
});

describe('reset: never outside the home and execution.db_path', () => {
  it('refuses a symlinked data/, db_path "..", "/", the home, config/, a symlink to the home\'s parent, a symlinked data/cache; removes a symlinked entry, not its target', async () => {
    const outside = newDir();
    writeFileSync(join(outside, 'canary'), 'must survive\n');
    const engine = `http://127.0.0.1:${await freePort()}`;
    const evmHome = (dbPath: string) => filledHome('escape', true, { 'execution.db_path': dbPath, 'execution.engine_url': engine });

    const linkedData = filledHome('escape', true);
    const realData = join(linkedData, 'data');
    const moved = join(outside, 'moved-data');
    mkdirSync(moved);
    writeFileSync(join(moved, 'canary'), 'must survive\n');
    rmSync(realData, { recursive: true });
    symlinkSync(moved, realData);

    const linkedEntry = filledHome('escape', true);
    const target = join(outside, 'store-elsewhere');
    mkdirSync(target);
    writeFileSync(join(target, 'canary'), 'must survive\n');
    symlinkSync(target, join(linkedEntry, 'data', 'local-da'));

    const dotdot = evmHome('..');
    const root = evmHome('/');
    const itself = evmHome('.');
    const config = evmHome('config');
    const parentLink = evmHome('');
    symlinkSync(join(parentLink, '..'), join(outside, 'parent-link'));
    const linkedCache = evmHome(join(outside, 'fine-db'));
    mkdirSync(join(outside, 'fine-db'));
    const cacheTarget = join(outside, 'cache-elsewhere');
    mkdirSync(cacheTarget);
    writeFileSync(join(cacheTarget, 'canary'), 'must survive\n');
    rmSync(join(linkedCache, 'data', 'cache'), { recursive: true });
    symlinkSync(cacheTarget, join(linkedCache, 'data', 'cache'));
    const notAHome = join(outside, 'not-a-home');
    mkdirSync(notAHome);
    writeFileSync(join(notAHome, 'precious'), 'x\n');

    const outsideBefore = snapshot(outside);
    const before = [linkedData, dotdot, root, itself, config, parentLink, linkedCache].map(snapshot);
    // Through the command where it matters most; the other refusals through planReset, the same rules in-process.
    const runs = await Promise.all([
      reset('soft', linkedData, '--yes', '--json'),
      reset('evm', dotdot, '--yes', '--json'),
      reset('evm', linkedCache, '--yes', '--json'),
      reset('hard', '/', '--dry-run', '--json'),
    ]);
    const cli: Array<[string, RegExp]> = [
      ['UNSAFE_PATH', /data is a symlink to .*moved-data, outside the home/],
      ['UNSAFE_PATH', /as the execution database: it holds the node home/],
      ['UNSAFE_PATH', /refusing to delete .*data\/cache\/canary \(really .*cache-elsewhere\/canary\): it is outside/],
      ['NOT_A_HOME', /^\/ is not a noded home \(config\/node\.yml is missing/],
    ];
    runs.forEach((res, i) => {
      const [code, message] = cli[i]!;
      expect(res.code, `${i}: ${res.stdout}${res.stderr}`).toBe(1);
      expect(errorOf(res.stdout), String(i)).toMatchObject({ code, message: expect.stringMatching(message), exit: 1 });
    });
    const refusals: Array<[() => Promise<unknown>, string, RegExp, number]> = [
      [
        () => planReset('evm', { home: root }),
        'UNSAFE_PATH',
        /refusing to use \/ as the execution database: it is the system directory \/\. Give the directory/,
        1,
      ],
      [() => planReset('evm', { home: itself }), 'UNSAFE_PATH', /as the execution database: it is the node home/, 1],
      [() => planReset('evm', { home: config }), 'UNSAFE_PATH', /as the execution database: it is inside the home's config\/ \(keys\)/, 1],
      [
        () => planReset('evm', { home: parentLink, executionDb: join(outside, 'parent-link') }),
        'UNSAFE_PATH',
        /parent-link \(really .*\) as the execution database: it holds the node home/,
        1,
      ],
      [() => planReset('evm', { home: parentLink }), 'EXECUTION_DB_UNSET', /set execution.db_path in node.yml, or give --execution-db DIR/, 2],
      [() => planReset('hard', { home: notAHome }), 'NOT_A_HOME', /is not a noded home/, 1],
    ];
    for (const [plan, code, message, exit] of refusals) {
      const err = await plan().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResetError);
      expect(err).toMatchObject({ code, exit, message: expect.stringMatching(message) });
    }
    expect(snapshot(outside)).toEqual(outsideBefore);
    expect([linkedData, dotdot, root, itself, config, parentLink, linkedCache].map(snapshot)).toEqual(before);

    // A home's own entry that is a symlink: the link goes, what it points to stays.
    const res = await reset('soft', linkedEntry, '--yes');
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/local-da — symlink to .*store-elsewhere \(the link is removed, not what it points to\)/);
    expect(readdirSync(join(linkedEntry, 'data'))).toEqual([]);
    expect(readFileSync(join(target, 'canary'), 'utf8')).toBe('must survive\n');
  });

  it('hard refuses a home that holds your home directory', async () => {
    const home = filledHome('holds-home', true);
    const saved = process.env.HOME;
    // os.homedir() is $HOME on POSIX: here it lies inside the noded home.
    process.env.HOME = join(home, 'users', 'me');
    const err = await planReset('hard', { home }).catch((e: unknown) => e);
    process.env.HOME = saved;
    expect(err).toBeInstanceOf(ResetError);
    expect(err).toMatchObject({
      code: 'UNSAFE_PATH',
      exit: 1,
      message: `refusing to reset ${home}: it is / or holds your home directory; give a node its own home directory (--home DIR); nothing was deleted`,
    });
  });

  it('removeEntry and emptyDir never follow a link and refuse an entry whose real place is outside the roots', () => {
    const root = newDir();
    const outside = newDir();
    writeFileSync(join(outside, 'canary'), 'x');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    symlinkSync(outside, join(root, 'a', 'b', 'out'));
    symlinkSync(join(outside, 'canary'), join(root, 'a', 'file-link'));
    expect(removeEntry(join(root, 'a'), [root])).toBe(4); // a, a/b, a/b/out (the link), a/file-link
    expect(readFileSync(join(outside, 'canary'), 'utf8')).toBe('x');
    symlinkSync(outside, join(root, 'via'));
    expect(() => removeEntry(join(root, 'via', 'canary'), [root])).toThrow(UnsafePathError);
    expect(() => emptyDir(join(root, 'via'), [root])).toThrow(/outside/);
    expect(() => removeEntry(root, [root])).toThrow(UnsafePathError);
    expect(readFileSync(join(outside, 'canary'), 'utf8')).toBe('x');
  });
});

/** An execution client's database as each client lays it out (see src/reset/execution-db.ts for where each comes from). */
const CLIENT_LAYOUTS: Record<string, string[]> = {
  geth: ['geth/chaindata/CURRENT', 'geth/nodekey', 'keystore/.keep'],
  reth: ['db/mdbx.dat', 'db/database.version', 'static_files/static_file_headers_0_499999', 'reth.toml'],
  EthereumJS: ['devnet/chain/CURRENT', 'devnet/state/CURRENT', 'devnet/meta/CURRENT'],
  Nethermind: ['mainnet/blocks/CURRENT', 'mainnet/headers/CURRENT', 'mainnet/state/CURRENT', 'mainnet/receipts/CURRENT'],
};

function clientDb(parent: string, client: string): string {
  const db = join(parent, `${client}-db`);
  for (const file of CLIENT_LAYOUTS[client]!) {
    mkdirSync(join(db, file, '..'), { recursive: true });
    writeFileSync(join(db, file), `${client}\n`);
  }
  return db;
}

describe('reset evm: only an execution database, by its real path', () => {
  it('a symlinked database: the plan shows and the reset empties the real directory; the link stays', async () => {
    const outside = newDir();
    const real = clientDb(outside, 'geth');
    const link = join(outside, 'el-link');
    symlinkSync(real, link);
    const home = filledHome('evm-link', true, { 'execution.db_path': link, 'execution.engine_url': `http://127.0.0.1:${await freePort()}` });
    const dry = await reset('evm', home, '--dry-run', '--json');
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).deleted).toEqual([`${real}/*`, `${join(home, 'data', 'cache')}/*`]);
    const res = await reset('evm', home, '--yes');
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain(
      `${real}/* (everything inside; the directory stays) — the execution client's database, linked from ${link} (geth: geth/chaindata)`,
    );
    expect(res.stdout).toContain(`deleted ${real}/*`);
    expect(res.stdout).toContain(`it rebuilds its database in ${real}`);
    expect(readdirSync(real)).toEqual([]);
    expect(readlinkSync(link)).toBe(real);
  });

  it('refuses every system directory, one holding it, and a link to one, whatever --force says', async () => {
    const home = filledHome('evm-system', true, { 'execution.engine_url': `http://127.0.0.1:${await freePort()}` });
    const lib = readdirSync('/')
      .filter((name) => name.startsWith('lib'))
      .map((name) => `/${name}`);
    const system = ['/', '/etc', '/usr', '/var', '/bin', '/sbin', '/boot', '/home', '/opt', '/srv', '/proc', '/sys', '/dev', ...lib];
    for (const dir of system) {
      const err = await planReset('evm', { home, executionDb: dir, force: true }).catch((e: unknown) => e);
      expect(err, dir).toBeInstanceOf(ResetError);
      // /lib on a merged-/usr system is a link to /usr/lib: named as given and as it really is.
      expect(err, dir).toMatchObject({
        code: 'UNSAFE_PATH',
        exit: 1,
        message: expect.stringMatching(/as the execution database: it (is|holds) the system directory \//),
      });
      expect((err as Error).message, dir).toMatch(new RegExp(`^refusing to use ${dir.replace(/\//g, '\\/')}( \\(really \\S+\\))? as`));
    }
    const outside = newDir();
    symlinkSync('/etc', join(outside, 'etc-link'));
    const [viaLink, usr] = await Promise.all([
      reset('evm', home, '--yes', '--force', '--json', '--execution-db', join(outside, 'etc-link')),
      reset('evm', home, '--yes', '--json', '--execution-db', '/usr'),
    ]);
    expect(viaLink.code, viaLink.stdout + viaLink.stderr).toBe(1);
    expect(errorOf(viaLink.stdout)).toEqual({
      code: 'UNSAFE_PATH',
      exit: 1,
      message: `refusing to use ${join(outside, 'etc-link')} (really /etc) as the execution database: it is the system directory /etc. Give the directory your execution client keeps its database in (its --datadir) with --execution-db or execution.db_path; nothing was deleted`,
    });
    expect(usr.code).toBe(1);
    expect(errorOf(usr.stdout).message).toMatch(/^refusing to use \/usr as the execution database: it is the system directory \/usr\./);
  });

  it('recognises geth, reth, EthereumJS and Nethermind databases; refuses anything else unless --force, which then empties it', async () => {
    const outside = newDir();
    const engine = `http://127.0.0.1:${await freePort()}`;
    const home = filledHome('evm-signs', true, { 'execution.engine_url': engine });
    const signs: Record<string, RegExp> = {
      geth: /\(geth: geth\/chaindata\)$/,
      reth: /\(reth: db, static_files\)$/,
      EthereumJS: /\(EthereumJS: devnet\/chain, devnet\/state\)$/,
      Nethermind: /\(Nethermind: mainnet\/blocks, mainnet\/headers, mainnet\/state\)$/,
    };
    for (const [client, sign] of Object.entries(signs)) {
      const plan = await planReset('evm', { home, executionDb: clientDb(outside, client) });
      expect(plan.targets[0]!.what, client).toMatch(sign);
    }

    const notADb = join(outside, 'projects');
    mkdirSync(join(notADb, 'site'), { recursive: true });
    writeFileSync(join(notADb, 'site', 'index.html'), '<p>mine</p>\n');
    const before = snapshot(notADb);
    const refused = await reset('evm', home, '--yes', '--json', '--execution-db', notADb);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(errorOf(refused.stdout)).toEqual({
      code: 'NOT_EXECUTION_DB',
      exit: 1,
      message: expect.stringMatching(
        new RegExp(
          `^${notADb} does not look like an execution client's database \\(none of: geth geth/chaindata; .*\\); check --execution-db or execution.db_path, or pass --force if you are sure; nothing was deleted$`,
        ),
      ),
    });
    expect(snapshot(notADb)).toEqual(before);

    const forced = await reset('evm', home, '--yes', '--force', '--json', '--execution-db', notADb);
    expect(forced.code, forced.stdout + forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      deleted: [`${notADb}/*`, `${join(home, 'data', 'cache')}/*`],
      notes: expect.arrayContaining([`${notADb} does not look like an execution client's database; going ahead because of --force`]),
    });
    expect(readdirSync(notADb)).toEqual([]);
  });
});

describe('reset --dry-run', () => {
  it('soft, hard and evm list what they would delete and delete nothing', async () => {
    const outside = newDir();
    const db = join(outside, 'db');
    mkdirSync(join(db, 'geth', 'chaindata'), { recursive: true });
    writeFileSync(join(db, 'geth', 'chaindata', 'CURRENT'), 'MANIFEST-000001\n');
    const home = filledHome('dry-1', true, { 'execution.db_path': db, 'execution.engine_url': `http://127.0.0.1:${await freePort()}` });
    const [homeBefore, outsideBefore] = [snapshot(home), snapshot(outside)];
    const [soft, hard, evm] = await Promise.all([
      reset('soft', home, '--dry-run', '--json'),
      reset('hard', home, '--dry-run'),
      reset('evm', home, '--dry-run', '--json'),
    ]);
    expect(soft.code, soft.stderr).toBe(0);
    expect(JSON.parse(soft.stdout)).toMatchObject({ action: 'soft', dry_run: true, deleted: [join(home, 'data', 'store'), join(home, 'data', 'cache')] });
    expect(hard.code, hard.stderr).toBe(0);
    expect(hard.stdout).toContain('Would delete:');
    expect(hard.stdout).toContain('Would then run: noded init --chain-id dry-1 --aggregator');
    expect(hard.stdout).toContain('Dry run: nothing was deleted.');
    expect(evm.code, evm.stderr).toBe(0);
    expect(JSON.parse(evm.stdout)).toMatchObject({ action: 'evm', dry_run: true, deleted: [`${db}/*`, `${join(home, 'data', 'cache')}/*`] });
    expect(snapshot(home)).toEqual(homeBefore);
    expect(snapshot(outside)).toEqual(outsideBefore);
  });
});

describe('reset on a terminal', () => {
  it('asks, listing what it deletes: y deletes (shown as a listr2 task list), anything else deletes nothing', async () => {
    const [yes, no] = [filledHome('tty-1', true), filledHome('tty-2', true)];
    const noBefore = snapshot(no);
    const onTty = (home: string, answer: string) =>
      spawnSync('script', ['-qec', `stty cols 200; ${process.execPath} ${RUN_JS} reset soft --home ${home}`, '/dev/null'], {
        input: `${answer}\n`,
        encoding: 'utf8',
        env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NO_COLOR' && k !== 'FORCE_COLOR')),
        timeout: 30_000,
      });
    const [y, n] = [onTty(yes, 'y'), onTty(no, 'n')];
    expect(y.status, y.stdout).toBe(0);
    expect(y.stdout).toContain(`${join(yes, 'data', 'store')} — the block store`);
    expect(y.stdout).toContain('Delete these 2 paths? [y/N]');
    expect(y.stdout).toMatch(new RegExp(`\\u001b\\[32m✔\\u001b\\[39m deleted ${join(yes, 'data', 'store')}`));
    expect(readdirSync(join(yes, 'data'))).toEqual([]);
    expect(n.status, n.stdout).toBe(1);
    expect(n.stdout).toContain('aborted, nothing deleted');
    expect(n.stdout, 'no stack trace').not.toMatch(/\n\s+at /);
    expect(snapshot(no)).toEqual(noBefore);
  });
});
