import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initHome } from '../../src/home/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { logSecrets } from '../../src/node/index.js';
import { tempHome } from '../helpers/daemon.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('logSecrets', () => {
  it("gathers the home's secrets in the forms a line could carry them, and a logger given them never writes them", () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    initHome({ home: home.dir, chainId: 'secrets-1', aggregator: true, force: false, config: { 'da.auth_token': 'token-from-node-yml-42' } });
    const jwt = 'c0ffee'.repeat(10) + 'abcd';
    writeFileSync(join(home.dir, 'config', 'jwt.hex'), `0x${jwt.toUpperCase()}\n`);
    const signerKey = (JSON.parse(readFileSync(join(home.dir, 'config', 'signer.json'), 'utf8')) as { priv_key: string }).priv_key;
    const signerHex = Buffer.from(signerKey, 'base64').toString('hex');

    const secrets = logSecrets(home.dir, loadConfig({ home: home.dir }));
    expect(secrets).toEqual(expect.arrayContaining(['token-from-node-yml-42', jwt, jwt.toUpperCase(), signerKey, signerHex]));

    let text = '';
    const logger = createLogger({ level: 'info', format: 'json', destination: { write: (l: string) => (text += l) }, secrets });
    logger
      .child({ module: 'execution' })
      .error({ code: 'ENGINE_AUTH', detail: `secret ${jwt} key ${signerHex}` }, `signer ${signerKey}, token token-from-node-yml-42`);
    for (const s of secrets) expect(text).not.toContain(s);
  });

  it('a home without a JWT file or readable keys adds only what it has', () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    initHome({ home: home.dir, chainId: 'secrets-2', aggregator: false, force: false });
    writeFileSync(join(home.dir, 'config', 'signer.json'), 'not json');
    const secrets = logSecrets(home.dir, loadConfig({ home: home.dir }));
    // The node key alone: base64 and hex.
    expect(secrets).toHaveLength(2);
  });
});
