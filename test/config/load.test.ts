import { describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, parseConfigText } from '../../src/config/index.js';
import { configErrorOf, useTempHome, writeNodeYml } from './helpers.js';

const tempHome = useTempHome();

describe('loadConfig', () => {
  it('uses the defaults when node.yml is missing', () => {
    expect(loadConfig({ home: tempHome(), env: {} })).toEqual(defaultConfig());
  });

  it('layers defaults < node.yml < env < flags, each overriding the previous on the same key', () => {
    const home = tempHome();
    expect(loadConfig({ home, env: {} }).node.block_time).toBe(1_000);
    writeNodeYml(home, 'node:\n  block_time: 2s\n');
    expect(loadConfig({ home, env: {} }).node.block_time).toBe(2_000);
    const env = { NODED_NODE_BLOCK_TIME: '3s' };
    expect(loadConfig({ home, env }).node.block_time).toBe(3_000);
    expect(loadConfig({ home, env, flags: { 'node.block_time': '4s' } }).node.block_time).toBe(4_000);
  });

  it('keeps the keys a layer does not set from the layer below', () => {
    const home = tempHome();
    writeNodeYml(home, 'node:\n  aggregator: true\nrpc:\n  address: 127.0.0.1:0\n');
    const config = loadConfig({ home, env: { NODED_RPC_STATUS_ADDRESS: '127.0.0.1:0' }, flags: { 'node.max_pending_blocks': '5' } });
    expect(config.node).toMatchObject({ aggregator: true, block_time: 1_000, max_pending_blocks: 5 });
    expect(config.rpc).toEqual({ ...defaultConfig().rpc, address: '127.0.0.1:0', status_address: '127.0.0.1:0' });
  });

  it('types env and flag text by key: booleans as true/false/1/0, numbers parsed', () => {
    const home = tempHome();
    const env = { NODED_NODE_AGGREGATOR: '1', NODED_DA_LOCAL: 'TRUE', NODED_DA_GAS_PRICE: '0.002', NODED_NODE_MEMPOOL_MAX_TXS: '20' };
    const config = loadConfig({ home, env, flags: { 'node.lazy_mode': true, 'da.gas_multiplier': 1.5, 'node.aggregator': false } });
    expect(config.node).toMatchObject({ aggregator: false, lazy_mode: true, mempool_max_txs: 20 });
    expect(config.da).toMatchObject({ local: true, gas_price: 0.002, gas_multiplier: 1.5 });
  });

  it('ignores empty env vars and undefined flags', () => {
    const config = loadConfig({ home: tempHome(), env: { NODED_NODE_BLOCK_TIME: '' }, flags: { 'node.block_time': undefined } });
    expect(config.node.block_time).toBe(1_000);
  });

  it('reads the hex fee recipient as the text written, not as a YAML number', () => {
    const home = tempHome();
    writeNodeYml(home, 'execution:\n  fee_recipient: 0x00000000000000000000000000000000000000aB\n');
    expect(loadConfig({ home, env: {} }).execution.fee_recipient).toBe('0x00000000000000000000000000000000000000aB');
  });

  it('takes an empty or comment-only file, and an empty section, as defaults', () => {
    expect(parseConfigText('', 'node.yml')).toEqual(defaultConfig());
    expect(parseConfigText('# nothing yet\n', 'node.yml')).toEqual(defaultConfig());
    expect(parseConfigText('node:\n  # block_time: 2s\nda:\n', 'node.yml')).toEqual(defaultConfig());
  });
});

