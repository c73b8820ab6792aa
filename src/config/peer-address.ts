import { isIPv4, isIPv6 } from 'node:net';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr, registry, type Multiaddr } from '@multiformats/multiaddr';
import { parsePeerList } from './address.js';

/**
 * Peer addresses (DESIGN.md §9). A peer is a full multiaddr: where to reach it
 * over TCP and which peer id must answer there. Multiaddrs and peer ids are
 * read by @multiformats/multiaddr and @libp2p/peer-id; this module walks the
 * parts first, so a bad entry is told in an operator's words.
 */

export const PEER_ADDRESS_FORMAT = '/ip4/<ip>/tcp/<port>/p2p/<peer_id> (or /ip6/…, /dns4/…, /dns6/…, /dns/… in place of /ip4/<ip>)';
export const PEER_ADDRESS_EXAMPLE = '/ip4/10.0.0.5/tcp/7676/p2p/12D3KooWAb…';

export type HostProtocol = 'ip4' | 'ip6' | 'dns' | 'dns4' | 'dns6';

export interface PeerAddress {
  /** The address as libp2p dials it, normalised (`/ip4/127.0.0.1/tcp/7676/p2p/12D3KooW…`). */
  multiaddr: string;
  peerId: string;
  /** IP address or DNS name, without brackets. */
  host: string;
  hostProtocol: HostProtocol;
  port: number;
}

export class PeerAddressError extends Error {
  constructor(
    readonly entry: string,
    readonly problem: string,
  ) {
    super(`peer address ${JSON.stringify(entry)} ${problem}; expected ${PEER_ADDRESS_FORMAT}, like ${PEER_ADDRESS_EXAMPLE}`);
    this.name = 'PeerAddressError';
  }
}

const DNS_NAME = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const HOST_PROTOCOLS = new Set<string>(['ip4', 'ip6', 'dns', 'dns4', 'dns6']);

