import { connect } from 'node:net';
import { formatDuration, parsePeerList } from '../../config/index.js';
import type { Check, Verdict } from '../types.js';

const PEER = /^\/(ip4|ip6|dns|dns4|dns6)\/([^/\s]+)\/tcp\/(\d{1,5})\/p2p\/([1-9A-HJ-NP-Za-km-z]+)$/;
const BARE_PEER_ID = /^(12D3KooW|16Uiu2|Qm)[1-9A-HJ-NP-Za-km-z]+$|^[1-9A-HJ-NP-Za-km-z]{40,}$/;
const FORMAT = '/ip4/<ip>/tcp/<port>/p2p/<peer_id> (e.g. /ip4/10.0.0.5/tcp/7676/p2p/12D3KooW…)';

/** TCP connect to host:port within the bound; resolves with the error code, or undefined when it connected. */
function tcpReach(host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (why: string | undefined) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(why);
    };
    const onAbort = () => done('aborted');
    const timer = setTimeout(() => done(`no answer within ${formatDuration(timeoutMs)}`), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

export const peersCheck: Check = {
  id: 'peers',
  verifies: 'each p2p.peers entry is a full /ip4/<ip>/tcp/<port>/p2p/<peer_id> address (a bare peer id fails) and its TCP port answers; none configured → DA-only mode',
  async run(ctx, signal) {
    const raw = ctx.raw.get('p2p.peers');
    const text = raw ? String(raw.value) : ctx.config.p2p.peers;
    const peers = parsePeerList(text);
    if (peers.length === 0) return { status: 'ok', message: 'no peers configured: DA-only mode (the node syncs from DA)' };
    const bad: string[] = [];
    const dial: Array<{ peer: string; host: string; port: number }> = [];
    for (const peer of peers) {
      const m = PEER.exec(peer);
      if (m && Number(m[3]) <= 65_535) dial.push({ peer, host: m[2]!, port: Number(m[3]) });
      else if (BARE_PEER_ID.test(peer)) bad.push(`"${peer}" is a bare peer id, not an address`);
      else bad.push(`"${peer}" is not a peer address`);
    }
    if (bad.length > 0) {
      return {
        status: 'fail',
        message: `${bad.join('; ')}${raw ? ` (from ${raw.source})` : ''}`,
        remedy: `write each peer in the full format ${FORMAT}, comma-separated, or leave p2p.peers empty (--node.p2p.peers "") to sync from DA only`,
      };
    }
    const reached = await Promise.all(dial.map(async (d) => ({ ...d, error: await tcpReach(d.host, d.port, ctx.timeoutMs, signal) })));
    const down = reached.filter((r) => r.error !== undefined);
    if (down.length > 0) {
      const verdict: Verdict = {
        status: 'warn',
        message: `firewall or peer down: ${down.map((d) => `${d.host}:${d.port} (${d.error})`).join(', ')}; ${reached.length - down.length} of ${reached.length} reachable`,
        remedy: 'check that the peer runs and that its P2P port (7676 by default) is open in the firewalls between, or run DA-only with --node.p2p.peers ""',
      };
      return verdict;
    }
    return { status: 'ok', message: `${reached.length} peer(s), each TCP port answers: ${reached.map((r) => `${r.host}:${r.port}`).join(', ')}` };
  },
};
