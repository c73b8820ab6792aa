import { EtcdLeaseInvalidError, type ComparatorBuilder, type Etcd3, type Lease } from 'etcd3';
import type { Logger } from '../log/index.js';
import { Backoff, type Clock, onAbort, runLoop } from '../util/index.js';
import {
  RECORDED_BLOCKS,
  decodeHead,
  decodeLeader,
  decodeStepDown,
  encodeHead,
  encodeLeader,
  haKeys,
  type HaKeys,
  type LeaderInfo,
  type RecordedHead,
} from './keys.js';

/** What this node is in the election, from the ha section. */
export interface HaSettings {
  nodeId: string;
  /** Where this node's RPC listens, told to the others in the leader key. */
  rpcAddress: string;
  /** The lease TTL asked of etcd, whole seconds in ms. */
  leaseTtlMs: number;
  keyPrefix: string;
}

export type HaRole = 'leader' | 'follower';

/** The chain as a takeover reads and extends it. */
export interface TakeoverChain {
  /** The last block this node holds (height 0 before the first). */
  head(): RecordedHead;
  /** Validates, executes and commits a block fetched from etcd: the next height. */
  applyRecorded(bytes: Uint8Array): Promise<void>;
}

/** What the node does as its role changes (ev-node block/components.go: a role change starts or stops components). */
export interface LeaderDuties {
  chain: TakeoverChain;
  /** Starts the producer and the DA submitter. */
  startLeading(): void;
  /** Stops them; resolves once the block under way is done (idempotent). */
  stopLeading(): Promise<void>;
}

/** The parts the coordinator is built from (src/node/parts.ts style): nothing here is opened by it. */
export interface HaParts {
  etcd: Etcd3;
  settings: HaSettings;
  logger: Logger;
  /** Time as the coordinator reads it and waits on it (a test may hand in its own). */
  clock: Clock;
}

/** A block the leader asks etcd to record before it commits it. */
export interface FencedBlock {
  height: bigint;
  hash: Uint8Array;
  /** The header's last_header_hash: the recorded head must be this block's parent. */
  parentHash: Uint8Array;
  bytes: Uint8Array;
}

/** The fence refused a block (or could not ask): the block is dropped and this node no longer produces. */
export class FenceRejectedError extends Error {
  readonly code = 'HA_FENCE_REJECTED';
}

/**
 * How long before its lease could expire at etcd a leader that has not renewed
 * it stops producing: a quarter of the TTL, at least 100 ms. The lease expires
 * at etcd no sooner than TTL after the keep-alive was SENT, so the local
 * deadline counts from the send time of the last keep-alive that succeeded.
 */
export const deadlineMarginMs = (ttlMs: number): number => Math.max(100, Math.floor(ttlMs / 4));

/** How long a leader that handed over waits before it campaigns again: one lease TTL, ample for a follower to win. */
export const stepDownHoldOffMs = (ttlMs: number): number => ttlMs;

/**
 * How often a leader re-puts its leader key (bound to its lease, only while
 * the lease still holds it): the heartbeat the followers watch, an eighth of
 * the TTL.
 */
const heartbeatMs = (ttlMs: number): number => Math.floor(ttlMs / 8);

/**
 * How long a follower waits, after the last heartbeat it saw, before it takes
 * the leader for dead and revokes its lease: half the TTL (four heartbeats
 * missed). A crashed leader is then replaced in about this long instead of
 * the whole TTL the lease would take to expire. Safe whatever the leader's
 * state: a leader whose lease is revoked cannot fence another block (the
 * fence compares the leader key's lease), so at worst a live but stalled
 * leader hands over.
 */
export const leaderSilenceMs = (ttlMs: number): number => Math.floor(ttlMs / 2);

/** How often a node too far behind to campaign looks at the recorded head again: a quarter of the TTL. */
const behindPollMs = (ttlMs: number): number => Math.floor(ttlMs / 4);

