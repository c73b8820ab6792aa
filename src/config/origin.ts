import { splitList } from './address.js';

/**
 * rpc.cors_allowed_origins and rpc.allowed_hosts: comma-separated lists, each
 * entry checked here so a typo is refused at load rather than silently
 * matching nothing.
 */

const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/\s?#@]+$/i;
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** Why an origin list is refused, or undefined: each entry is scheme://host[:port] (no path) with at most one `*`, or `*`. */
export function originListProblem(list: string): string | undefined {
  for (const entry of splitList(list)) {
    if (entry === '*') continue;
    if (!ORIGIN.test(entry)) return `${JSON.stringify(entry)} is not an origin (scheme://host[:port], no path)`;
    if (entry.split('*').length > 2) return `${JSON.stringify(entry)} has more than one *`;
  }
  return undefined;
}

/** Why a host-name list is refused, or undefined: each entry is a DNS name, without scheme or port. */
export function hostListProblem(list: string): string | undefined {
  const bad = splitList(list).find((entry) => !HOST_NAME.test(entry));
  return bad === undefined ? undefined : `${JSON.stringify(bad)} is not a host name (no scheme, port or path)`;
}

/**
 * Whether an Origin header is one of `allowed`, as CometBFT's CORS middleware
 * (rs/cors, node/node.go) decides: `*` allows every origin, an entry with one
 * `*` matches any text in its place, and case does not matter.
 */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  const o = origin.toLowerCase();
  return allowed.some((entry) => {
    const e = entry.toLowerCase();
    if (e === '*') return true;
    const star = e.indexOf('*');
    if (star < 0) return o === e;
    const prefix = e.slice(0, star);
    const suffix = e.slice(star + 1);
    return o.length >= prefix.length + suffix.length && o.startsWith(prefix) && o.endsWith(suffix);
  });
}
