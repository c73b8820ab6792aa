import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killAll, latestHeight, runCli, waitFor, type Daemon } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { EtcdServer } from '../helpers/etcd.js';
import { leaderSilenceMs } from '../../src/ha/coordinator.js';
import { HaCoordinator, RECORDED_BLOCKS, createEtcdClient, haKeys } from '../../src/ha/index.js';
import { silentLogger } from '../../src/log/index.js';
import { systemClock } from '../../src/util/index.js';
import { TxStream, expectCommittedKept, expectOneBlockPerHeight, haHomes, leaderOf, roleOf, startHa } from '../helpers/ha.js';
import { Homes } from '../helpers/homes.js';

/*
 * Three HA aggregators (spawned `noded start`, one genesis and one signer key,
 * their own P2P identities) on one real etcd and one DA server. Faults are made
 * when the test sees the cluster ready for them, never on a timer.
 */

const homes = new Homes();
let etcd: EtcdServer;

beforeAll(async () => {
  etcd = await EtcdServer.start();
});

afterEach(async () => {
  await killAll();
  await etcd.start();
  homes.cleanup();
});

afterAll(async () => {
  await etcd?.remove();
});

/** How many of a node's log lines carry `text` (a message or a code, quoted as in JSON). */
const linesWith = (d: Daemon, text: string) => d.stderr.split('\n').filter((l) => l.includes(`"${text}"`)).length;

async function cluster(chainId: string, blockTime?: string): Promise<{ nodes: Daemon[]; homes: string[]; da: DaServer; prefix: string }> {
  const hs = await haHomes(homes, chainId, 3);
  const da = await DaServer.start(await homes.create('da-host', false));
  const prefix = `/noded/${chainId}`;
  const a = await startHa(hs[0]!, etcd.endpoint, da.address, prefix, [], blockTime);
  const b = await startHa(hs[1]!, etcd.endpoint, da.address, prefix, [a.p2p], blockTime);
  const c = await startHa(hs[2]!, etcd.endpoint, da.address, prefix, [a.p2p, b.p2p], blockTime);
  return { nodes: [a, b, c], homes: hs, da, prefix };
}

/** `noded start` of an HA node expected to fail at start: its exit code and stderr. */
function startHaFails(home: string, args: string[]) {
  const ports = ['--node.rpc.address', '127.0.0.1:0', '--node.rpc.status_address', '127.0.0.1:0', '--node.p2p.listen_address', '/ip4/127.0.0.1/tcp/0'];
  const da = ['--node.da.local', '--node.da.address', 'http://127.0.0.1:0'];
  return runCli(['start', '--home', home, ...ports, ...da, '--node.ha.enabled', ...args], { OCLIF_COLUMNS: '1000' });
}

