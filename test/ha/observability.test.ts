import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatHostPort } from '../../src/config/index.js';
import { NodeClient } from '../../src/client/index.js';
import { HttpSource, NodeSource, buildView, type DashboardSource } from '../../src/dashboard/index.js';
import { CHECKS, buildContext, runCheck, type CheckResult, type DoctorOptions } from '../../src/doctor/index.js';
import { createEtcdClient, haKeys } from '../../src/ha/index.js';
import { initHome } from '../../src/home/index.js';
import { silentLogger } from '../../src/log/index.js';
import { Node } from '../../src/node/index.js';
import { freePort, tempHome } from '../helpers/daemon.js';
import { EtcdServer } from '../helpers/etcd.js';
import { sampleValue, scrape } from '../helpers/metrics.js';
import { portZeroHome } from '../helpers/node-parts.js';
import { waitFor } from '../helpers/wait.js';

/*
 * What shows an HA node's role and leader, against a real etcd and a real HA
 * node in this process: doctor's `ha` check, /metrics and the dashboard.
 */

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let etcd: EtcdServer;
beforeAll(async () => {
  etcd = await EtcdServer.start();
});
afterAll(async () => {
  await etcd?.remove();
});

const haCheck = CHECKS.find((c) => c.id === 'ha')!;
/** Each check's bound: wide enough for a loaded machine's etcd and node. */
const TIMEOUT_MS = 15_000;

/** The ha section as flags, on the test's etcd and under a prefix of its own. */
const haFlags = (prefix: string, endpoint = etcd.endpoint) => ({
  'ha.enabled': true,
  'ha.etcd_endpoints': endpoint,
  'ha.key_prefix': prefix,
  'ha.lease_ttl': '2s',
});

function home(chainId: string): string {
  const h = tempHome('noded-ha-obs-');
  cleanups.push(h.cleanup);
  initHome({ home: h.dir, chainId, aggregator: true, force: false });
  return h.dir;
}

const doctorHa = (opts: Omit<DoctorOptions, 'env' | 'timeoutMs'>): Promise<CheckResult> =>
  runCheck(haCheck, buildContext({ ...opts, env: {}, timeoutMs: TIMEOUT_MS }));

