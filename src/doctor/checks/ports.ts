import { createServer } from 'node:net';
import { parseHostPort } from '../../config/index.js';
import { portHolder } from '../process.js';
import type { Check, DoctorContext, Verdict } from '../types.js';

/** A port the node listens on, and the flag that moves it. */
interface NodePort {
  key: string;
  flag: string;
  host: string;
  port: number;
  /** The value as configured, to show in a suggestion's form. */
  form: (port: number) => string;
}

type BindResult = { free: true } | { free: false; code: string };

function tryBind(host: string, port: number): Promise<BindResult> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve({ free: false, code: err.code ?? err.message }));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve({ free: true })));
  });
}

const LISTEN_MULTIADDR = /^\/(ip4|ip6|dns|dns4|dns6)\/([^/\s]+)\/tcp\/(\d{1,5})$/;

/** The ports this config makes the node bind. */
export function nodePorts(ctx: DoctorContext): NodePort[] {
  const { config } = ctx;
  const ports: NodePort[] = [];
  const hostPort = (key: string, flag: string, value: string) => {
    const { host, port } = parseHostPort(value);
    const shown = host.includes(':') ? `[${host}]` : host;
    ports.push({ key, flag, host, port, form: (p) => `${shown}:${p}` });
  };
  hostPort('rpc.address', '--node.rpc.address', config.rpc.address);
  hostPort('rpc.status_address', '--node.rpc.status_address', config.rpc.status_address);
  const m = LISTEN_MULTIADDR.exec(config.p2p.listen_address);
  if (m) {
    const [, proto, host, port] = m;
    ports.push({
      key: 'p2p.listen_address',
      flag: '--node.p2p.listen_address',
      host: host!,
      port: Number(port),
      form: (p) => `/${proto}/${host}/tcp/${p}`,
    });
  }
  if (config.da.local) {
    const url = new URL(config.da.address);
    hostPort('da.address', '--node.da.address', `${url.hostname.replace(/^\[|\]$/g, '')}:${url.port || 80}`);
    const last = ports[ports.length - 1]!;
    last.form = (p) => `${url.protocol}//${url.hostname}:${p}`;
  }
  if (config.instrumentation.prometheus) {
    hostPort('instrumentation.prometheus_listen_addr', '--node.instrumentation.prometheus_listen_addr', config.instrumentation.prometheus_listen_addr);
  }
  return ports;
}

async function nextFreePort(host: string, port: number): Promise<number | undefined> {
  for (let p = port + 1; p <= Math.min(port + 20, 65_535); p++) {
    if ((await tryBind(host, p)).free) return p;
  }
  return undefined;
}

async function checkPort(ctx: DoctorContext, np: NodePort): Promise<Verdict & { what: string }> {
  const label = `${np.port} (${np.key})`;
  if (np.port === 0) return { status: 'ok', message: '', what: `${label}: any free port` };
  const bound = await tryBind(np.host, np.port);
  if (bound.free) return { status: 'ok', message: '', what: `${label}: free` };
  const node = ctx.node.state === 'running' ? ctx.node.pid : undefined;
  if (bound.code === 'EADDRINUSE') {
    const holder = portHolder(np.port, node);
    if (holder && holder.pid === node) return { status: 'ok', message: '', what: `${label}: held by this home's node (pid ${node})` };
    if (!holder && node !== undefined) {
      return { status: 'ok', message: '', what: `${label}: in use, presumably by this home's node (pid ${node}; the holder could not be read)` };
    }
    const who = holder ? `process ${holder.pid}${holder.command ? ` (${holder.command})` : ''}` : 'another process (its pid could not be found)';
    const free = await nextFreePort(np.host, np.port);
    const move = `move the node with ${np.flag} ${np.form(free ?? np.port + 1)} (${np.key} in node.yml)`;
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
  return { status: 'fail', message: '', what: `${label}: ${why}`, remedy: `choose another address with ${np.flag} (${np.key} in node.yml)` };
}

export const portsCheck: Check = {
  id: 'ports',
  verifies: 'the ports the node listens on (rpc.address 7331, rpc.status_address 26657, p2p.listen_address 7676 as configured; the built-in DA and metrics when on) are free or held by this home\'s running node',
  async run(ctx) {
    const results = await Promise.all(nodePorts(ctx).map((np) => checkPort(ctx, np)));
    const failed = results.filter((r) => r.status === 'fail');
    if (failed.length > 0) {
      return { status: 'fail', message: failed.map((r) => r.what).join('; '), remedy: failed.map((r) => r.remedy).join('; ') };
    }
    return { status: 'ok', message: results.map((r) => r.what).join(', ') };
  },
};
