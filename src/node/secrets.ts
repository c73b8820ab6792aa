import { readFileSync } from 'node:fs';
import { homePaths, resolveHomePath, type Config } from '../config/index.js';
// jwt.js alone, not the EVM executor's index: a kv node loads none of the EVM client.
import { readJwtSecret } from '../exec/evm/jwt.js';

/**
 * Every secret of a home in the forms a line could carry it, for the logger
 * to scrub: the DA token, the executor's bearer token, the etcd password, the Engine API JWT secret, and the private keys of
 * signer.json and node_key.json (base64 as stored, and hex). Files that are
 * missing or unreadable add nothing: start-up reports them itself.
 */
export function logSecrets(home: string, config: Config): string[] {
  const secrets = [config.da.auth_token, config.execution.grpc_auth_token, config.ha.password];
  try {
    const jwt = Buffer.from(readJwtSecret(resolveHomePath(home, config.execution.jwt_secret_file))).toString('hex');
    secrets.push(jwt, jwt.toUpperCase());
  } catch {
    // No JWT secret: nothing of it to leak.
  }
  const paths = homePaths(home);
  for (const file of [paths.signerFile, paths.nodeKeyFile]) {
    try {
      const stored = (JSON.parse(readFileSync(file, 'utf8')) as { priv_key?: unknown }).priv_key;
      const privKey = typeof stored === 'string' ? stored : '';
      secrets.push(privKey, Buffer.from(privKey, 'base64').toString('hex'));
    } catch {
      // Unreadable key file: Node.init says so.
    }
  }
  return secrets.filter((s) => s !== '');
}