/** The last heartbeat of the leader a follower saw: the key's lease and revision then, and when (clock.now()). */
interface Heartbeat {
  lease: string;
  modRevision: string;
  seenAt: number;
}

/** One stint as leader: the lease that holds the leader key, and when this node must stop producing without a renewal. */
interface Term {
  lease: Lease;
  leaseId: string;
  /** Aborted when leadership ends, for whatever reason (its reason says which). */
  lost: AbortController;
  /** clock.now() ms at which the node stops producing unless a keep-alive succeeds first. */
  deadlineAt: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Leader election through etcd, with fencing (issue 20).
 *
 * Campaign: grant a lease, then put the leader key bound to it only if the key
 * is absent (one txn comparing its create_revision with 0, as etcd's own
 * concurrency.Election does in client/v3/concurrency/election.go, minus the
 * queue of candidates). The winner keeps the lease alive every TTL/3 (as
 * etcd's clientv3 lease.go does) and holds a LOCAL deadline: TTL minus a margin
 * after the last keep-alive that succeeded, counted from its send time; past it
 * the node stops producing whatever the network does, before etcd can expire
 * the lease and elect another. The others watch the key and campaign when it is
 * deleted (lease expired or revoked). The leader also re-puts the key every
 * TTL/8, a heartbeat: a follower that saw heartbeats and then none for TTL/2
 * revokes the leader's lease, so a crashed leader is replaced in about half
 * the TTL rather than the whole (etcd's lessor, server/lease/lessor.go, also
 * checks for expired leases only every 500 ms).
 *
 * Fencing: each produced block is recorded in etcd before the leader commits
 * it, in one txn that succeeds only while this node's lease holds the leader
 * key and the recorded head is the block's parent (ev-node's raft leader
 * likewise proposes each block to raft before committing its batch:
 * block/internal/executing/executor.go). Takeover: a new leader first makes its
 * chain hold exactly the recorded head, applying the recorded blocks it lacks
 * (ev-node pkg/raft/election.go: IsSynced/Recover before leader operations).
 */
export class HaCoordinator {
  role: HaRole = 'follower';
  /** New leaders seen, for /metrics: each time `leader` names a node other than the one before (etcd's leader_changes_seen_total, server/etcdserver/raft.go). */
  leaderChanges = 0;
  /** Blocks the fence refused or could not record, for /metrics. */
  fenceRefusals = 0;
  private seenLeader: LeaderInfo | null = null;
  private term: Term | null = null;
  /** True from a takeover that found no recorded head until the first fence records one. */
  private headAbsent = false;
  /** Set when a term ended on a step-down request: the next campaign waits the hold-off first. */
  private handedOver = false;
  private loop: Promise<void> | null = null;
  private readonly keys: HaKeys;
  private readonly ttlMs: number;

  constructor(
    private readonly parts: HaParts,
    private readonly duties: LeaderDuties,
  ) {
    this.keys = haKeys(parts.settings.keyPrefix);
    this.ttlMs = parts.settings.leaseTtlMs;
  }

  get nodeId(): string {
    return this.parts.settings.nodeId;
  }

  /** Who leads, as last seen in etcd (null while nobody does, or before the first look). */
  get leader(): LeaderInfo | null {
    return this.seenLeader;
  }

  private set leader(info: LeaderInfo | null) {
    if (info && info.node_id !== this.seenLeader?.node_id) this.leaderChanges++;
    this.seenLeader = info;
  }

  /** Milliseconds before this leader stops producing unless a keep-alive succeeds first; null while it does not lead. */
  deadlineLeftMs(): number | null {
    const term = this.term;
    return term && !term.lost.signal.aborted ? Math.max(0, term.deadlineAt - this.parts.clock.now()) : null;
  }

  /** What `status --json`, /node_info and /status show of the election. */
  info(): { node_id: string; role: HaRole; leader: string | null } {
    return { node_id: this.nodeId, role: this.role, leader: this.leader?.node_id ?? null };
  }

