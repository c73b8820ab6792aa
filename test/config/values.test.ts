import { describe, expect, it } from 'vitest';
import { NAMESPACE_SIZE, daNamespace, daNamespaces, formatDuration, parseDuration, parseHostPort, parsePeerList } from '../../src/config/index.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['1s', 1_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['1.5s', 1_500],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', '1', 'fast', '1 s', '-1s', '1d', 's', '1s ', '1.s', 'ms'])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow('expected a duration like 500ms, 1s or 2m');
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [1_000, '1s'],
    [60_000, '1m'],
    [90_000, '1m30s'],
    [3_600_000, '1h'],
    [3_723_004, '1h2m3s4ms'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });

  it('refuses what it cannot write exactly', () => {
    expect(() => formatDuration(-1)).toThrow();
    expect(() => formatDuration(1.5)).toThrow();
  });
});

describe('parseHostPort', () => {
  it.each([
    ['127.0.0.1:7331', { host: '127.0.0.1', port: 7331 }],
    ['localhost:0', { host: 'localhost', port: 0 }],
    ['[::1]:26657', { host: '::1', port: 26657 }],
    ['node-1.example.com:65535', { host: 'node-1.example.com', port: 65535 }],
  ])('%s', (text, hostPort) => {
    expect(parseHostPort(text)).toEqual(hostPort);
  });

  it.each(['7331', ':7331', '127.0.0.1', '127.0.0.1:65536', '127.0.0.1:x', 'http://127.0.0.1:7331', '::1:7331'])('refuses %j', (text) => {
    expect(() => parseHostPort(text)).toThrow('expected host:port');
  });
});

describe('parsePeerList', () => {
  it('splits on commas and drops blanks', () => {
    expect(parsePeerList(' /ip4/10.0.0.5/tcp/7676/p2p/12D3KooWA , ,/dns4/a.b/tcp/1/p2p/12D3KooWB,')).toEqual([
      '/ip4/10.0.0.5/tcp/7676/p2p/12D3KooWA',
      '/dns4/a.b/tcp/1/p2p/12D3KooWB',
    ]);
    expect(parsePeerList('')).toEqual([]);
  });
});

describe('DA namespaces', () => {
  it('are 29 bytes: version 0, 18 zero bytes, then 10 bytes of sha256(name)', () => {
    const ns = daNamespace('mychain-1');
    expect(ns).toHaveLength(NAMESPACE_SIZE);
    expect(NAMESPACE_SIZE).toBe(29);
    expect(ns.subarray(0, 19).every((b) => b === 0)).toBe(true);
    // printf mychain-1 | sha256sum → e50ce40e761159c416e7…
    expect(Buffer.from(ns.subarray(19)).toString('hex')).toBe('e50ce40e761159c416e7');
  });

  it("are deterministic; data shares the headers' namespace unless da.data_namespace names its own (ev-node GetDataNamespace)", () => {
    expect(daNamespace('mychain-1')).toEqual(daNamespace('mychain-1'));
    expect(daNamespace('mychain-1')).not.toEqual(daNamespace('mychain-2'));
    expect(daNamespaces('mychain-1', '')).toEqual({ header: daNamespace('mychain-1'), data: daNamespace('mychain-1') });
    expect(daNamespaces('mychain-1', 'mychain-1-data')).toEqual({ header: daNamespace('mychain-1'), data: daNamespace('mychain-1-data') });
  });
});
