/** The rpc.* keys that bound the listeners: each bad value is refused with what was wrong and what is expected. */
import { describe, expect, it } from 'vitest';
import { originAllowed, parseConfigText } from '../../src/config/index.js';
import { configErrorOf } from './helpers.js';

const messageOf = (yaml: string) => configErrorOf(() => parseConfigText(`rpc:\n${yaml}\n`, 'node.yml')).message;

describe('listener keys', () => {
  it.each([
    ['  header_timeout: 10', 'rpc.header_timeout: got "10", expected a duration like 500ms, 1s or 2m'],
    ['  header_timeout: 0s', 'rpc.header_timeout: got "0s", expected a duration above 0'],
    ['  request_timeout: soon', 'rpc.request_timeout: got "soon", expected a duration like 500ms, 1s or 2m'],
    ['  idle_timeout: -1s', 'rpc.idle_timeout: got "-1s", expected a duration like 500ms, 1s or 2m'],
    ['  max_connections: 0', 'rpc.max_connections: got 0, expected an integer >= 1'],
    ['  max_connections: many', 'rpc.max_connections: got "many", expected an integer >= 1'],
    [
      '  cors_allowed_origins: evil.example',
      'rpc.cors_allowed_origins: got "evil.example", expected comma-separated origins like https://app.example.com, http://*.example.com or *: "evil.example" is not an origin',
    ],
    ['  cors_allowed_origins: "https://a.example/app"', '"https://a.example/app" is not an origin (scheme://host[:port], no path)'],
    ['  cors_allowed_origins: "https://*.*.example"', '"https://*.*.example" has more than one *'],
    [
      '  allowed_hosts: "https://node.example"',
      'rpc.allowed_hosts: got "https://node.example", expected comma-separated host names like node.example.com: "https://node.example" is not a host name',
    ],
    ['  allowed_hosts: "node.example:7331"', '"node.example:7331" is not a host name (no scheme, port or path)'],
  ])('%s', (yaml, message) => {
    expect(messageOf(yaml)).toContain(message);
  });

  it('refuses a request timeout shorter than the header timeout (the headers are part of the request)', () => {
    expect(messageOf('  header_timeout: 20s\n  request_timeout: 5s')).toContain(
      'rpc.request_timeout: got "5s", expected a duration at least rpc.header_timeout (20s)',
    );
  });

  it('takes lists of origins and host names', () => {
    const config = parseConfigText(
      'rpc:\n  cors_allowed_origins: "https://app.example, http://*.example.com:8080"\n  allowed_hosts: "node.example.com, rpc"\n',
      'node.yml',
    );
    expect(config.rpc.cors_allowed_origins).toBe('https://app.example, http://*.example.com:8080');
  });
});

describe('originAllowed (rs/cors, as CometBFT matches cors_allowed_origins)', () => {
  const list = ['https://app.example', 'http://*.example.com:8080'];
  it.each([
    ['https://app.example', true],
    ['HTTPS://APP.EXAMPLE', true],
    ['http://app.example', false],
    ['https://app.example.evil', false],
    ['http://a.example.com:8080', true],
    ['http://a.b.example.com:8080', true],
    ['http://example.com:8080', false],
    ['http://a.example.com:8081', false],
    ['null', false],
  ])('%s: %s', (origin, allowed) => {
    expect(originAllowed(origin, list)).toBe(allowed);
  });

  it('allows every origin for *, none for an empty list', () => {
    expect(originAllowed('http://evil.example', ['*'])).toBe(true);
    expect(originAllowed('http://evil.example', [])).toBe(false);
  });
});
