import { isIP } from 'node:net';
import { hostname as machineName } from 'node:os';
import { cors } from '@connectrpc/connect';
import { originAllowed, parseHostPort, splitList, type Config } from '../config/index.js';
import { BodyTooLargeError } from './http.js';
import type { Handler } from './listen.js';

type Req = Parameters<Handler>[0];
type Res = Parameters<Handler>[1];

/** Who may call a listener: the Host names it answers to and the web origins that may change state through it. */
export interface AccessPolicy {
  /** The host of the listener's address (rpc.address or rpc.status_address). */
  listenHost: string;
  /** rpc.allowed_hosts, lower case. */
  allowedHosts: string[];
  /** rpc.cors_allowed_origins. */
  corsOrigins: string[];
}

export function accessPolicy(rpc: Config['rpc'], address: string): AccessPolicy {
  return {
    listenHost: parseHostPort(address).host.toLowerCase(),
    allowedHosts: splitList(rpc.allowed_hosts).map((h) => h.toLowerCase().replace(/\.$/, '')),
    corsOrigins: splitList(rpc.cors_allowed_origins),
  };
}

/** What the guard needs to know of the server behind a listener. */
export interface GuardedServer {
  /** The largest request body any of its routes reads. */
  readonly maxBodyBytes: number;
  /** Whether this request may change the node's state (submit a tx), so a web page of another origin must not send it. */
  changesState(req: Req): boolean;
  /** Answers a refused request in the server's own error shape. */
  refuse(req: Req, res: Res, status: 403 | 413, message: string): void;
}

/** Request headers a cross-origin page may send: CometBFT's cors_allowed_headers default (config/config.go) and Connect's. */
const CORS_ALLOWED_HEADERS = [...new Set(['Origin', 'Accept', 'Content-Type', 'X-Requested-With', 'X-Server-Time', ...cors.allowedHeaders])].join(', ');
/** CometBFT's cors_allowed_methods default (config/config.go). */
const CORS_ALLOWED_METHODS = 'HEAD, GET, POST';

const LOOPBACK = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);
const ALL_INTERFACES = (host: string) => host === '0.0.0.0' || host === '::';

/** The host name of a Host header or an :authority, without port or IPv6 brackets, lower case. */
function hostNameOf(header: string): string {
  const h = header.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined) : h.split(':')[0]!;
  return name.replace(/\.$/, '');
}

/**
 * Whether a request's Host names this listener, so a web page whose DNS name
 * was rebound to this machine's address cannot read or call it. An IP address
 * is always taken (rebinding needs a DNS name), and so are the listener's own
 * host and rpc.allowed_hosts; `localhost` is taken by a loopback listener and
 * by one on all interfaces, which also answers to this machine's host name.
 */
export function hostAllowed(header: string | undefined, policy: AccessPolicy): boolean {
  // Browsers always send Host; a request without one (HTTP/1.0, an HTTP/2 client without :authority) is no web page's.
  if (header === undefined || header === '') return true;
  const name = hostNameOf(header);
  if (isIP(name) !== 0 || name === policy.listenHost || policy.allowedHosts.includes(name)) return true;
  const { listenHost } = policy;
  if (name === 'localhost' && (LOOPBACK(listenHost) || ALL_INTERFACES(listenHost))) return true;
  return ALL_INTERFACES(listenHost) && name === machineName().toLowerCase();
}

/**
 * Checks every request before its server sees it: the Host names the listener
 * (else 403), a body announced larger than the server reads is refused before
 * it is read (413), a request from a web page of an origin not in
 * rpc.cors_allowed_origins may not change state (403), and an allowed origin
 * gets CORS headers and its preflight answered, as CometBFT's CORS middleware
 * does (node/node.go).
 */
export function guardHandler(handler: Handler, server: GuardedServer, policy: AccessPolicy): Handler {
  // A client sends the same Host on every request: the last verdict is kept rather than worked out again each time.
  let lastHost: string | undefined;
  let lastAllowed = hostAllowed(undefined, policy);
  return (req, res) => {
    const host = req.headers.host ?? (req.headers[':authority'] as string | undefined);
    if (host !== lastHost) {
      lastAllowed = hostAllowed(host, policy);
      lastHost = host;
    }
    if (!lastAllowed) {
      const { listenHost } = policy;
      const names = ALL_INTERFACES(listenHost)
        ? ['an IP address', 'localhost', machineName()]
        : ['an IP address', ...(LOOPBACK(listenHost) && listenHost !== 'localhost' ? ['localhost'] : []), ...(isIP(listenHost) ? [] : [listenHost])];
      return server.refuse(
        req,
        res,
        403,
        `Host ${JSON.stringify(host)} does not name this listener: use ${names.join(', ')}, or add the name to the node's rpc.allowed_hosts`,
      );
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > server.maxBodyBytes) {
      // An HTTP/1.1 connection is closed after the answer, so the body is never read; HTTP/2 resets the stream.
      if (req.httpVersionMajor === 1) res.setHeader('connection', 'close');
      return server.refuse(req, res, 413, new BodyTooLargeError(server.maxBodyBytes, declared).message);
    }
    const origin = req.headers.origin;
    if (origin === undefined) return handler(req, res);
    const allowed = originAllowed(origin, policy.corsOrigins);
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!allowed && (preflight || server.changesState(req))) {
      return server.refuse(
        req,
        res,
        403,
        `Origin ${JSON.stringify(origin)} may not ${preflight ? 'call this listener' : 'change state through this listener'}: web pages are refused unless their origin is in rpc.cors_allowed_origins`,
      );
    }
    if (!allowed) return handler(req, res);
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('vary', 'Origin');
    if (preflight) {
      res.writeHead(204, { 'access-control-allow-methods': CORS_ALLOWED_METHODS, 'access-control-allow-headers': CORS_ALLOWED_HEADERS });
      res.end();
      return;
    }
    res.setHeader('access-control-expose-headers', cors.exposedHeaders.join(', '));
    handler(req, res);
  };
}