  /** Campaigns until `signal` aborts; `onFatal` hears of an error the node cannot go on after. */
  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.loop = runLoop((s) => this.run(s), signal, onFatal);
  }

  /** Resolves once the loop has ended: production stopped and the lease revoked. */
  async stopped(): Promise<void> {
    await this.loop;
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { logger } = this.parts;
    const backoff = new Backoff({ baseMs: 100, maxMs: this.ttlMs });
    while (!signal.aborted) {
      try {
        await this.catchUpBeforeCampaigning(signal);
        const outcome = await this.campaign();
        if (outcome.term) {
          const stood = await this.serve(outcome.term, signal);
          if (this.handedOver) {
            // A planned hand-over: a follower campaigns the moment the key is deleted; this node stands aside meanwhile.
            this.handedOver = false;
            await this.parts.clock.sleep(stepDownHoldOffMs(this.ttlMs), signal);
            continue;
          }
          // A term that ended in a refusal (behind, fenced out) waits before standing again, so another node can win.
          if (!stood) await this.parts.clock.sleep(backoff.next(), signal);
          else backoff.reset();
        } else {
          backoff.reset();
          await this.waitForVacancy(outcome.revision, signal);
        }
      } catch (err) {
        if (signal.aborted) break;
        const delayMs = backoff.next();
        logger.warn({ code: 'HA_ETCD_FAILED', attempt: backoff.attempt, err: (err as Error).message }, `etcd call failed; campaigning again in ${delayMs}ms`);
        await this.parts.clock.sleep(delayMs, signal).catch(() => undefined);
      }
    }
  }

  /**
   * Holds this node out of the election while it is further behind the
   * recorded head than etcd keeps blocks for: it could not take over from
   * etcd alone, and a won election would only be handed back after a wasted
   * lease. It waits, polling the head, while its sync (P2P, DA) catches it up;
   * within RECORDED_BLOCKS of the head it may campaign, and a takeover applies
   * the rest from etcd (ev-node pkg/raft/election.go likewise waits for
   * IsSynced before a node may lead).
   */
  private async catchUpBeforeCampaigning(signal: AbortSignal): Promise<void> {
    let told = false;
    for (;;) {
      const head = await this.recordedHead();
      const local = this.duties.chain.head().height;
      if (!head || head.height - local <= RECORDED_BLOCKS) {
        if (told) this.parts.logger.info({ code: 'HA_CAUGHT_UP', height: Number(local) }, 'caught up with the recorded head: campaigning');
        return;
      }
      if (!told) {
        this.parts.logger.warn(
          { code: 'HA_BEHIND', height: Number(local), recordedHeight: Number(head.height) },
          `this node is at height ${local}, more than ${RECORDED_BLOCKS} blocks behind the recorded head ${head.height}: it catches up from peers before it may lead`,
        );
        told = true;
      }
      await this.parts.clock.sleep(behindPollMs(this.ttlMs), signal);
    }
  }

  /** Grants a lease and puts the leader key bound to it if nobody holds it; else the revision to watch from. */
  private async campaign(): Promise<{ term: Term; revision?: never } | { term?: never; revision: string }> {
    const { etcd, settings, clock } = this.parts;
    const sentAt = clock.now();
    const lease = etcd.lease(this.ttlMs / 1000, { autoKeepAlive: false, deadline: Date.now() + this.ttlMs });
    const leaseId = await lease.grant();
    // encodeLeader: a leader's conditional writes (src/node/ha.ts, etcdSubmissions) compare the key with this value.
    const value = encodeLeader({ node_id: settings.nodeId, rpc: settings.rpcAddress });
    const res = await etcd
      .if(this.keys.leader, 'Create', '==', 0)
      .then(etcd.put(this.keys.leader).value(value).lease(leaseId))
      .else(etcd.get(this.keys.leader))
      .options({ deadline: Date.now() + this.ttlMs })
      .commit();
    if (res.succeeded) {
      // The lease lives at least TTL from the grant's sending: the first deadline counts from there.
      return { term: { lease, leaseId, lost: new AbortController(), deadlineAt: sentAt + this.ttlMs - deadlineMarginMs(this.ttlMs), timer: null } };
    }
    // Someone else leads: this lease is not needed (it would expire anyway).
    await lease.revoke({ deadline: Date.now() + this.ttlMs }).catch(() => undefined);
    const held = res.responses[0]?.response_range?.kvs[0];
    this.leader = held ? decodeLeader(held.value.toString()) : null;
    return { revision: res.header.revision };
  }