describe('doctor ha without a running cluster', () => {
  it('skipped when ha.enabled is false; an invalid ha section defers to config; etcd not answering fails naming the endpoint and the key; nobody leading fails', async () => {
    const dir = home('ha-obs-1');
    expect(await doctorHa({ home: dir })).toEqual({
      id: 'ha',
      status: 'ok',
      message: 'skipped: ha.enabled is false (this node runs without an HA cluster)',
      remedy: '',
    });

    const invalid = await doctorHa({ home: dir, flags: { 'ha.enabled': true } });
    expect(invalid).toMatchObject({ status: 'warn', remedy: 'see config' });
    expect(invalid.message).toMatch(/^not checked: the ha section does not validate \(.*ha\.etcd_endpoints: got "", expected at least one etcd URL/);

    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const down = await doctorHa({ home: dir, flags: haFlags('/noded/ha-obs-1', nowhere) });
    expect(down.status, down.message).toBe('fail');
    expect(down.message).toContain(`etcd at ${nowhere} did not answer a read of /noded/ha-obs-1/leader`);
    expect(down.remedy).toContain(`start etcd at ${nowhere} (\`curl ${nowhere}/health\` answers {"health":"true"} from a healthy member)`);
    expect(down.remedy).toContain('ha.etcd_endpoints (now from flag --node.ha.etcd_endpoints)');
    // The remedy's probe, on a healthy member, answers as it says.
    expect(await (await fetch(`${etcd.endpoint}/health`)).json()).toMatchObject({ health: 'true' });

    const nobody = await doctorHa({ home: dir, flags: haFlags('/noded/ha-obs-nobody') });
    expect(nobody.status, nobody.message).toBe('fail');
    expect(nobody.message).toMatch(/^no node leads under \/noded\/ha-obs-nobody \(the leader key is absent, still 2s later\): the chain makes no blocks/);
    expect(nobody.message).toContain(`etcd at ${etcd.endpoint} answers, 1 of 1 member(s) healthy`);
    expect(nobody.remedy).toContain('every one must use the key prefix /noded/ha-obs-nobody (ha.key_prefix)');

    // A member added to etcd that never started (a learner, so the one voter keeps its quorum): doctor names it unhealthy.
    const client = createEtcdClient({ endpoints: [etcd.endpoint], caFile: '', certFile: '', keyFile: '', username: '', password: '' });
    cleanups.push(() => client.close());
    const added = await client.cluster.memberAdd({ peerURLs: [`http://127.0.0.1:${await freePort()}`], isLearner: true });
    try {
      const sick = await doctorHa({ home: dir, flags: haFlags('/noded/ha-obs-nobody') });
      expect(sick.status).toBe('fail');
      expect(sick.message).toContain('etcd member(s) unhealthy: (unnamed): the member has not started (no client URL)');
      expect(sick.message).toContain('1 of 2 member(s) healthy');
      expect(sick.remedy).toContain("check each unhealthy member's host and etcd log");
    } finally {
      await client.cluster.memberRemove({ ID: added.member.ID });
    }
  });
});

describe('an HA node in this process', () => {
  it('doctor, /metrics and the dashboard name it leader; a head recorded behind it: the fence refuses, doctor fails "past the head"', async () => {
    const prefix = '/noded/ha-obs-node';
    const flags = { ...haFlags(prefix), 'instrumentation.prometheus': true, 'instrumentation.prometheus_listen_addr': '127.0.0.1:0' };
    const { home: h, config } = portZeroHome('ha-obs-node', flags);
    cleanups.push(h.cleanup);
    const node = await Node.init({ home: h.dir, config, logger: silentLogger(), version: 'test' });
    cleanups.push(() => node.close());
    const fatal: Error[] = [];
    node.start((err) => fatal.push(err));
    await waitFor(() => node.haInfo()?.role === 'leader' && node.chain.height >= 3n, 'the node to lead and make 3 blocks', 30_000);
    const nodeId = node.haInfo()!.node_id;

    // Doctor reads the home with the flags the node runs with (its listeners as bound).
    const address = (l: { address: { host: string; port: number } }) => formatHostPort(l.address.host, l.address.port);
    const { rpc, status, metrics } = node.listeners;
    const doctorFlags = { ...flags, 'rpc.address': address(rpc), 'rpc.status_address': address(status) };
    const ok = await doctorHa({ home: h.dir, flags: doctorFlags });
    expect(ok.status, ok.message).toBe('ok');
    expect(ok.message).toMatch(
      new RegExp(
        `^etcd at ${etcd.endpoint} answers, 1 of 1 member\\(s\\) healthy; leader ${nodeId} \\(RPC http://${address(rpc)}\\), lease \\d+s of 2s left; recorded head (\\d+); this node ${nodeId} \\(leader\\) at height \\d+`,
      ),
    );

    // /metrics: this node leads, one new leader seen (itself), its local deadline ahead, nothing refused.
    const metricsUrl = `http://${address(metrics!)}`;
    const read = async (name: string) => sampleValue((await scrape(metricsUrl)).families, name);
    expect(await read('noded_ha_is_leader')).toBe(1);
    expect(await read('noded_ha_has_leader')).toBe(1);
    expect(await read('noded_ha_leader_changes_seen_total')).toBe(1);
    expect(await read('noded_ha_fence_refusals_total')).toBe(0);
    const deadline = (await read('noded_ha_lease_deadline_seconds'))!;
    expect(deadline).toBeGreaterThan(0);
    expect(deadline).toBeLessThanOrEqual(2);

    // The dashboard, read from this process as `start --dashboard` does and over HTTP as `status --watch` does.
    const haRow = async (source: DashboardSource) => {
      const snapshot = await source.snapshot();
      const view = buildView({ snapshot, readAt: Date.now(), problem: null, log: null }, source.target, 'node', Date.now());
      return view.chain.lines.map((l) => l.map((s) => s.text).join('')).find((l) => l.startsWith('HA '));
    };
    expect(await haRow(new NodeSource(node))).toBe('HA         leader (this node)');
    expect(await haRow(new HttpSource(new NodeClient(address(rpc), address(status), TIMEOUT_MS)))).toBe('HA         leader (this node)');

    // Another program records a head behind this node's chain: the next block's fence is refused.
    const client = createEtcdClient({ endpoints: [etcd.endpoint], caFile: '', certFile: '', keyFile: '', username: '', password: '' });
    cleanups.push(() => client.close());
    await client.put(haKeys(prefix).head).value(`1/${'0'.repeat(64)}`);
    await waitFor(async () => ((await read('noded_ha_fence_refusals_total')) ?? 0) >= 1, 'a fence refusal in /metrics', 30_000);
    const past = await doctorHa({ home: h.dir, flags: doctorFlags });
    expect(past.status, past.message).toBe('fail');
    expect(past.message).toMatch(new RegExp(`this node ${nodeId} \\((leader|follower)\\) holds height \\d+, past the head the cluster recorded \\(1\\)`));
    expect(past.remedy).toContain(`\`noded reset soft --home ${h.dir}\``);
    expect(fatal).toEqual([]);
  });
});
