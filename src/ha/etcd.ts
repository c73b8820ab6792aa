import { readFileSync } from 'node:fs';
import { noop } from 'cockatiel';
import { Etcd3, type IOptions } from 'etcd3';
import { resolveHomePath, splitList, type Config } from '../config/index.js';

/** How to reach etcd, from the ha section (file paths already resolved under the home). */
export interface EtcdSettings {
  endpoints: string[];
  caFile: string;
  certFile: string;
  keyFile: string;
  username: string;
  password: string;
}

/** The etcd settings of a home's ha section (the node's and `noded ha`'s: one auth). */
export function etcdSettingsOf(ha: Config['ha'], homeDir: string): EtcdSettings {
  const path = (file: string) => (file ? resolveHomePath(homeDir, file) : '');
  return {
    endpoints: splitList(ha.etcd_endpoints),
    caFile: path(ha.tls_ca_file),
    certFile: path(ha.tls_cert_file),
    keyFile: path(ha.tls_key_file),
    username: ha.username,
    password: ha.password,
  };
}

/** ha.key_prefix, or /noded/<chain_id>. */
export const haKeyPrefix = (config: Config, chainId: string): string => config.ha.key_prefix || `/noded/${chainId}`;

/** How long the start-up check waits for etcd to answer. */
const REACHABLE_TIMEOUT_MS = 5000;

function readPem(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`ha.${key}: cannot read ${file}: ${(err as Error).message}; expected a PEM file`);
  }
}

/**
 * An etcd client that does not retry on its own: the coordinator's loops
 * retry with the node's one backoff (src/util/retry.ts), and etcd3's default
 * circuit breaker would refuse every call for 5 s after an etcd restart.
 */
export function createEtcdClient(s: EtcdSettings): Etcd3 {
  const options: IOptions = {
    hosts: s.endpoints,
    dialTimeout: REACHABLE_TIMEOUT_MS,
    faultHandling: { host: () => noop, global: noop },
  };
  if (s.caFile) {
    options.credentials = {
      rootCertificate: readPem(s.caFile, 'tls_ca_file'),
      ...(s.certFile ? { certChain: readPem(s.certFile, 'tls_cert_file'), privateKey: readPem(s.keyFile, 'tls_key_file') } : {}),
    };
  }
  if (s.username) options.auth = { username: s.username, password: s.password };
  return new Etcd3(options);
}

/** Which ha.* settings an etcd error points at: the user and password, the TLS files, or the endpoints themselves. */
export type EtcdFailureCause = 'auth' | 'tls' | 'unreachable';

export function etcdFailureCause(message: string): EtcdFailureCause {
  return /auth|permission|user|password|token/i.test(message) ? 'auth' : /certificate|ssl|tls|handshake/i.test(message) ? 'tls' : 'unreachable';
}

const HINT: Record<EtcdFailureCause, string> = {
  auth: 'check ha.username and ha.password',
  tls: 'check ha.tls_ca_file, ha.tls_cert_file and ha.tls_key_file',
  unreachable: 'expected a running etcd v3 answering gRPC there; check ha.etcd_endpoints',
};

/**
 * Start-up's check that etcd answers (a status call to each endpoint, then a
 * read, which also checks the credentials): a bad or unreachable etcd is a
 * clear error naming the endpoint and what was expected, not a node that
 * stands by for ever.
 */
export async function checkEtcdReachable(etcd: Etcd3, s: EtcdSettings, key: string): Promise<void> {
  const deadline = () => ({ deadline: Date.now() + REACHABLE_TIMEOUT_MS });
  try {
    await etcd.get(key).options(deadline()).string();
  } catch (err) {
    const message = (err as Error).message;
    const hint = HINT[etcdFailureCause(message)];
    throw Object.assign(
      new Error(`etcd at ${s.endpoints.join(', ')} did not answer a read of ${key} within ${REACHABLE_TIMEOUT_MS / 1000}s (${message}): ${hint}`),
      {
        code: 'HA_ETCD_UNREACHABLE',
      },
    );
  }
}
