import { createServer } from 'node:net';
import { formatHostPort, matchHostPort } from './address.js';
import { configKeys, flagName } from './keys.js';
import type { ConfigPath } from './schema.js';

/**
 * Remedies that name a `--node.*` flag with a value are built here, from the
 * schema's keys, so every one of them is a flag that exists with a value its
 * key takes; and a port they name is free and no other service's default
 * (moving the DA off 26658 onto 26659 would collide with the ABCI app).
 */

const MULTIADDR_TCP = /^(\/(?:ip4|ip6|dns|dns4|dns6)\/[^/\s]+\/tcp\/)(\d{1,5})$/;
const SCHEME_HOST_PORT = /^([a-z][a-z0-9+.-]*:\/\/)(\[[0-9A-Fa-f:.]+\]|[^/:\s]+):(\d{1,5})(\/.*)?$/;

/** The port in a value of the forms the schema's addresses take: host:port, a URL, tcp://host:port, a /tcp/ multiaddr. */
export function portOf(value: string): number | undefined {
  const hostPort = matchHostPort(value);
  if (hostPort) return hostPort.port;
  const port = MULTIADDR_TCP.exec(value)?.[2] ?? SCHEME_HOST_PORT.exec(value)?.[3];
  return port === undefined ? undefined : Number(port);
}

/** `value` on another port, in its own form (host:port stays host:port, a URL stays a URL). */
export function withPort(value: string, port: number): string {
  const hostPort = matchHostPort(value);
  if (hostPort) return formatHostPort(hostPort.host, port);
  const multiaddr = MULTIADDR_TCP.exec(value);
  if (multiaddr) return `${multiaddr[1]}${port}`;
  const url = SCHEME_HOST_PORT.exec(value);
  if (url) return `${url[1]}${url[2]}:${port}${url[4] ?? ''}`;
  throw new RangeError(`${JSON.stringify(value)} has no port to change`);
}

let cachedDefaults: ReadonlySet<number> | undefined;

/** The ports of the schema's defaults: the node's listeners and the services it reaches (7331, 26657, 7676, 26658, 26659, 26660, 8545, 8551). */
export function defaultPorts(): ReadonlySet<number> {
  cachedDefaults ??= new Set(configKeys().flatMap((k) => portOf(k.default) ?? []));
  return cachedDefaults;
}

const SHELL_SAFE = /^[\w@%+=:,./-]+$/;

/** `--node.<path> <value>`, the value quoted when a shell would split or eat it (`--node.p2p.peers ""`). */
export function flagSuggestion(path: ConfigPath, value: string): string {
  return `--${flagName(path)} ${SHELL_SAFE.test(value) ? value : JSON.stringify(value)}`;
}

export type BindResult = { free: true } | { free: false; code: string };

/** Tries to listen on host:port, and lets go at once. */
export function tryBind(host: string, port: number): Promise<BindResult> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve({ free: false, code: err.code ?? err.message }));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve({ free: true })));
  });
}

/** How far past a taken port a suggestion looks for a free one. */
const PORTS_TRIED = 40;

/** The first port after `port` that is free on `host` and no default port; undefined when none is within reach. */
export async function freePortAfter(host: string, port: number): Promise<number | undefined> {
  for (let p = port + 1; p <= Math.min(port + PORTS_TRIED, 65_535); p++) {
    if (defaultPorts().has(p)) continue;
    if ((await tryBind(host, p)).free) return p;
  }
  return undefined;
}

/** How an error tells the operator to move a listener: the flag, and that flag with a value on another port. */
export interface ListenerMove {
  flag: string;
  to(port: number): string;
}

/** Moving the listener of a config key (`rpc.address`), written in the form its value has now. */
export function nodeListenerMove(path: ConfigPath, current: string): ListenerMove {
  return { flag: `--${flagName(path)}`, to: (port) => flagSuggestion(path, withPort(current, port)) };
}

/** A command's own host:port flag (`da serve --listen`) on another port. */
export function hostPortFlagMove(flag: string, host: string): ListenerMove {
  return { flag: `--${flag}`, to: (port) => `--${flag} ${formatHostPort(host, port)}` };
}

/** "choose another address with --flag (e.g. --flag <a free port>)", the example left out when no free port is near. */
export async function moveAdvice(move: ListenerMove, host: string, port: number): Promise<string> {
  const free = await freePortAfter(host, port);
  return `choose another address with ${move.flag}${free === undefined ? '' : ` (e.g. ${move.to(free)})`}`;
}