describe('HA start-up', () => {
  it('an etcd that does not answer is an error at start naming the endpoint and what was expected', async () => {
    const home = await homes.create('ha-no-etcd', true);
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const res = await startHaFails(home, ['--node.ha.etcd_endpoints', endpoint]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`etcd at ${endpoint} did not answer`);
    expect(res.stderr).toContain('expected a running etcd v3 answering gRPC there; check ha.etcd_endpoints');
  });

  it('an HA node must be an aggregator', async () => {
    const home = await homes.create('ha-full-node', false);
    const res = await startHaFails(home, ['--node.ha.etcd_endpoints', etcd.endpoint]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('ha.enabled needs node.aggregator');
  });
});

describe('HA aggregators on a real etcd', () => {
  // One cluster for the faults in turn: each step starts from a cluster the step before left whole (three
  // nodes running, one leader), and a cluster costs three `noded start`s and an election (was three clusters).
  it('under load: kill -9 of the leader (another takes over from its head; status tells the roles; the old leader follows), then an etcd restart (the leader stops producing; production goes on from the recorded head), keep every tx answered committed; then a follower left far behind stays out of the election until it caught up', async () => {
    // 100 ms blocks: the leader gets more than RECORDED_BLOCKS ahead of a stopped follower sooner.
    const fast = '100ms';
    const { nodes, homes: hs, da, prefix } = await cluster('ha-load', fast);
    const first = await leaderOf(nodes);
    await waitFor(async () => (await Promise.all(nodes.map((n) => latestHeight(n.rpc)))).every((h) => h >= 2), 'the cluster to produce and follow', 60_000);
    let live = nodes;
    const stream = new TxStream(() => live, 'load');
    await waitFor(() => stream.committedCount >= 20, 'txs to be answered committed', 60_000);

    // kill -9 of the leader amid the stream; another leader goes on and the txs keep being committed.
    await first.kill('SIGKILL');
    live = nodes.filter((n) => n !== first);
    const second = await leaderOf(live);
    const takeoverHeight = await latestHeight(second.rpc);
    const killedAt = stream.committedCount;
    await waitFor(() => stream.committedCount >= killedAt + 20, 'txs to be committed under the new leader', 60_000);
    await waitFor(async () => (await latestHeight(second.rpc)) >= takeoverHeight + 5, 'the new leader to produce 5 blocks', 60_000);
    const third = live.find((n) => n !== second)!;
    await waitFor(async () => (await latestHeight(third.rpc)) >= takeoverHeight + 3, 'the other follower to follow the new leader', 60_000);

    // status --json and /status tell the roles and the leader (asked of the one leading now: the stream loads the machine).
    const leading = await leaderOf(live);
    const following = live.find((n) => n !== leading)!;
    const leaderStatus = await runCli(['status', '--node', leading.rpc, '--json']);
    expect(leaderStatus.code, leaderStatus.stderr).toBe(0);
    const leaderHa = JSON.parse(leaderStatus.stdout).ha;
    expect(leaderHa).toMatchObject({ role: 'leader', leader: leaderHa.node_id });
    const followerStatus = await runCli(['status', '--node', following.rpc, '--json']);
    expect(JSON.parse(followerStatus.stdout).ha).toMatchObject({ role: 'follower', leader: leaderHa.node_id });
    const comet = (await (await fetch(`${following.status}/status`)).json()) as { result: { node_info: { other: Record<string, string> } } };
    expect(comet.result.node_info.other).toMatchObject({ ha_role: 'follower', ha_leader: leaderHa.node_id });

    // The old leader comes back as a follower: the blocks it holds agree with the cluster's (its intake refuses any other).
    const restarted = await startHa(
      hs[nodes.indexOf(first)]!,
      etcd.endpoint,
      da.address,
      prefix,
      live.map((n) => n.p2p),
      fast,
    );
    live = [...live, restarted];
    const homeOf = (d: Daemon) => (d === restarted ? hs[nodes.indexOf(first)]! : hs[nodes.indexOf(d)]!);
    await waitFor(async () => (await latestHeight(restarted.rpc)) >= takeoverHeight + 5, 'the old leader to follow as a follower', 60_000);
    expect(await expectOneBlockPerHeight([second, third, restarted])).toBeGreaterThanOrEqual(takeoverHeight + 3);

    // etcd restarts amid the stream: nobody may lead with etcd gone, and the leader stops its producer.
    const cutOff = await leaderOf(live);
    const stopped = linesWith(cutOff, 'block production stopped');
    await etcd.stop();
    await waitFor(async () => (await Promise.all(live.map(roleOf))).every((r) => r === 'follower'), 'every node to follow with etcd gone', 60_000);
    await waitFor(() => linesWith(cutOff, 'block production stopped') > stopped, 'the leader to stop producing', 60_000);
    const stoppedAt = await latestHeight(cutOff.rpc);
    // Once etcd is back a leader goes on from the recorded head, on every node, and the txs keep being committed.
    await etcd.start();
    const leader = await leaderOf(live);
    const restartedAt = stream.committedCount;
    await waitFor(() => stream.committedCount >= restartedAt + 20, 'txs to be committed once etcd is back', 60_000);
    await waitFor(
      async () => (await Promise.all(live.map((n) => latestHeight(n.rpc)))).every((h) => h >= stoppedAt + 3),
      'production to go on on every node once etcd is back',
      60_000,
    );
    await stream.stop();
    await expectCommittedKept(live, stream);
    await expectOneBlockPerHeight(live);
    for (const n of live) expect(n.running).toBe(true);

    // A follower goes away while the leader goes on for more blocks than etcd keeps.
    const [follower, behind] = live.filter((n) => n !== leader) as [Daemon, Daemon];
    await behind.kill('SIGKILL');
    const behindAt = await latestHeight(leader.rpc);
    await waitFor(async () => (await latestHeight(follower.rpc)) >= behindAt + Number(RECORDED_BLOCKS) + 5, 'the others to move on', 60_000);
    // It comes back with no peer and no DA to sync from, and the two up-to-date nodes die.
    const alone = await startHa(homeOf(behind), etcd.endpoint, 'http://127.0.0.1:1', prefix, [], fast);
    await waitFor(() => alone.stderr.includes('"HA_BEHIND"'), 'the stale node to say it is behind', 60_000);
    await Promise.all([leader.kill('SIGKILL'), follower.kill('SIGKILL')]);
    const client = createEtcdClient({ endpoints: [etcd.endpoint], caFile: '', certFile: '', keyFile: '', username: '', password: '' });
    try {
      await waitFor(async () => (await client.get(haKeys(prefix).leader).string()) === null, 'the dead leader to lose the leader key', 60_000);
    } finally {
      client.close();
    }
    // An up-to-date node returns and dials it: it leads, and the stale node catches up from it, then may campaign.
    const back = await startHa(homeOf(follower), etcd.endpoint, da.address, prefix, [alone.p2p], fast);
    expect(await leaderOf([alone, back])).toBe(back);
    await waitFor(() => alone.stderr.includes('"HA_CAUGHT_UP"'), 'the stale node to catch up', 60_000);
    expect(alone.stderr).not.toContain('won the leader election');
    const top = await latestHeight(back.rpc);
    await waitFor(async () => (await latestHeight(alone.rpc)) >= top, 'the caught-up node to follow', 60_000);
    await expectOneBlockPerHeight([back, alone]);
  }, 300_000);
});

describe('a silent leader', () => {
  it('is deposed by a follower that saw it beat: its lease is revoked long before it would expire', async () => {
    const settings = { endpoints: [etcd.endpoint], caFile: '', certFile: '', keyFile: '', username: '', password: '' };
    const [client, followerClient] = [createEtcdClient(settings), createEtcdClient(settings)];
    const keys = haKeys('/noded/ha-silent');
    const stop = new AbortController();
    let leading = false;
    const follower = new HaCoordinator(
      {
        etcd: followerClient,
        settings: { nodeId: 'follower', rpcAddress: 'http://follower', leaseTtlMs: 2000, keyPrefix: '/noded/ha-silent' },
        logger: silentLogger(),
        clock: systemClock,
      },
      {
        chain: { head: () => ({ height: 0n, hash: new Uint8Array(32) }), applyRecorded: async () => undefined },
        startLeading: () => void (leading = true),
        stopLeading: async () => void (leading = false),
      },
    );
    try {
      // A leader with a 60 s lease that beats once the follower watches, then goes silent (a hung or crashed process).
      const lease = client.lease(60, { autoKeepAlive: false });
      const value = JSON.stringify({ node_id: 'hung', rpc: 'http://hung' });
      await client
        .put(keys.leader)
        .value(value)
        .lease(await lease.grant());
      let fatal: Error | null = null;
      follower.start(stop.signal, (err) => (fatal = err));
      await waitFor(() => follower.leader?.node_id === 'hung', 'the follower to see the leader');
      await client
        .put(keys.leader)
        .value(value)
        .lease(await lease.grant());
      // Well inside the 60 s lease: only a revocation lets the follower lead this soon.
      await waitFor(() => leading, 'the follower to depose the silent leader and lead', 10 * leaderSilenceMs(2000));
      expect(await client.get(keys.leader).string()).toContain('"follower"');
      expect(fatal).toBeNull();
    } finally {
      stop.abort(new Error('test over'));
      await follower.stopped();
      client.close();
      followerClient.close();
    }
  }, 60_000);
});
