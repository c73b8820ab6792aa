import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/index.js';
import { configErrorOf } from './helpers.js';

const problemsOf = (yaml: string) => configErrorOf(() => parseConfigText(yaml, 'node.yml')).message;

describe('ha config', () => {
  it('reads endpoints, the lease TTL in ms and the credentials', () => {
    const { ha } = parseConfigText(
      'ha:\n  enabled: true\n  etcd_endpoints: http://127.0.0.1:2379, https://10.0.0.2:2379\n  lease_ttl: 3s\n  username: noded\n  password: s3cret-pass\n',
      'node.yml',
    );
    expect(ha).toMatchObject({ enabled: true, etcd_endpoints: 'http://127.0.0.1:2379, https://10.0.0.2:2379', lease_ttl: 3_000, username: 'noded' });
  });

  it('refuses an endpoint that is not an http(s) URL, naming it', () => {
    expect(problemsOf('ha:\n  etcd_endpoints: http://127.0.0.1:2379,127.0.0.1:2380\n')).toBe(
      'node.yml: ha.etcd_endpoints: got "http://127.0.0.1:2379,127.0.0.1:2380", expected comma-separated http(s) URLs like http://127.0.0.1:2379: "127.0.0.1:2380" is not an http(s) URL',
    );
  });

  it('needs an endpoint when enabled, a TTL in whole seconds, and the TLS and user pairs together', () => {
    const message = problemsOf('ha:\n  enabled: true\n  lease_ttl: 1500ms\n  tls_cert_file: client.pem\n  username: noded\n');
    expect(message).toContain('ha.etcd_endpoints');
    expect(message).toContain('at least one etcd URL, like http://127.0.0.1:2379, while ha.enabled is true');
    expect(message).toContain('ha.lease_ttl');
    expect(message).toContain('a whole number of seconds, like 2s');
    expect(message).toContain('ha.tls_key_file');
    expect(message).toContain('ha.password');
  });

  it('refuses an advertised RPC address that is not a URL', () => {
    const message = problemsOf('ha:\n  advertise_rpc: 10.0.0.2:7331\n');
    expect(message).toContain('ha.advertise_rpc');
    expect(message).toContain('empty, or an http(s) URL like http://10.0.0.2:7331');
  });

  it('refuses a key prefix that is not an absolute etcd path', () => {
    expect(problemsOf('ha:\n  key_prefix: noded/\n')).toContain('a key prefix starting with / and not ending with /, like /noded/my-chain');
  });
});
