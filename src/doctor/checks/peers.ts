import { connect } from 'node:net';
import { PEER_ADDRESS_FORMAT, PeerAddressError, formatDuration, parsePeerAddress, parsePeerList, type PeerAddress } from '../../config/index.js';
import type { Check, Verdict } from '../types.js';

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
  verifies:
    'each p2p.peers entry is a full /ip4/<ip>/tcp/<port>/p2p/<peer_id> address (a bare peer id fails) and its TCP port answers; none configured → DA-only mode',
  async run(ctx, signal) {
    const raw = ctx.raw.get('p2p.peers');
    const text = raw ? String(raw.value) : ctx.config.p2p.peers;
    const peers = parsePeerList(text);
    if (peers.length === 0) return { status: 'ok', message: 'no peers configured: DA-only mode (the node syncs from DA)' };
    const bad: string[] = [];
    const dial: PeerAddress[] = [];
    for (const peer of peers) {
      try {
        dial.push(parsePeerAddress(peer));
      } catch (err) {
        if (!(err instanceof PeerAddressError)) throw err;
        bad.push(`${JSON.stringify(err.entry)} ${err.problem}`);
      }
    }
    if (bad.length > 0) {
      return {
        status: 'fail',
        message: `${bad.join('; ')}${raw ? ` (from ${raw.source})` : ''}`,
        remedy: `write each peer in the full format ${PEER_ADDRESS_FORMAT}, comma-separated, or leave p2p.peers empty (--node.p2p.peers "") to sync from DA only`,
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
