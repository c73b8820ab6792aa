import { until } from './node.js';
import { freePort } from './ports.js';
import { exited, type Scope } from './scope.js';

/*
 * A real etcd (Debian's etcd-server) on 127.0.0.1: the arguments and the
 * health check the tests' EtcdServer (test/helpers/etcd.ts) and the bench's
 * failover figure share.
 */

/** Where one etcd listens and keeps its data. */
export interface EtcdPlace {
  dataDir: string;
  clientPort: number;
  peerPort: number;
}

export const etcdEndpoint = (place: EtcdPlace): string => `http://127.0.0.1:${place.clientPort}`;

/** `etcd` arguments for a one-member cluster named "test" at `place`. */
export function etcdArgs(place: EtcdPlace): string[] {
  const client = etcdEndpoint(place);
  const peer = `http://127.0.0.1:${place.peerPort}`;
  return [
    '--name=test',
    `--data-dir=${place.dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=test=${peer}`,
    '--log-level=warn',
    // A block recorded for takeover can be as large as a DA blob (about 2 MB); etcd's default request cap is 1.5 MiB.
    '--max-request-bytes=8388608',
  ];
}

/** Whether etcd's /health says it is healthy (false while it does not answer). */
export async function etcdHealthy(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`);
    return res.ok && ((await res.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

/** An etcd child of the scope (killed when it closes), with a temp data dir; resolves with its client URL once healthy. */
export async function startEtcd(scope: Scope): Promise<string> {
  const place = { dataDir: scope.tempDir('noded-bench-etcd-'), clientPort: await freePort(), peerPort: await freePort() };
  const child = scope.spawn('etcd', etcdArgs(place), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
  let gone = false;
  void exited(child).then(() => (gone = true));
  const endpoint = etcdEndpoint(place);
  let healthy = false;
  const poll = (async () => {
    while (!gone && !(healthy = await etcdHealthy(endpoint))) await new Promise((r) => setTimeout(r, 100));
  })();
  await until(() => healthy || gone, 30_000, `etcd on ${endpoint} to be healthy`);
  await poll;
  if (!healthy) throw new Error(`etcd exited before it was healthy (is etcd-server installed?):\n${stderr}`);
  return endpoint;
}
