import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Below this no port is tried: the well-known and registered ports the machine's own services may use. */
const LOWEST = 20_000;
/** Ports this process handed out already: each goes to one caller. */
const handedOut = new Set<number>();

/** The kernel's ephemeral port range (what port 0 and outgoing connections are given), Linux's default without /proc. */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(lo) && Number.isInteger(hi)) return [lo!, hi!];
  } catch {
    // not Linux: assume its default
  }
  return [32_768, 60_999];
}

/** Binds `port` on 127.0.0.1 and lets it go: the port the kernel gave, or null when it is taken. */
function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A TCP port free on 127.0.0.1 right now, for configs that must name a port
 * before their process starts. Taken below the kernel's ephemeral range: a
 * port 0 asks for (another test's listener, an outgoing connection) comes from
 * that range, so it cannot take this port between now and its use, as it could
 * when this handed out a port 0 had given.
 */
export async function freePort(): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const span = ephemeralLow - LOWEST;
  if (span >= 1_000) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const port = LOWEST + Math.floor(Math.random() * span);
      if (handedOut.has(port) || (await tryListen(port)) === null) continue;
      handedOut.add(port);
      return port;
    }
  }
  // An ephemeral range reaching low (or 100 taken ports in a row): what port 0 gives.
  const port = await tryListen(0);
  if (port === null) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}
