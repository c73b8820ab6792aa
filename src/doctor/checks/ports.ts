import { freePortAfter, nodeListenerMove, parseHostPort, tryBind, type ConfigPath, type ListenerMove } from '../../config/index.js';
import { listeningSockets, portHolder } from '../process.js';
import type { Check, DoctorContext, Verdict } from '../types.js';

/** A port the node listens on, and how to move it. */
interface NodePort {
  key: ConfigPath;
  host: string;
  port: number;
  move: ListenerMove;
}

const LISTEN_MULTIADDR = /^\/(ip4|ip6|dns|dns4|dns6)\/([^/\s]+)\/tcp\/(\d{1,5})$/;

/** The ports this config makes the node bind. */
export function nodePorts(ctx: DoctorContext): NodePort[] {
  const { config } = ctx;
  const ports: NodePort[] = [];
  const add = (key: ConfigPath, host: string, port: number, value: string) => ports.push({ key, host, port, move: nodeListenerMove(key, value) });
  const hostPort = (key: ConfigPath, value: string) => {
    const { host, port } = parseHostPort(value);
    add(key, host, port, value);
  };
  hostPort('rpc.address', config.rpc.address);
  hostPort('rpc.status_address', config.rpc.status_address);
  const m = LISTEN_MULTIADDR.exec(config.p2p.listen_address);
  if (m) add('p2p.listen_address', m[2]!, Number(m[3]), config.p2p.listen_address);
  if (config.da.local) {
    const url = new URL(config.da.address);
    add('da.address', url.hostname.replace(/^\[|\]$/g, ''), Number(url.port || 80), config.da.address);
  }
  if (config.instrumentation.prometheus) hostPort('instrumentation.prometheus_listen_addr', config.instrumentation.prometheus_listen_addr);
  return ports;
}

async function checkPort(ctx: DoctorContext, np: NodePort, listening: () => ReadonlyMap<number, ReadonlySet<string>>): Promise<Verdict & { what: string }> {
  const label = `${np.port} (${np.key})`;
  if (np.port === 0) return { status: 'ok', message: '', what: `${label}: any free port` };
  const bound = await tryBind(np.host, np.port);
  if (bound.free) return { status: 'ok', message: '', what: `${label}: free` };
  const node = ctx.node.state === 'running' ? ctx.node.pid : undefined;
  if (bound.code === 'EADDRINUSE') {
    const holder = portHolder(np.port, node, listening());
    if (holder && holder.pid === node) return { status: 'ok', message: '', what: `${label}: held by this home's node (pid ${node})` };
    if (!holder && node !== undefined) {
      return { status: 'ok', message: '', what: `${label}: in use, presumably by this home's node (pid ${node}; the holder could not be read)` };
    }
    const who = holder ? `process ${holder.pid}${holder.command ? ` (${holder.command})` : ''}` : 'another process (its pid could not be found)';
    const free = await freePortAfter(np.host, np.port);
    const move = `move the node with ${free === undefined ? np.move.flag : np.move.to(free)} (${np.key} in node.yml)`;
    return {
      status: 'fail',
      message: '',
      what: `port ${label} is in use by ${who}`,
      remedy: holder ? `stop process ${holder.pid}, or ${move}` : `find it with \`ss -ltnp 'sport = :${np.port}'\` and stop it, or ${move}`,
    };
  }
  const why =
    bound.code === 'EACCES'
      ? `no permission to listen on port ${np.port}`
      : bound.code === 'EADDRNOTAVAIL'
        ? `${np.host} is not an address of this machine`
        : `cannot listen: ${bound.code}`;
  return { status: 'fail', message: '', what: `${label}: ${why}`, remedy: `choose another address with ${np.move.flag} (${np.key} in node.yml)` };
}

export const portsCheck: Check = {
  id: 'ports',
  verifies:
    "the ports the node listens on (rpc.address 7331, rpc.status_address 26657, p2p.listen_address 7676 as configured; the built-in DA and metrics when on) are free or held by this home's running node",
  async run(ctx) {
    // The socket tables are read once, by the first port found in use.
    let listening: ReadonlyMap<number, ReadonlySet<string>> | undefined;
    const results = await Promise.all(nodePorts(ctx).map((np) => checkPort(ctx, np, () => (listening ??= listeningSockets()))));
    const failed = results.filter((r) => r.status === 'fail');
    if (failed.length > 0) {
      return { status: 'fail', message: failed.map((r) => r.what).join('; '), remedy: failed.map((r) => r.remedy).join('; ') };
    }
    return { status: 'ok', message: results.map((r) => r.what).join(', ') };
  },
};
