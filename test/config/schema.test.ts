import { describe, expect, it } from 'vitest';
import { configKeys, configSchema, defaultConfig, parseConfigText, renderNodeYml } from '../../src/config/index.js';
import { configErrorOf } from './helpers.js';

describe('defaults', () => {
  it('match DESIGN §5, durations in milliseconds', () => {
    expect(defaultConfig()).toEqual({
      node: {
        aggregator: false,
        block_time: 1_000,
        lazy_mode: false,
        lazy_block_interval: 60_000,
        max_pending_blocks: 100,
        mempool_max_txs: 10_000,
        based: false,
      },
      da: {
        address: 'http://127.0.0.1:26658',
        auth_token: '',
        namespace: '',
        data_namespace: '',
        gas_price: -1,
        max_gas_price: 0,
        gas_multiplier: 1.2,
        request_timeout: 30_000,
        unready_after: 60_000,
        block_time: 6_000,
        local: false,
        forced_inclusion_namespace: '',
        max_blob_size: 1_974_272,
        inclusion_window: 0,
      },
      p2p: { listen_address: '/ip4/0.0.0.0/tcp/7676', peers: '' },
      rpc: {
        address: '127.0.0.1:7331',
        status_address: '127.0.0.1:26657',
        header_timeout: 10_000,
        request_timeout: 30_000,
        idle_timeout: 65_000,
        max_connections: 1_000,
        cors_allowed_origins: '',
        allowed_hosts: '',
      },
      execution: {
        type: 'kv',
        engine_url: 'http://127.0.0.1:8551',
        eth_url: 'http://127.0.0.1:8545',
        jwt_secret_file: 'config/jwt.hex',
        fee_recipient: '0x0000000000000000000000000000000000000000',
        db_path: '',
        abci_address: 'tcp://127.0.0.1:26659',
        grpc_address: 'http://127.0.0.1:50051',
        grpc_auth_token: '',
      },
      instrumentation: { prometheus: false, prometheus_listen_addr: '127.0.0.1:26660' },
      log: { level: 'info', format: 'text', file: '', max_size: 100 * 1024 * 1024, max_files: 5, status_interval: 30_000 },
      ha: {
        enabled: false,
        etcd_endpoints: '',
        node_id: '',
        advertise_rpc: '',
        lease_ttl: 2_000,
        key_prefix: '',
        tls_ca_file: '',
        tls_cert_file: '',
        tls_key_file: '',
        username: '',
        password: '',
      },
      supervise: [],
    });
  });

  it('are a fresh object each time', () => {
    const config = defaultConfig();
    config.node.block_time = 5;
    expect(defaultConfig().node.block_time).toBe(1_000);
  });
});

describe('configKeys', () => {
  it('lists every key of the schema once, with flag, env, kind, YAML default and help', () => {
    const keys = configKeys();
    expect(keys).toHaveLength(Object.values(defaultConfig()).reduce((n, section) => n + Object.keys(section).length, 0));
    expect(new Set(keys.map((k) => k.path)).size).toBe(keys.length);
    expect(keys.find((k) => k.path === 'node.block_time')).toEqual({
      section: 'node',
      key: 'block_time',
      path: 'node.block_time',
      flag: 'node.node.block_time',
      env: 'NODED_NODE_BLOCK_TIME',
      kind: 'duration',
      default: '1s',
      description: 'Block time; raising it reduces CPU use',
    });
    expect(keys.find((k) => k.path === 'rpc.status_address')?.env).toBe('NODED_RPC_STATUS_ADDRESS');
    expect(keys.find((k) => k.path === 'execution.type')).toMatchObject({ kind: 'enum', options: ['kv', 'evm', 'abci', 'grpc'], default: 'kv' });
    expect(keys.find((k) => k.path === 'node.lazy_block_interval')?.default).toBe('60s');
    expect(keys.find((k) => k.path === 'da.gas_price')).toMatchObject({ kind: 'number', default: '-1' });
    expect(keys.find((k) => k.path === 'node.aggregator')).toMatchObject({ kind: 'bool', default: 'false' });
    expect(keys.find((k) => k.path === 'node.max_pending_blocks')).toMatchObject({ kind: 'int', default: '100' });
    for (const key of keys) expect(key.description, key.path).toMatch(/^[A-Z].{10,}[^.]$/);
  });
});

describe('configSchema', () => {
  it('is strict at every level and fills missing sections with defaults', () => {
    expect(configSchema.parse({})).toEqual(defaultConfig());
    expect(configSchema.safeParse({ watchdog: [] }).success).toBe(false);
    expect(configSchema.safeParse({ supervise: [{ name: 'el', command: 'reth', bogus: 1 }] }).success).toBe(false);
    expect(configSchema.safeParse({ node: { blok_time: '1s' } }).success).toBe(false);
  });
});

describe('renderNodeYml', () => {
  it('reads back as the defaults', () => {
    expect(parseConfigText(renderNodeYml(), 'node.yml')).toEqual(defaultConfig());
  });

  it('writes every key under a comment with its help and default, durations with their unit', () => {
    const text = renderNodeYml();
    const lines = text.split('\n');
    for (const key of configKeys()) {
      const comment = lines.findIndex((line) => line.startsWith(`  # ${key.description} (`));
      expect(comment, key.path).toBeGreaterThan(0);
      expect(lines[comment], key.path).toContain(`default: ${key.default === '' ? '""' : key.default})`);
      expect(lines[comment + 1], key.path).toMatch(new RegExp(`^  ${key.key}: `));
    }
    expect(text).toContain('  block_time: 1s\n');
    expect(text).toContain('  lazy_block_interval: 60s\n');
    expect(text).toContain('  auth_token: ""\n');
    expect(text).toContain('  fee_recipient: "0x0000000000000000000000000000000000000000"\n');
  });

  it('writes overrides, durations given as text or milliseconds', () => {
    const text = renderNodeYml({
      'node.aggregator': true,
      'node.block_time': 250,
      'da.request_timeout': '1m',
      'p2p.peers': '/ip4/10.0.0.5/tcp/7676/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN',
    });
    const config = parseConfigText(text, 'node.yml');
    expect(config.node.aggregator).toBe(true);
    expect(config.node.block_time).toBe(250);
    expect(text).toContain('  block_time: 250ms\n');
    expect(config.da.request_timeout).toBe(60_000);
    expect(config.p2p.peers).toBe('/ip4/10.0.0.5/tcp/7676/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN');
  });

  it('refuses an override that would not load', () => {
    expect(configErrorOf(() => renderNodeYml({ 'rpc.address': 'nowhere' })).message).toContain('rpc.address: got "nowhere"');
  });
});
