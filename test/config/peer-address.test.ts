import { describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id';
import { isPeerId, parsePeerAddress, parsePeerAddresses, PeerAddressError, PEER_ADDRESS_FORMAT } from '../../src/config/index.js';
import { Ed25519Key, libp2pPeerId } from '../../src/types/index.js';

const ID = libp2pPeerId(Ed25519Key.generate().publicKey);

describe('parsePeerAddress', () => {
  it.each([
    [`/ip4/10.0.0.5/tcp/7676/p2p/${ID}`, 'ip4', '10.0.0.5', 7676],
    [`/ip6/::1/tcp/7676/p2p/${ID}`, 'ip6', '::1', 7676],
    [`/dns4/node-1.example.com/tcp/26656/p2p/${ID}`, 'dns4', 'node-1.example.com', 26656],
    [`/dns6/node.example/tcp/1/p2p/${ID}`, 'dns6', 'node.example', 1],
    [`/dns/localhost/tcp/65535/p2p/${ID}`, 'dns', 'localhost', 65535],
    [`  /ip4/127.0.0.1/tcp/7676/ipfs/${ID}  `, 'ip4', '127.0.0.1', 7676],
  ])('accepts %s', (entry, hostProtocol, host, port) => {
    const peer = parsePeerAddress(entry);
    expect(peer).toEqual({ multiaddr: `/${hostProtocol}/${host}/tcp/${port}/p2p/${ID}`, peerId: ID, host, hostProtocol, port });
  });

  it.each([
    [ID, 'is a bare peer id'],
    [`/ip4/10.0.0.5/tcp/7676`, 'has no /p2p/<peer_id> part'],
    [`/p2p/${ID}`, 'has only the /p2p/<peer_id> part'],
    [`/ip4/10.0.0.5/p2p/${ID}`, 'has no /tcp/<port> part'],
    ['10.0.0.5:7676', 'is host:port, not a multiaddr'],
    ['not an address', 'is not a multiaddr'],
    ['', 'is empty'],
    [`/ip4/10.0.0.5/udp/7676/quic-v1/p2p/${ID}`, 'unsupported transport (/udp)'],
    [`/ip4/10.0.0.5/tcp/7676/ws/p2p/${ID}`, 'unsupported transport (/tcp/…/ws)'],
    [`/quic-v1/x/tcp/1/p2p/${ID}`, 'unsupported transport (/quic-v1)'],
    [`/ip4/10.0.0.500/tcp/7676/p2p/${ID}`, 'not an IPv4 address'],
    [`/ip6/10.0.0.5/tcp/7676/p2p/${ID}`, 'not an IPv6 address'],
    [`/ip4/10.0.0.5/tcp/0/p2p/${ID}`, 'a port is 1-65535'],
    [`/ip4/10.0.0.5/tcp/70000/p2p/${ID}`, 'a port is 1-65535'],
    [`/ip4/10.0.0.5/tcp/7676/p2p/12D3KooWnotapeerid`, 'not a base58 libp2p peer id'],
    [`/ip4/10.0.0.5/tcp/7676/p2p/${ID}/p2p-circuit`, 'has more after the peer id'],
    [`/ip4//tcp/7676/p2p/${ID}`, 'is not a multiaddr'],
  ])('rejects %j: %s', (entry, problem) => {
    let error: unknown;
    try {
      parsePeerAddress(entry);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PeerAddressError);
    const message = (error as Error).message;
    expect(message).toContain(JSON.stringify(entry));
    expect(message).toContain(problem);
    expect(message).toContain('/ip4/<ip>/tcp/<port>/p2p/<peer_id>');
    expect(message).toContain(PEER_ADDRESS_FORMAT);
  });

  it('reports every bad entry of a list at once and drops duplicates', () => {
    const good = `/ip4/127.0.0.1/tcp/7676/p2p/${ID}`;
    expect(parsePeerAddresses([good, ` ${good}`])).toHaveLength(1);
    expect(() => parsePeerAddresses([good, ID, '/ip4/1.2.3.4/tcp/1'])).toThrow(/2 peer addresses are invalid:\n.*bare peer id.*\n.*no \/p2p\//);
  });

  it('recognises peer ids as libp2p does', async () => {
    for (const type of ['Ed25519', 'secp256k1', 'RSA'] as const) {
      const id = peerIdFromPrivateKey(type === 'RSA' ? await generateKeyPair('RSA', 1024) : await generateKeyPair(type)).toString();
      expect(isPeerId(id), `${type} ${id}`).toBe(true);
      expect(peerIdFromString(id).toString()).toBe(id);
    }
    for (const bad of ['12D3KooW', 'Qm', 'hello', '0OIl', `${ID}x`]) {
      expect(isPeerId(bad), bad).toBe(false);
    }
  });
});