describe('config errors', () => {
  it('names file, line and column of a YAML syntax error', () => {
    const error = configErrorOf(() => parseConfigText('node:\n  block_time: 1s\n  aggregator: [true\n', '/h/config/node.yml'));
    expect(error.code).toBe('CONFIG_SYNTAX');
    expect(error.message).toMatch(/^\/h\/config\/node\.yml:\d+:\d+: invalid YAML: /);
    const duplicate = configErrorOf(() => parseConfigText('node:\n  block_time: 1s\n  block_time: 2s\n', 'node.yml'));
    expect(duplicate.message).toBe('node.yml:3:3: invalid YAML: Map keys must be unique');
  });

  it('reports the line and column from the home file too', () => {
    const home = tempHome();
    const file = writeNodeYml(home, 'node:\n\tblock_time: 1s\n');
    const error = configErrorOf(() => loadConfig({ home, env: {} }));
    expect(error.code).toBe('CONFIG_SYNTAX');
    expect(error.message.startsWith(`${file}:2:1: invalid YAML: `)).toBe(true);
  });

  it('suggests the nearest known key for an unknown one', () => {
    const error = configErrorOf(() => parseConfigText('node:\n  blok_time: 1s\n', 'node.yml'));
    expect(error.code).toBe('CONFIG_UNKNOWN_KEY');
    expect(error.message).toBe('node.yml: unknown key "node.blok_time" — did you mean "node.block_time"?');
  });

  it('suggests the nearest section for an unknown section', () => {
    const error = configErrorOf(() => parseConfigText('nod:\n  block_time: 1s\n', 'node.yml'));
    expect(error.message).toBe('node.yml: unknown section "nod" — did you mean "node"?');
  });

  it("suggests nothing for a key far from every known one, but lists the section's keys", () => {
    const error = configErrorOf(() => parseConfigText('rpc:\n  watchdog: []\nwatchdog: []\n', 'node.yml'));
    expect(error.message).toBe(
      [
        'node.yml: unknown key "rpc.watchdog"; rpc takes address, status_address, header_timeout, request_timeout, idle_timeout, max_connections, cors_allowed_origins, allowed_hosts',
        'node.yml: unknown section "watchdog"; the sections are node, da, p2p, rpc, execution, instrumentation, log, ha, supervise',
      ].join('\n'),
    );
  });

  it('names an unknown flag as a flag', () => {
    const error = configErrorOf(() => loadConfig({ home: tempHome(), env: {}, flags: { 'rpc.adress': '127.0.0.1:1' } }));
    expect(error.message).toBe('flag --node.rpc.adress: unknown key "rpc.adress" — did you mean "rpc.address"?');
  });

  it('names the source of a bad duration: file, env or flag', () => {
    const home = tempHome();
    const file = writeNodeYml(home, 'node:\n  block_time: fast\n');
    expect(configErrorOf(() => loadConfig({ home, env: {} })).message).toBe(`${file}: node.block_time: got "fast", expected a duration like 500ms, 1s or 2m`);
    writeNodeYml(home, '');
    expect(configErrorOf(() => loadConfig({ home, env: { NODED_NODE_BLOCK_TIME: 'fast' } })).message).toBe(
      'env NODED_NODE_BLOCK_TIME: node.block_time: got "fast", expected a duration like 500ms, 1s or 2m',
    );
    const fromFlag = configErrorOf(() => loadConfig({ home, env: {}, flags: { 'node.block_time': 'fast' } }));
    expect(fromFlag.code).toBe('CONFIG_INVALID');
    expect(fromFlag.message).toBe('flag --node.node.block_time: node.block_time: got "fast", expected a duration like 500ms, 1s or 2m');
  });

  it('reads a size with a unit as bytes; refuses one without a unit, or below the minimum', () => {
    expect(parseConfigText('log:\n  max_size: 512KB\n', 'node.yml').log.max_size).toBe(512 * 1024);
    expect(loadConfig({ home: tempHome(), env: { NODED_LOG_MAX_SIZE: '1.5 GiB' } }).log.max_size).toBe(1.5 * 1024 ** 3);
    expect(configErrorOf(() => parseConfigText('log:\n  max_size: 10\n', 'node.yml')).message).toContain(
      'log.max_size: got "10", expected a size like 512KB, 10MB or 1GB',
    );
    expect(configErrorOf(() => parseConfigText('log:\n  max_size: 10 parsecs\n', 'node.yml')).message).toContain('expected a size like 512KB');
    expect(configErrorOf(() => parseConfigText('log:\n  max_size: 100B\n', 'node.yml')).message).toContain(
      'log.max_size: got "100B", expected a size of at least 1024 bytes',
    );
  });

  it('refuses a duration without a unit, and zero', () => {
    expect(configErrorOf(() => parseConfigText('node:\n  block_time: 5\n', 'node.yml')).message).toContain(
      'node.block_time: got "5", expected a duration like 500ms, 1s or 2m',
    );
    expect(configErrorOf(() => parseConfigText('da:\n  request_timeout: 0s\n', 'node.yml')).message).toContain(
      'da.request_timeout: got "0s", expected a duration above 0',
    );
  });

  it('refuses a negative max_pending_blocks', () => {
    expect(configErrorOf(() => parseConfigText('node:\n  max_pending_blocks: -1\n', 'node.yml')).message).toBe(
      'node.yml: node.max_pending_blocks: got -1, expected an integer >= 0 (0 = no cap)',
    );
    expect(parseConfigText('node:\n  max_pending_blocks: 0\n', 'node.yml').node.max_pending_blocks).toBe(0);
  });

  it('refuses a lazy_block_interval that does not exceed block_time', () => {
    expect(configErrorOf(() => parseConfigText('node:\n  block_time: 2s\n  lazy_block_interval: 2s\n', 'node.yml')).message).toBe(
      'node.yml: node.lazy_block_interval: got "2s", expected a duration longer than node.block_time (2s)',
    );
    // The default interval is faulted too when block_time outgrows it, and said to be the default.
    expect(configErrorOf(() => loadConfig({ home: tempHome(), env: {}, flags: { 'node.block_time': '2m' } })).message).toBe(
      'node.lazy_block_interval: got "60s" (the default), expected a duration longer than node.block_time (2m)',
    );
  });

  it('lists the options of an enum', () => {
    expect(configErrorOf(() => parseConfigText('execution:\n  type: wasm\n', 'node.yml')).message).toBe(
      'node.yml: execution.type: got "wasm", expected one of kv, evm, abci, grpc',
    );
  });

  it('refuses a URL that is not http(s)', () => {
    expect(configErrorOf(() => loadConfig({ home: tempHome(), env: { NODED_DA_ADDRESS: 'localhost:26658' } })).message).toBe(
      'env NODED_DA_ADDRESS: da.address: got "localhost:26658", expected an http(s) URL like http://127.0.0.1:26658',
    );
  });

  it('refuses a bad host:port and allows port 0', () => {
    expect(configErrorOf(() => parseConfigText('rpc:\n  status_address: 127.0.0.1:99999\n', 'node.yml')).message).toBe(
      'node.yml: rpc.status_address: got "127.0.0.1:99999", expected host:port like 127.0.0.1:7331 (port 0-65535)',
    );
    expect(parseConfigText('rpc:\n  address: 127.0.0.1:0\n', 'node.yml').rpc.address).toBe('127.0.0.1:0');
  });

  it('refuses a bare peer id, or any entry that is not a full peer address, naming the entry and what is wrong', () => {
    const id = '12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN';
    const bare = configErrorOf(() => parseConfigText(`p2p:\n  peers: ${id}\n`, 'node.yml')).message;
    expect(bare).toContain(`p2p.peers: got "${id}", expected comma-separated peer addresses /ip4/<ip>/tcp/<port>/p2p/<peer_id>`);
    expect(bare).toContain(`entry "${id}" is a bare peer id`);
    const second = configErrorOf(() => parseConfigText(`p2p:\n  peers: /ip4/10.0.0.5/tcp/7676/p2p/${id},/ip4/10.0.0.6/tcp/7676\n`, 'node.yml')).message;
    expect(second).toContain('entry "/ip4/10.0.0.6/tcp/7676" has no /p2p/<peer_id> part');
    expect(parseConfigText(`p2p:\n  peers: /ip4/10.0.0.5/tcp/7676/p2p/${id}\n`, 'node.yml').p2p.peers).toBe(`/ip4/10.0.0.5/tcp/7676/p2p/${id}`);
  });

  it('reports every problem together, one per line, whatever layer it came from', () => {
    const home = tempHome();
    const file = writeNodeYml(home, 'node:\n  block_time: fast\n  max_pending_blocks: -1\n  blok_time: 1s\nlog:\n  level: loud\n');
    const error = configErrorOf(() => loadConfig({ home, env: { NODED_DA_GAS_MULTIPLIER: '0.5' }, flags: { 'node.aggregator': 'maybe' } }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems).toEqual([
      'flag --node.node.aggregator: node.aggregator: got "maybe", expected true or false',
      `${file}: node.block_time: got "fast", expected a duration like 500ms, 1s or 2m`,
      `${file}: node.max_pending_blocks: got -1, expected an integer >= 0 (0 = no cap)`,
      `${file}: unknown key "node.blok_time" — did you mean "node.block_time"?`,
      'env NODED_DA_GAS_MULTIPLIER: da.gas_multiplier: got 0.5, expected a number >= 1',
      `${file}: log.level: got "loud", expected one of trace, debug, info, warn, error, fatal`,
    ]);
    expect(error.message).toBe(error.problems.join('\n'));
  });

  it('refuses a file that is not a map of sections, and a section that is not a map', () => {
    expect(configErrorOf(() => parseConfigText('- node\n', 'node.yml')).message).toMatch(/^node\.yml: got \["node"\], expected a YAML map of sections/);
    expect(configErrorOf(() => parseConfigText('node: fast\n', 'node.yml')).message).toBe('node.yml: node: got "fast", expected a YAML map of keys');
  });
});
