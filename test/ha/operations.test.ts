import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killAll, latestHeight, runCli, waitFor, type Daemon } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';
import { EtcdServer } from '../helpers/etcd.js';
import { expectOneBlockPerHeight, haFlags, haHomes, leaderOf, roleOf, startHa } from '../helpers/ha.js';
import { Homes } from '../helpers/homes.js';

/*
 * The operator's side of HA on a real etcd: `noded ha status`, `noded ha
 * step-down`, and txs sent to a follower (forwarded to the leader).
 */

const homes = new Homes();
let etcd: EtcdServer;

beforeAll(async () => {
  etcd = await EtcdServer.start();
});

afterEach(async () => {
  await killAll();
  homes.cleanup();
});

afterAll(async () => {
  await etcd?.remove();
});

/** `noded ha <command> --json` against a home of the cluster. */
async function haJson(command: string, home: string, prefix: string, endpoint = etcd.endpoint) {
  const res = await runCli(['ha', command, '--home', home, ...haFlags(endpoint, prefix), '--json']);
  return { code: res.code, json: JSON.parse(res.stdout || '{}'), stderr: res.stderr };
}

/** The HA node id a node reports in `status --json`. */
async function nodeIdOf(d: Daemon): Promise<string> {
  const res = await runCli(['status', '--node', d.rpc, '--json']);
  return JSON.parse(res.stdout).ha.node_id;
}

describe('noded ha on a real etcd', () => {
  it('ha status names the leader from either home; a tx sent to the follower lands in a block; step-down hands over with one block per height', async () => {
    const chainId = 'ha-ops';
    const prefix = `/noded/${chainId}`;
    const hs = await haHomes(homes, chainId, 2);
    const da = await DaServer.start(await homes.create('da-host', false));
    const a = await startHa(hs[0]!, etcd.endpoint, da.address, prefix, []);
    const b = await startHa(hs[1]!, etcd.endpoint, da.address, prefix, [a.p2p]);
    const nodes = [a, b];
    const leader = await leaderOf(nodes);
    const follower = nodes.find((n) => n !== leader)!;
    const leaderHome = hs[nodes.indexOf(leader)]!;
    const followerHome = hs[nodes.indexOf(follower)]!;
    await waitFor(async () => (await latestHeight(follower.rpc)) >= 2, 'the follower to follow', 60_000);

    // ha status: the same view of etcd from either home.
    const leaderId = await nodeIdOf(leader);
    for (const home of [leaderHome, followerHome]) {
      const status = await haJson('status', home, prefix);
      expect(status.code, status.stderr).toBe(0);
      expect(status.json).toMatchObject({ key_prefix: prefix, leader: { node_id: leaderId, rpc: leader.rpc, lease_ttl_seconds: 4 } });
      expect(status.json.leader.lease_seconds_left).toBeGreaterThan(0);
      expect(status.json.head.height).toBeGreaterThanOrEqual(1);
      expect(status.json.head.hash).toMatch(/^[0-9A-F]{64}$/);
      expect(status.json.members).toEqual([{ name: 'test', endpoint: etcd.endpoint, healthy: true }]);
    }

    // A tx POSTed to the follower: the leader's answer, and the tx lands in a block on both.
    const posted = await fetch(`${follower.rpc}/tx`, { method: 'POST', body: 'forwarded=yes' });
    expect(posted.status, await posted.clone().text()).toBe(200);
    expect(((await posted.json()) as { tx_hash: string }).tx_hash).toMatch(/^[0-9A-F]{64}$/);
    for (const n of nodes) {
      await waitFor(async () => (await fetch(`${n.rpc}/kv/forwarded`)).status === 200, 'the forwarded tx to be in a block', 60_000);
    }
    // broadcast_tx_commit on the follower answers once the block holding it is committed there.
    const commit = (await (await fetch(`${follower.status}/broadcast_tx_commit?tx="committed=yes"`)).json()) as { result: { height: string } };
    expect(Number(commit.result.height)).toBeGreaterThan(0);
    expect(await (await fetch(`${leader.rpc}/kv/committed`)).text()).toBe('yes');

    // step-down: the follower takes over, the old leader follows it, and no height has two blocks.
    const handedAt = await latestHeight(leader.rpc);
    const stepDown = await haJson('step-down', followerHome, prefix);
    expect(stepDown.code, stepDown.stderr).toBe(0);
    expect(stepDown.json).toMatchObject({ from: { node_id: leaderId }, to: { rpc: follower.rpc } });
    await waitFor(async () => (await roleOf(follower)) === 'leader' && (await roleOf(leader)) === 'follower', 'the roles to swap', 60_000);
    expect(leader.stderr).toContain('"HA_STEP_DOWN"');
    await waitFor(async () => (await latestHeight(leader.rpc)) >= handedAt + 3, 'the old leader to follow the new one', 60_000);
    expect(await expectOneBlockPerHeight(nodes)).toBeGreaterThanOrEqual(handedAt + 3);
    const after = await haJson('status', leaderHome, prefix);
    expect(after.json.leader.node_id).toBe(stepDown.json.to.node_id);
    expect(after.json.step_down).toBeNull();
  }, 300_000);

  it('ha status with etcd unreachable: exit 1 and the error envelope naming the endpoint', async () => {
    const home = await homes.create('ha-ops-no-etcd', true);
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const res = await haJson('status', home, '/noded/ha-ops-no-etcd', endpoint);
    expect(res.code, res.stderr).toBe(1);
    expect(res.json.error).toMatchObject({ code: 'HA_ETCD_UNREACHABLE', exit: 1 });
    expect(res.json.error.message).toContain(`etcd at ${endpoint} did not answer`);
  }, 60_000);

  it('ha step-down with no leader: exit 1, HA_NO_LEADER', async () => {
    const home = await homes.create('ha-ops-no-leader', true);
    const res = await haJson('step-down', home, '/noded/ha-ops-no-leader');
    expect(res.code, res.stderr).toBe(1);
    expect(res.json.error).toMatchObject({ code: 'HA_NO_LEADER', exit: 1 });
  }, 60_000);
});
