import type { Etcd3 } from 'etcd3';
import type { Config } from '../config/index.js';
import type { Mempool } from '../exec/index.js';
import {
  FenceRejectedError,
  HaCoordinator,
  checkEtcdReachable,
  createEtcdClient,
  decodeSubmission,
  encodeLeader,
  etcdSettingsOf,
  haKeyPrefix,
  haKeys,
  type LeaderDuties,
  type LeaderInfo,
} from '../ha/index.js';
import type { Logger } from '../log/index.js';
import { decodeBlock } from '../types/index.js';
import { systemClock } from '../util/index.js';
import type { DaSubmitter, SharedSubmissions } from '../da/index.js';
import type { Chain } from './chain.js';
import type { BlockIntake } from './intake.js';
import type { Closers } from './parts.js';

/*
 * How an HA node (ha.enabled) is wired: every HA node is an aggregator with
 * the signer key, but only the leader the coordinator elects runs the producer
 * and the DA submitter; the others follow over P2P and stand by.
 */

/** The etcd client, checked to answer before anything else opens (a bad or unreachable etcd fails the start). */
export async function openEtcd(config: Config, homeDir: string, chainId: string, closers: Closers): Promise<Etcd3> {
  if (!config.node.aggregator) {
    throw new Error('ha.enabled needs node.aggregator: every HA node holds the aggregator signer key and stands ready to produce (--node.node.aggregator)');
  }
  const settings = etcdSettingsOf(config.ha, homeDir);
  const etcd = createEtcdClient(settings);
  closers.push(() => etcd.close());
  await checkEtcdReachable(etcd, settings, `${haKeyPrefix(config, chainId)}/leader`);
  return etcd;
}

/** The coordinator of a running node: it takes over through the intake and leads by starting `duties`. */
export function buildHaCoordinator(
  p: {
    etcd: Etcd3;
    config: Config;
    chainId: string;
    peerId: string;
    rpcAddress: string;
    logger: Logger;
    chain: Chain;
    intake: BlockIntake;
    mempool: Pick<Mempool, 'requeue'>;
    submitter: DaSubmitter | null;
  },
  duties: Omit<LeaderDuties, 'chain'>,
): HaCoordinator {
  const { config, chain } = p;
  const settings = {
    nodeId: config.ha.node_id || p.peerId,
    rpcAddress: p.rpcAddress,
    leaseTtlMs: config.ha.lease_ttl,
    keyPrefix: haKeyPrefix(config, p.chainId),
  };
  if (p.submitter) {
    const leader = { node_id: settings.nodeId, rpc: settings.rpcAddress };
    p.submitter.shared = etcdSubmissions(p.etcd, settings.keyPrefix, leader, settings.leaseTtlMs, p.logger.child({ module: 'da-submitter' }));
  }
  const coordinator = new HaCoordinator(
    {
      etcd: p.etcd,
      settings,
      logger: p.logger.child({ module: 'ha' }),
      clock: systemClock,
    },
    {
      ...duties,
      chain: {
        head: () => ({ height: chain.height, hash: chain.currentState.lastHeaderHash }),
        applyRecorded: async (bytes) => void (await p.intake.apply(decodeBlock(bytes))),
      },
    },
  );
  // Fencing: no block of this node's is committed (nor gossiped) before etcd recorded it as the leader's.
  // A refused block is dropped: its txs go back to the mempool, at the head of the line, for this node's next term
  // (they are kept in the store's mempool bucket, so a restart keeps them too).
  chain.beforeCommit = async (block) => {
    try {
      await coordinator.fence(block);
    } catch (err) {
      if (err instanceof FenceRejectedError) p.mempool.requeue(decodeBlock(block.bytes).data?.txs ?? []);
      throw err;
    }
  };
  return coordinator;
}

/** A fence refusal stops production by itself (the coordinator stepped down): it is no reason to stop the node. */
export const unlessFenced =
  (onFatal: (err: Error) => void) =>
  (err: Error): void => {
    if (!(err instanceof FenceRejectedError)) onFatal(err);
  };

/**
 * The DA submissions of the cluster's leaders, in etcd (<prefix>/da-submission):
 * a leader records each before sending it, so the next leader knows how far
 * the old one may have posted and its DA search need not wait out the
 * inclusion window for blocks never sent (DaSubmitter.inheritSubmission). A
 * record is written only while this node's leader key is in etcd, so a
 * deposed leader cannot overwrite what its successor reads or records.
 */
export function etcdSubmissions(etcd: Etcd3, keyPrefix: string, leader: LeaderInfo, ttlMs: number, logger: Logger): SharedSubmissions {
  const keys = haKeys(keyPrefix);
  return {
    async record(pending) {
      try {
        const res = await etcd
          .if(keys.leader, 'Value', '==', encodeLeader(leader))
          .then(etcd.put(keys.daSubmission).value(JSON.stringify(pending)))
          .options({ deadline: Date.now() + ttlMs })
          .commit();
        return res.succeeded;
      } catch (err) {
        logger.warn({ code: 'HA_DA_RECORD_FAILED', err: (err as Error).message }, 'recording the DA submission in etcd failed; it is sent once recorded');
        return false;
      }
    },
    async last() {
      const text = await etcd
        .get(keys.daSubmission)
        .options({ deadline: Date.now() + ttlMs })
        .string();
      return text === null ? null : decodeSubmission(text, keys.daSubmission);
    },
  };
}
