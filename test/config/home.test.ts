import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_HOME, homePaths, resolveHome, resolveHomePath } from '../../src/config/index.js';

describe('homePaths', () => {
  it('lays out the home as DESIGN §4 says', () => {
    expect(homePaths('/srv/node')).toEqual({
      home: '/srv/node',
      configDir: '/srv/node/config',
      configFile: '/srv/node/config/node.yml',
      genesisFile: '/srv/node/config/genesis.json',
      signerFile: '/srv/node/config/signer.json',
      nodeKeyFile: '/srv/node/config/node_key.json',
      dataDir: '/srv/node/data',
      storeDir: '/srv/node/data/store',
      cacheDir: '/srv/node/data/cache',
      localDaDir: '/srv/node/data/local-da',
      execKvDir: '/srv/node/data/exec-kv',
      execAbciDir: '/srv/node/data/exec-abci',
      pidFile: '/srv/node/data/node.pid',
      logsDir: '/srv/node/logs',
    });
  });
});

describe('resolveHome', () => {
  it('takes the flag, then NODED_HOME, then ~/.node', () => {
    expect(resolveHome('/a', { NODED_HOME: '/b' })).toBe('/a');
    expect(resolveHome(undefined, { NODED_HOME: '/b' })).toBe('/b');
    expect(resolveHome(undefined, {})).toBe(join(homedir(), '.node'));
    expect(resolveHome('', { NODED_HOME: '' })).toBe(join(homedir(), '.node'));
  });

  it('expands a leading ~ and makes relative paths absolute', () => {
    expect(resolveHome('~/chains/a', {})).toBe(join(homedir(), 'chains/a'));
    expect(resolveHome('rel', {})).toBe(join(process.cwd(), 'rel'));
    expect(DEV_HOME).toBe(join(homedir(), '.node-devnet'));
  });
});

describe('resolveHomePath', () => {
  it('puts relative config paths under the home and leaves absolute ones', () => {
    expect(resolveHomePath('/srv/node', 'config/jwt.hex')).toBe('/srv/node/config/jwt.hex');
    expect(resolveHomePath('/srv/node', '/etc/jwt.hex')).toBe('/etc/jwt.hex');
    expect(resolveHomePath('/srv/node', '~/jwt.hex')).toBe(join(homedir(), 'jwt.hex'));
  });
});
