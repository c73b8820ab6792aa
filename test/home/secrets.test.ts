import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { homeExists, initHome } from '../../src/home/index.js';
import { runCli, tempHome } from '../helpers/daemon.js';

const homes: Array<ReturnType<typeof tempHome>> = [];
const newDir = () => {
  const h = tempHome('noded-home-');
  homes.push(h);
  return h.dir;
};
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('secrets at rest', () => {
  it('noded init writes node.yml and the keys 0600 in a config/ of 0700', async () => {
    const home = newDir();
    const res = await runCli(['init', '--home', home, '--chain-id', 'modes-1']);
    expect(res.code, res.stderr).toBe(0);
    expect(modeOf(join(home, 'config'))).toBe(0o700);
    for (const file of ['node.yml', 'signer.json', 'node_key.json']) expect(modeOf(join(home, 'config', file)), file).toBe(0o600);
  });

  it('init --force over a home made loose by hand tightens it again; it deletes only what noded keeps in data/', () => {
    const home = newDir();
    initHome({ home, chainId: 'modes-2', aggregator: true, force: false });
    chmodSync(join(home, 'config'), 0o755);
    chmodSync(join(home, 'config', 'node.yml'), 0o644);
    mkdirSync(join(home, 'data', 'store'));
    writeFileSync(join(home, 'data', 'store', 'CURRENT'), 'MANIFEST-000001\n');
    writeFileSync(join(home, 'data', 'export.csv'), 'mine\n');
    initHome({ home, chainId: 'modes-2', aggregator: true, force: true, config: { 'da.auth_token': 'secret' } });
    expect(modeOf(join(home, 'config'))).toBe(0o700);
    expect(modeOf(join(home, 'config', 'node.yml'))).toBe(0o600);
    expect(readFileSync(join(home, 'config', 'node.yml'), 'utf8')).toMatch(/auth_token: secret/);
    expect(existsSync(join(home, 'data', 'store'))).toBe(false);
    expect(readFileSync(join(home, 'data', 'export.csv'), 'utf8')).toBe('mine\n');
  });

  it('a directory whose data/ holds only files noded did not make is no home', () => {
    const dir = newDir();
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'export.csv'), 'mine\n');
    expect(homeExists(dir)).toBe(false);
    mkdirSync(join(dir, 'data', 'store'));
    expect(homeExists(dir)).toBe(true);
  });
});
