/** Address forms that config values take, each checked in one place. */

export interface HostPort {
  /** Hostname or IP; an IPv6 address comes without its brackets, ready for `listen`. */
  host: string;
  port: number;
}

export const HOST_PORT_FORM = 'host:port like 127.0.0.1:7331 (port 0-65535)';

const HOST_PORT = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;
const MAX_PORT = 65_535;

/** `127.0.0.1:7331` → { host, port }, or undefined when it is not host:port. Port 0 (any free port) is allowed. */
export function matchHostPort(text: string): HostPort | undefined {
  const m = HOST_PORT.exec(text);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > MAX_PORT) return undefined;
  return { host: m[1] ?? m[2]!, port };
}

/** `127.0.0.1:7331` → { host: '127.0.0.1', port: 7331 }; throws when it is not host:port. */
export function parseHostPort(text: string): HostPort {
  const hostPort = matchHostPort(text);
  if (!hostPort) throw new RangeError(`got ${JSON.stringify(text)}, expected ${HOST_PORT_FORM}`);
  return hostPort;
}

/** { host, port } → `host:port`, an IPv6 host in brackets: the form parseHostPort reads. */
export const formatHostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** `tcp://host:port` or `unix:///absolute/path`, as ABCI apps listen. */
export function isAbciAddress(text: string): boolean {
  if (text.startsWith('tcp://')) return matchHostPort(text.slice('tcp://'.length)) !== undefined;
  if (text.startsWith('unix://')) return /^\/[^\0]+$/.test(text.slice('unix://'.length));
  return false;
}

// The node speaks libp2p over TCP only, so a dialable or listenable address is
// /<ip4|ip6|dns…>/<host>/tcp/<port>.
const TCP_MULTIADDR = String.raw`/(?:ip4|ip6|dns|dns4|dns6)/[^/\s]+/tcp/(\d{1,5})`;
const LISTEN_MULTIADDR = new RegExp(`^${TCP_MULTIADDR}$`);

function matchesWithPort(pattern: RegExp, text: string): boolean {
  const m = pattern.exec(text);
  return m !== null && Number(m[1]) <= MAX_PORT;
}

export function isListenMultiaddr(text: string): boolean {
  return matchesWithPort(LISTEN_MULTIADDR, text);
}

/** The entries of a comma-separated list (p2p.peers, rpc.cors_allowed_origins, rpc.allowed_hosts), trimmed, blanks dropped. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

export const parsePeerList = splitList;