  /**
   * Waits until the leader key is deleted after `revision` (its lease expired
   * or was revoked). Meanwhile it watches the leader's heartbeats (puts of the
   * key): once one was seen, a leader silent for leaderSilenceMs is deposed.
   */
  private async waitForVacancy(revision: string, signal: AbortSignal): Promise<void> {
    const { clock } = this.parts;
    const watcher = await this.parts.etcd
      .watch()
      .key(this.keys.leader)
      .startRevision(String(BigInt(revision) + 1n))
      .create();
    let beat: Heartbeat | null = null;
    let deposing = false;
    const silence = leaderSilenceMs(this.ttlMs);
    const check = setInterval(
      () => {
        if (!beat || deposing || clock.now() - beat.seenAt <= silence) return;
        deposing = true;
        const silent = beat;
        void this.deposeIfSilent(silent)
          .then((later) => {
            // The key moved on (a beat whose event is still on its way): count the silence from that read.
            if (later && beat === silent) beat = later;
          })
          .finally(() => (deposing = false));
      },
      Math.max(10, Math.floor(silence / 8)),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        // Aborted while the watch was being created: rejects at once.
        const forgetAbort = onAbort(signal, () => reject(signal.reason));
        watcher.on('put', (kv) => {
          this.leader = decodeLeader(kv.value.toString());
          beat = { lease: kv.lease, modRevision: kv.mod_revision, seenAt: clock.now() };
        });
        watcher.on('delete', () => {
          this.leader = null;
          forgetAbort();
          resolve();
        });
        watcher.on('error', (err) => {
          forgetAbort();
          reject(err);
        });
      });
    } finally {
      clearInterval(check);
      await watcher.cancel().catch(() => undefined);
    }
  }

  /**
   * Revokes the lease of a leader that has not beaten since `beat`, after a
   * fresh read shows the key unchanged since then (this node's own stall, or
   * a watch event still on its way, must not depose a live leader). Revoking
   * deletes the key: the watch then sees the vacancy and this node campaigns.
   * Resolves with the fresher beat when the read found the key moved on.
   */
  private async deposeIfSilent(beat: Heartbeat): Promise<Heartbeat | null> {
    const { etcd, logger, clock } = this.parts;
    try {
      const readAt = clock.now();
      const res = await etcd
        .get(this.keys.leader)
        .options({ deadline: Date.now() + this.ttlMs })
        .exec();
      const kv = res.kvs[0];
      if (!kv) return null;
      if (kv.mod_revision !== beat.modRevision || kv.lease !== beat.lease) return { lease: kv.lease, modRevision: kv.mod_revision, seenAt: readAt };
      logger.warn(
        { code: 'HA_LEADER_SILENT', leader: this.leader?.node_id ?? null, silentMs: clock.now() - beat.seenAt },
        `the leader has not beaten for ${clock.now() - beat.seenAt}ms (more than ${leaderSilenceMs(this.ttlMs)}ms): revoking its lease to take over`,
      );
      await etcd.leaseClient.leaseRevoke({ ID: beat.lease }, { deadline: Date.now() + this.ttlMs });
    } catch (err) {
      logger.warn({ code: 'HA_ETCD_FAILED', err: (err as Error).message }, 'deposing a silent leader failed; the lease expires on its own');
    }
    return null;
  }

  /**
   * Leads until the term is lost or the node stops: takeover, then production.
   * Resolves true when it produced, false when it stood down before that.
   */
  private async serve(term: Term, signal: AbortSignal): Promise<boolean> {
    const { logger, settings } = this.parts;
    this.term = term;
    this.role = 'leader';
    this.leader = { node_id: settings.nodeId, rpc: settings.rpcAddress };
    this.armDeadline(term, term.deadlineAt);
    logger.info({ nodeId: settings.nodeId, lease: term.leaseId }, 'won the leader election');
    const keepAlive = this.keepAlive(term);
    const heartbeat = this.heartbeat(term);
    const stepDownWatch = this.watchStepDown(term);
    // The node may have begun shutting down while the campaign's txn was under way: onAbort runs at once then.
    const forgetShutdown = onAbort(signal, () => this.lose(term, 'node shutting down'));
    let produced = false;
    try {
      await this.holdRecordedHead(term);
      if (!term.lost.signal.aborted) {
        this.duties.startLeading();
        produced = true;
        logger.info({ height: Number(this.duties.chain.head().height) }, 'leading: producing blocks');
        await new Promise<void>((resolve) => term.lost.signal.addEventListener('abort', () => resolve(), { once: true }));
      }
    } catch (err) {
      this.lose(term, `stood down before producing: ${(err as Error).message}`);
    } finally {
      forgetShutdown();
      await this.duties.stopLeading();
      await keepAlive;
      await heartbeat;
      await stepDownWatch;
      this.term = null;
      this.role = 'follower';
      this.leader = null;
      // Production has stopped: ending the lease now lets another node take over at once rather than after the TTL.
      await term.lease.revoke({ deadline: Date.now() + this.ttlMs }).catch(() => undefined);
    }
    return produced;
  }

  /**
   * Watches <prefix>/step-down during a term: a request naming this node ends
   * the term as a planned hand-over (`noded ha step-down`). Ending it goes the
   * usual way: the producer stops once its block under way is committed (and
   * so fenced), then the lease is revoked, which deletes the leader key and
   * lets a follower win at once; this node then waits the hold-off before it
   * campaigns again. The request is deleted once taken.
   */
  private async watchStepDown(term: Term): Promise<void> {
    const { etcd, logger, settings } = this.parts;
    const key = this.keys.stepDown;
    const take = (text: string) => {
      if (decodeStepDown(text)?.node_id !== settings.nodeId || term.lost.signal.aborted) return;
      this.handedOver = true;
      logger.info({ code: 'HA_STEP_DOWN', nodeId: settings.nodeId }, 'asked to step down: handing leadership over');
      this.lose(term, 'asked to step down (noded ha step-down)');
      etcd
        .delete()
        .key(key)
        .options({ deadline: Date.now() + this.ttlMs })
        .exec()
        .catch(() => undefined);
    };
    try {
      const watcher = await etcd.watch().key(key).create();
      watcher.on('put', (kv) => take(kv.value.toString()));
      watcher.on('error', () => undefined);
      // A request put before the watch began.
      const present = await etcd
        .get(key)
        .options({ deadline: Date.now() + this.ttlMs })
        .string();
      if (present !== null) take(present);
      if (!term.lost.signal.aborted) await new Promise<void>((resolve) => term.lost.signal.addEventListener('abort', () => resolve(), { once: true }));
      await watcher.cancel().catch(() => undefined);
    } catch (err) {
      // Leading goes on without it: only a planned hand-over is unavailable this term.
      if (!term.lost.signal.aborted)
        logger.warn({ code: 'HA_STEP_DOWN_WATCH_FAILED', err: (err as Error).message }, 'cannot watch for step-down requests this term');
    }
  }

  /** Ends the term (idempotent): production stops at once; `reason` is logged. */
  private lose(term: Term, reason: string): void {
    if (term.lost.signal.aborted) return;
    if (term.timer) clearTimeout(term.timer);
    this.role = 'follower';
    term.lost.abort(new Error(reason));
    this.parts.logger.warn({ code: 'HA_LEADERSHIP_LOST', reason }, `no longer leader: ${reason}`);
    // Stop production now, not after the loop notices: the deadline is about time.
    this.duties.stopLeading().catch((err: Error) => this.parts.logger.warn({ code: 'HA_LEADERSHIP_LOST', err: err.message }, 'stopping production failed'));
  }

  private armDeadline(term: Term, at: number): void {
    term.deadlineAt = at;
    if (term.timer) clearTimeout(term.timer);
    term.timer = setTimeout(
      () =>
        this.lose(
          term,
          `the etcd lease was not renewed in time (local deadline ${this.ttlMs - deadlineMarginMs(this.ttlMs)}ms after the last keep-alive sent)`,
        ),
      Math.max(0, at - this.parts.clock.now()),
    );
  }

  /**
   * Re-puts the leader key every heartbeatMs while the term lasts, only while
   * this term's lease holds it (the followers depose a leader that stops). A
   * refusal means the key is no longer this node's: the term ends.
   */
  private async heartbeat(term: Term): Promise<void> {
    const { etcd, clock, logger, settings } = this.parts;
    const value = JSON.stringify({ node_id: settings.nodeId, rpc: settings.rpcAddress } satisfies LeaderInfo);
    while (!term.lost.signal.aborted) {
      await clock.sleep(heartbeatMs(this.ttlMs), term.lost.signal).catch(() => undefined);
      if (term.lost.signal.aborted) return;
      try {
        const res = await etcd
          .if(this.keys.leader, 'Lease', '==', term.leaseId)
          .then(etcd.put(this.keys.leader).value(value).lease(term.leaseId))
          .options({ deadline: Date.now() + Math.max(1, term.deadlineAt - clock.now()) })
          .commit();
        if (!res.succeeded) this.lose(term, "this node's lease no longer holds the leader key (revoked or expired)");
      } catch (err) {
        // The keep-alive and its local deadline decide whether this node still leads; a missed beat is only late.
        logger.warn({ code: 'HA_HEARTBEAT_FAILED', err: (err as Error).message }, 'putting the leader heartbeat failed; trying again');
      }
    }
  }

  /** Renews the lease every TTL/3 until the term ends; each success moves the local deadline on. */
  private async keepAlive(term: Term): Promise<void> {
    const { clock, logger } = this.parts;
    const interval = Math.floor(this.ttlMs / 3);
    while (!term.lost.signal.aborted) {
      await clock.sleep(interval, term.lost.signal).catch(() => undefined);
      if (term.lost.signal.aborted) return;
      const sentAt = clock.now();
      try {
        const res = await term.lease.keepaliveOnce({ deadline: Date.now() + Math.max(1, term.deadlineAt - clock.now()) });
        // etcd answers with the TTL it set, which may be above the one asked (its minimum lease TTL).
        if (!term.lost.signal.aborted) this.armDeadline(term, sentAt + Number(res.TTL) * 1000 - deadlineMarginMs(this.ttlMs));
      } catch (err) {
        if (err instanceof EtcdLeaseInvalidError) this.lose(term, 'etcd says the lease has expired');
        else logger.warn({ code: 'HA_KEEPALIVE_FAILED', err: (err as Error).message }, 'renewing the etcd lease failed; trying again');
      }
    }
  }

  /** The block the cluster last fenced, or null before the first. */
  async recordedHead(): Promise<RecordedHead | null> {
    const text = await this.parts.etcd
      .get(this.keys.head)
      .options({ deadline: Date.now() + this.ttlMs })
      .string();
    return text === null ? null : decodeHead(text, this.keys.head);
  }

  /** A recorded block's bytes, or null when etcd no longer (or never) kept it. */
  async recordedBlock(height: bigint): Promise<Uint8Array | null> {
    return this.parts.etcd
      .get(this.keys.block(height))
      .options({ deadline: Date.now() + this.ttlMs })
      .buffer();
  }

  /**
   * Makes the chain hold exactly the recorded head before this node produces
   * its child: applies the recorded blocks it lacks (the old leader may have
   * died between fencing a block and gossiping it), refuses to lead when it is
   * past the head or holds another block there.
   */
  private async holdRecordedHead(term: Term): Promise<void> {
    const head = await this.recordedHead();
    this.headAbsent = head === null;
    const { chain } = this.duties;
    if (!head) return;
    for (let local = chain.head(); local.height < head.height; local = chain.head()) {
      term.lost.signal.throwIfAborted();
      const next = local.height + 1n;
      const bytes = await this.recordedBlock(next);
      if (!bytes) {
        throw new Error(
          `this node is at height ${local.height}, behind the recorded head ${head.height}, and etcd keeps only the last ${RECORDED_BLOCKS} blocks: it catches up from peers before it may lead`,
        );
      }
      await chain.applyRecorded(bytes);
      this.parts.logger.info({ height: Number(next) }, 'applied a block recorded in etcd that this node lacked');
    }
    const local = chain.head();
    if (local.height > head.height) {
      throw new Error(
        `this node holds height ${local.height}, past the recorded head ${head.height}: its store has blocks no leader fenced (reset its data, or check ha.key_prefix)`,
      );
    }
    if (Buffer.compare(local.hash, head.hash) !== 0) {
      throw new Error(
        `this node's block ${local.height} is not the recorded one (${Buffer.from(head.hash).toString('hex')}): its store diverged from the cluster`,
      );
    }
  }

  /** A fence refusal, counted. */
  private refused(reason: string): FenceRejectedError {
    this.fenceRefusals++;
    return new FenceRejectedError(reason);
  }

  /**
   * Records a block in etcd before the leader commits it: one txn that
   * succeeds only while this node's lease holds the leader key and the
   * recorded head is the block's parent; it also keeps the block's bytes for
   * a takeover and prunes the one RECORDED_BLOCKS below. Throws
   * FenceRejectedError (and ends the term) when it fails: drop the block.
   */
  async fence(block: FencedBlock): Promise<void> {
    const { etcd, clock } = this.parts;
    const term = this.term;
    if (!term || term.lost.signal.aborted) throw this.refused(`block ${block.height} not recorded: this node does not lead`);
    const left = term.deadlineAt - clock.now();
    if (left <= 0) {
      this.lose(term, 'the local lease deadline passed');
      throw this.refused(`block ${block.height} not recorded: the local lease deadline passed`);
    }
    const parent = { height: block.height - 1n, hash: block.parentHash };
    const txn = etcd.if(this.keys.leader, 'Lease', '==', term.leaseId);
    if (this.headAbsent) txn.and(this.keys.head, 'Create', '==', 0);
    else txn.and(this.keys.head, 'Value', '==', encodeHead(parent));
    const ops: Parameters<ComparatorBuilder['then']> = [
      etcd.put(this.keys.head).value(encodeHead(block)),
      etcd.put(this.keys.block(block.height)).value(Buffer.from(block.bytes)),
    ];
    if (block.height > RECORDED_BLOCKS) ops.push(etcd.delete().key(this.keys.block(block.height - RECORDED_BLOCKS)));
    let succeeded: boolean;
    try {
      succeeded = (
        await txn
          .then(...ops)
          .options({ deadline: Date.now() + left })
          .commit()
      ).succeeded;
    } catch (err) {
      const reason = `recording block ${block.height} in etcd failed: ${(err as Error).message}`;
      this.lose(term, reason);
      throw this.refused(reason);
    }
    if (!succeeded) {
      const reason = `etcd refused to record block ${block.height}: this node's lease no longer holds the leader key, or the recorded head is not block ${parent.height}`;
      this.lose(term, reason);
      throw this.refused(reason);
    }
    this.headAbsent = false;
  }
}
