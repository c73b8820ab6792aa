/** Which Host names each kind of listener address answers to (the DNS-rebinding check). */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { accessPolicy, hostAllowed } from '../../src/rpc/guard.js';

const policy = (address: string, allowedHosts = '') => accessPolicy({ ...defaultConfig().rpc, allowed_hosts: allowedHosts }, address);

describe('hostAllowed', () => {
  it.each([
    ['127.0.0.1:7331', '127.0.0.1:7331', true],
    ['127.0.0.1:7331', 'localhost:7331', true],
    ['127.0.0.1:7331', 'LOCALHOST.', true],
    ['127.0.0.1:7331', '[::1]:7331', true],
    ['127.0.0.1:7331', '10.1.2.3', true],
    ['127.0.0.1:7331', 'evil.example:7331', false],
    ['127.0.0.1:7331', 'localhost.evil.example', false],
    ['[::1]:7331', 'localhost', true],
    ['10.0.0.5:7331', 'localhost:7331', false],
    ['10.0.0.5:7331', '10.0.0.5:7331', true],
    ['node1.example:7331', 'node1.example:7331', true],
    ['node1.example:7331', 'localhost', false],
    ['0.0.0.0:7331', 'localhost:7331', true],
    ['0.0.0.0:7331', `${hostname()}:7331`, true],
    ['0.0.0.0:7331', '192.168.1.20:7331', true],
    ['0.0.0.0:7331', 'node1.example:7331', false],
    ['[::]:7331', 'evil.example', false],
  ])('a listener on %s: Host %s → %s', (address, host, allowed) => {
    expect(hostAllowed(host, policy(address))).toBe(allowed);
  });

  it('takes the names in rpc.allowed_hosts, and a request without Host', () => {
    expect(hostAllowed('node1.example:7331', policy('0.0.0.0:7331', 'node1.example, rpc.example'))).toBe(true);
    expect(hostAllowed('RPC.example', policy('127.0.0.1:7331', 'node1.example, rpc.example'))).toBe(true);
    expect(hostAllowed(undefined, policy('127.0.0.1:7331'))).toBe(true);
  });
});