/** True when multiaddr knows `name` as a protocol (udp, quic-v1, ws, …): another transport, not a typo. */
function isKnownProtocol(name: string): boolean {
  try {
    registry.getProtocol(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * True when `text` is a libp2p peer id in its base58 form: an identity
 * multihash of a public key (`12D3KooW…` for ed25519, `16Uiu2…` for secp256k1)
 * or a sha2-256 multihash (`Qm…`, RSA keys), as @libp2p/peer-id reads it.
 */
export function isPeerId(text: string): boolean {
  try {
    peerIdFromString(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses one `p2p.peers` entry, or throws a PeerAddressError that names the
 * entry, says what is wrong and shows the expected format.
 */
export function parsePeerAddress(entry: string): PeerAddress {
  const text = entry.trim();
  const fail = (problem: string): never => {
    throw new PeerAddressError(entry, problem);
  };
  if (text === '') fail('is empty');
  if (!text.startsWith('/')) {
    if (isPeerId(text)) fail('is a bare peer id: a peer address also says where to reach the peer');
    if (/^[\w.-]+:\d+$/.test(text) || /^\[[0-9A-Fa-f:.]+\]:\d+$/.test(text)) fail('is host:port, not a multiaddr');
    fail('is not a multiaddr (it must start with /)');
  }
  const parts = text.slice(1).split('/');
  if (parts.some((p) => p === '')) fail('is not a multiaddr (empty /-separated part)');
  const [hostProtocol, host, transport, portText, p2p, peerId, ...rest] = parts as Array<string | undefined>;

  if (!HOST_PROTOCOLS.has(hostProtocol!)) {
    if (hostProtocol === 'p2p' || hostProtocol === 'ipfs') fail('has only the /p2p/<peer_id> part: it also needs /ip4/<ip>/tcp/<port> in front');
    if (isKnownProtocol(hostProtocol!)) fail(`uses an unsupported transport (/${hostProtocol}); this node speaks TCP only`);
    fail(`is not a multiaddr this node can dial: it starts with /${hostProtocol}, not /ip4, /ip6, /dns4, /dns6 or /dns`);
  }
  if (host === undefined) fail(`has no host after /${hostProtocol}`);
  if (hostProtocol === 'ip4' && !isIPv4(host!)) fail(`has ${JSON.stringify(host)} after /ip4, which is not an IPv4 address`);
  if (hostProtocol === 'ip6' && !isIPv6(host!)) fail(`has ${JSON.stringify(host)} after /ip6, which is not an IPv6 address`);
  if (hostProtocol!.startsWith('dns') && !DNS_NAME.test(host!)) fail(`has ${JSON.stringify(host)} after /${hostProtocol}, which is not a DNS name`);

  if (transport === undefined) fail('has no /tcp/<port> part');
  if (transport !== 'tcp') {
    if (transport === 'p2p' || transport === 'ipfs') fail('has no /tcp/<port> part');
    fail(`uses an unsupported transport (/${transport}); this node speaks TCP only`);
  }
  if (portText === undefined || !/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65_535) {
    fail(`has ${portText === undefined ? 'no port' : `port ${JSON.stringify(portText)}`} after /tcp; a port is 1-65535`);
  }

  if (p2p === undefined) fail('has no /p2p/<peer_id> part: without it the node cannot check who answers');
  if (p2p !== 'p2p' && p2p !== 'ipfs') {
    if (isKnownProtocol(p2p!)) fail(`uses an unsupported transport (/tcp/…/${p2p}); this node speaks plain TCP only`);
    fail(`has /${p2p} where /p2p/<peer_id> belongs`);
  }
  if (peerId === undefined) fail('has /p2p but no peer id after it');
  if (!isPeerId(peerId!)) fail(`has ${JSON.stringify(peerId)} after /p2p, which is not a base58 libp2p peer id (12D3KooW…)`);
  if (rest.length > 0) fail(`has more after the peer id (/${rest.join('/')}); this node dials plain TCP addresses only`);

  // What is left for multiaddr to refuse, it says in its words.
  let address: Multiaddr;
  try {
    address = multiaddr(text);
  } catch (err) {
    return fail(`is not a multiaddr: ${(err as Error).message}`);
  }
  return {
    multiaddr: address.toString(),
    peerId: peerId!,
    host: address.getComponents()[0]!.value!,
    hostProtocol: hostProtocol as HostProtocol,
    port: Number(portText),
  };
}

/**
 * The address other nodes put in their p2p.peers to reach this one: the
 * listen address with the peer id appended, a wildcard host (0.0.0.0, ::)
 * replaced by loopback — the operator puts the public IP there.
 */
export function ownPeerAddress(listen: string, peerId: string): string {
  const dialable = listen.replace(/^\/ip4\/0\.0\.0\.0\//, '/ip4/127.0.0.1/').replace(/^\/ip6\/::\//, '/ip6/::1/');
  return `${dialable}/p2p/${peerId}`;
}

/** What is wrong with the first bad entry of a comma-separated peer list, or undefined when every entry parses. */
export function peerListProblem(text: string): string | undefined {
  for (const entry of parsePeerList(text)) {
    try {
      parsePeerAddress(entry);
    } catch (err) {
      if (err instanceof PeerAddressError) return `entry ${JSON.stringify(err.entry)} ${err.problem}`;
      throw err;
    }
  }
  return undefined;
}

/**
 * Parses every entry of a peer list (already split by parsePeerList),
 * reporting all bad entries at once. A peer given twice is kept once.
 */
export function parsePeerAddresses(entries: readonly string[]): PeerAddress[] {
  const out: PeerAddress[] = [];
  const errors: string[] = [];
  for (const entry of entries) {
    try {
      const peer = parsePeerAddress(entry);
      if (!out.some((p) => p.multiaddr === peer.multiaddr)) out.push(peer);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  if (errors.length === 1) throw new Error(errors[0]);
  if (errors.length > 1) throw new Error(`${errors.length} peer addresses are invalid:\n  ${errors.join('\n  ')}`);
  return out;
}
