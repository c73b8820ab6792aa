import type { Etcd3 } from 'etcd3';
import { sleep } from '../util/index.js';
import { checkEtcdReachable, createEtcdClient, type EtcdSettings } from './etcd.js';
import { decodeHead, decodeLeader, decodeStepDown, haKeys, type LeaderInfo, type StepDownRequest } from './keys.js';

/*
 * What `noded ha status` and `noded ha step-down` do: they read and write the
 * cluster's etcd keys (keys.ts) directly, with the node's own etcd settings,
 * so they work whichever node leads and while no node answers.
 */

/** How long each etcd call of these commands waits. */
const CALL_TIMEOUT_MS = 5000;
const deadline = () => ({ deadline: Date.now() + CALL_TIMEOUT_MS });

/** One etcd member as `ha status` reports it. */
export interface EtcdMemberHealth {
  name: string;
  endpoint: string;
  healthy: boolean;
  /** Why it is not healthy (no answer, or no client URL yet). */
  error?: string;
}

/** `noded ha status --json`. */
export interface HaStatusReport {
  key_prefix: string;
  /** Who leads, where its RPC listens, and its lease; null while nobody does. */
  leader: (LeaderInfo & { lease_id: string; lease_ttl_seconds: number; lease_seconds_left: number }) | null;
  /** The last block the cluster fenced; null before the first. */
  head: { height: number; hash: string } | null;
  /** A step-down request not taken yet. */
  step_down: StepDownRequest | null;
  members: EtcdMemberHealth[];
}

/** Each member's health: a status call to its first client URL, with the same credentials. */
async function membersHealth(etcd: Etcd3, settings: EtcdSettings): Promise<EtcdMemberHealth[]> {
  const { members } = await etcd.cluster.memberList({}, deadline());
  return Promise.all(
    members.map(async (m): Promise<EtcdMemberHealth> => {
      const endpoint = m.clientURLs[0];
      if (!endpoint) return { name: m.name, endpoint: '', healthy: false, error: 'the member has not started (no client URL)' };
      const one = createEtcdClient({ ...settings, endpoints: [endpoint] });
      try {
        await one.maintenance.status(deadline());
        return { name: m.name, endpoint, healthy: true };
      } catch (err) {
        return { name: m.name, endpoint, healthy: false, error: (err as Error).message };
      } finally {
        one.close();
      }
    }),
  );
}

/** Reads the cluster's state from etcd; throws (code HA_ETCD_UNREACHABLE) when etcd does not answer. */
export async function readHaStatus(etcd: Etcd3, settings: EtcdSettings, prefix: string): Promise<HaStatusReport> {
  const keys = haKeys(prefix);
  await checkEtcdReachable(etcd, settings, keys.leader);
  const [leaderKv, headText, stepDownText, members] = await Promise.all([
    etcd.get(keys.leader).options(deadline()).exec(),
    etcd.get(keys.head).options(deadline()).string(),
    etcd.get(keys.stepDown).options(deadline()).string(),
    membersHealth(etcd, settings),
  ]);
  let leader: HaStatusReport['leader'] = null;
  const kv = leaderKv.kvs[0];
  const info = kv ? decodeLeader(kv.value.toString()) : null;
  if (kv && info) {
    const lease = await etcd.leaseClient.leaseTimeToLive({ ID: kv.lease }, deadline());
    leader = { ...info, lease_id: kv.lease, lease_ttl_seconds: Number(lease.grantedTTL), lease_seconds_left: Math.max(0, Number(lease.TTL)) };
  }
  const head = headText === null ? null : decodeHead(headText, keys.head);
  return {
    key_prefix: prefix,
    leader,
    head: head && { height: Number(head.height), hash: Buffer.from(head.hash).toString('hex').toUpperCase() },
    step_down: stepDownText === null ? null : decodeStepDown(stepDownText),
    members,
  };
}

/** A step-down that could not be asked for or did not happen; `code` is the command's error code. */
export class StepDownError extends Error {
  constructor(
    message: string,
    readonly code: 'HA_NO_LEADER' | 'HA_STEP_DOWN_TIMEOUT',
  ) {
    super(message);
  }
}

/** How long a step-down request lives in etcd when no leader takes it (the leader it names died meanwhile). */
const REQUEST_TTL_S = 30;

/**
 * Asks the current leader to hand over: puts <prefix>/step-down naming it,
 * bound to a short lease (a request nobody takes must not make the same node
 * step down when it leads again later), then waits until another node holds
 * the leader key. Resolves with the old and the new leader.
 */
export async function stepDown(
  etcd: Etcd3,
  settings: EtcdSettings,
  prefix: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ from: LeaderInfo; to: LeaderInfo }> {
  const keys = haKeys(prefix);
  await checkEtcdReachable(etcd, settings, keys.leader);
  const current = async () => {
    const text = await etcd.get(keys.leader).options(deadline()).string();
    return text === null ? null : decodeLeader(text);
  };
  const from = await current();
  if (!from) throw new StepDownError(`no node leads under ${prefix} (the leader key is absent): there is no leader to step down`, 'HA_NO_LEADER');
  const lease = etcd.lease(REQUEST_TTL_S, { autoKeepAlive: false });
  await lease
    .put(keys.stepDown)
    .value(JSON.stringify({ node_id: from.node_id, requested_at: new Date().toISOString() } satisfies StepDownRequest))
    .exec();
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const now = await current().catch(() => null);
    if (now && now.node_id !== from.node_id) return { from, to: now };
    await sleep(100, signal);
  }
  throw new StepDownError(
    `leader ${from.node_id} was asked to step down but no other node led within ${timeoutMs / 1000}s: are other HA nodes of the chain running and caught up? (it campaigns again after its hold-off)`,
    'HA_STEP_DOWN_TIMEOUT',
  );
}
