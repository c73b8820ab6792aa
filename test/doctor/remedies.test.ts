import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configKeys, defaultPorts, freePortAfter, loadConfig, nodeListenerMove, portOf, tryBind, type ConfigPath } from '../../src/config/index.js';
import { initHome } from '../../src/home/index.js';
import { CHECKS, buildContext, runCheck } from '../../src/doctor/index.js';
import { Daemon, freePort, killAll, squatPort, tempHome } from '../helpers/daemon.js';

/**
 * Every `--node.<section>.<key> <value>` the code can print — written in the
 * sources, or built by the suggestion helper for a taken port — is a flag that
 * exists with a value its key takes, and a port it names is free and no other
 * service's default.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dirs: Array<ReturnType<typeof tempHome>> = [];
const squatters: Array<{ kill: () => unknown }> = [];
afterEach(async () => {
  await killAll();
  for (const s of squatters.splice(0)) s.kill();
});
afterAll(() => {
  for (const d of dirs) d.cleanup();
});
const newDir = () => {
  const d = tempHome('noded-remedy-');
  dirs.push(d);
  return d.dir;
};

const FLAG_KEYS = new Map(configKeys().map((k) => [k.flag, k]));
/** `--node.<key> <value>`, the value a double-quoted string or a run up to a space, `)`, `,`, `;`, a quote or a backtick. */
const SUGGESTION = /--(node\.[a-z0-9_]+\.[a-z0-9_]+)(?: ("[^"]*"|[^\s`'),;]+))?/g;

/** The value after a flag, when it is one (not the next word of the sentence): a literal, a number, an address, or an option of the key. */
function valueOf(flag: string, token: string | undefined): string | undefined {
  // A placeholder (`http://<listen>`) shows a form, not a value to paste.
  if (token === undefined || token.includes('<')) return undefined;
  if (token.startsWith('"')) return token.slice(1, -1);
  if (/^([0-9/]|https?:|tcp:|unix:)/.test(token)) return token;
  return FLAG_KEYS.get(flag)?.options?.includes(token) ? token : undefined;
}

/** What is wrong with one suggestion; undefined when it works. */
async function problem(flag: string, value: string | undefined, mustBeFree: boolean): Promise<string | undefined> {
  const key = FLAG_KEYS.get(flag);
  if (!key) return `--${flag} is no flag of the schema`;
  if (value === undefined) return undefined;
  try {
    loadConfig({ home: emptyHome, flags: { [key.path]: value }, env: {} });
  } catch (err) {
    return `--${flag} ${value} does not parse: ${(err as Error).message}`;
  }
  const port = portOf(value);
  if (port === undefined || port === 0) return undefined;
  if (defaultPorts().has(port) && port !== portOf(key.default)) return `--${flag} ${value} names ${port}, the default port of another service`;
  if (mustBeFree && !(await tryBind('127.0.0.1', port)).free) return `--${flag} ${value} names port ${port}, which is taken`;
  return undefined;
}

/** Every suggestion in a printed text: at least one, each one working. */
async function expectWorkingSuggestions(text: string): Promise<string[]> {
  const found = [...text.matchAll(SUGGESTION)].filter((m) => m[2] !== undefined);
  expect(found.length, `no --node.<key> <value> suggestion in:\n${text}`).toBeGreaterThan(0);
  for (const m of found) expect(await problem(m[1]!, valueOf(m[1]!, m[2]), true), text).toBeUndefined();
  return found.map((m) => m[0]);
}

const emptyHome = newDir();

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !f.includes(`${join('src', 'types', 'gen')}`));
}

describe('remedies in the sources', () => {
  const files = ['src', 'commands', 'cli'].flatMap(sourceFiles);

  it('name flags that exist, with values that parse and ports that are no other default', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(SUGGESTION)) {
        checked++;
        const p = await problem(m[1]!, valueOf(m[1]!, m[2]), false);
        if (p) problems.push(`${relative(ROOT, file)}: ${p}`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(problems).toEqual([]);
  });

  it('build a flag with a computed value only through the suggestion helper (src/config/suggest.ts)', () => {
    const computed = /--(?:node\.[a-z0-9_]+\.[a-z0-9_]+|\$\{[^}]+\}) \$\{/;
    const offenders = files.filter((f) => !f.endsWith(join('config', 'suggest.ts')) && computed.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });
});

const LISTENER_KEYS: ConfigPath[] = ['rpc.address', 'rpc.status_address', 'p2p.listen_address', 'da.address', 'instrumentation.prometheus_listen_addr'];

describe('the suggestion helper', () => {
  it("the default ports are the schema's", () => {
    expect([...defaultPorts()].sort((a, b) => a - b)).toEqual([7331, 7676, 8545, 8551, 26657, 26658, 26659, 26660, 50051]);
  });

  it.each(LISTENER_KEYS)('moving %s off its default port: a free port that is no default, in the form the key takes', async (path) => {
    const key = configKeys().find((k) => k.path === path)!;
    const from = portOf(key.default)!;
    const free = await freePortAfter('127.0.0.1', from);
    expect(free).toBeDefined();
    await expectWorkingSuggestions(nodeListenerMove(path, key.default).to(free!));
  });

  it('past the DA port 26658 it skips 26659 (ABCI) and 26660 (metrics)', async () => {
    expect(await freePortAfter('127.0.0.1', 26658)).toBeGreaterThan(26660);
  });
});

/** A free port, then held by a process other than the node until the test ends. */
async function squat(): Promise<number> {
  const port = await freePort();
  const child = await squatPort(port);
  squatters.push({ kill: () => child.kill('SIGKILL') });
  return port;
}

describe('remedies printed for a taken port', () => {
  it.each([
    ['da.address', (port: number) => ['--node.da.local', '--node.da.address', `http://127.0.0.1:${port}`]],
    ['rpc.address', (port: number) => ['--node.rpc.address', `127.0.0.1:${port}`]],
    ['p2p.listen_address', (port: number) => ['--node.p2p.listen_address', `/ip4/127.0.0.1/tcp/${port}`]],
  ] as const)('noded start with %s on a taken port: exit 1, and the suggested flag works', async (key, flags) => {
    const port = await squat();
    const home = newDir();
    initHome({ home, chainId: 'remedy-1', aggregator: true, force: false });
    const node = await Daemon.start(home, [...flags(port)], { wait: false });
    const code = await node.exited;
    expect(code, node.stderr).toBe(1);
    // oclif wraps an error's lines at spaces, each continued after " › ".
    const [suggestion] = await expectWorkingSuggestions(node.stderr.replace(/\s*\n\s*›\s*/g, ' '));
    expect(suggestion).toContain(`--node.${key} `);
  });

  it("doctor's ports check: the remedy moves the node to a free port that is no default", async () => {
    const port = await squat();
    const home = newDir();
    initHome({ home, chainId: 'remedy-2', aggregator: true, force: false });
    const ctx = buildContext({
      home,
      env: {},
      flags: { 'rpc.address': `127.0.0.1:${port}`, 'rpc.status_address': '127.0.0.1:0', 'p2p.listen_address': '/ip4/127.0.0.1/tcp/0' },
    });
    const result = await runCheck(
      CHECKS.find((c) => c.id === 'ports')!,
      ctx,
    );
    expect(result.status, result.message).toBe('fail');
    const [suggestion] = await expectWorkingSuggestions(result.remedy);
    expect(suggestion).toMatch(/^--node\.rpc\.address 127\.0\.0\.1:\d+$/);
  });
});
