import type { Logger } from '../log/index.js';
import type { Executor } from '../exec/index.js';
import type { NodeMetrics } from '../metrics/index.js';
import type { Ed25519Key } from '../types/index.js';
import { isAbortError, type Clock } from '../util/index.js';
import type { Chain } from './chain.js';
import type { ForcedInclusionQueue, ForcedSelection } from '../forced/index.js';

export interface ProducerOptions {
  blockTimeMs: number;
  lazyMode: boolean;
  lazyBlockIntervalMs: number;
  /** How many txs are waiting; lazy mode produces when this is above zero. */
  pendingTxs: () => number;
  /** Blocks produced but not yet included on DA. */
  pendingBlocks: () => bigint;
  /** At this many pending blocks production pauses (0 = no cap). */
  maxPendingBlocks: number;
  /** Forced inclusion, when da.forced_inclusion_namespace is set: the queue of forced txs, put first in each block. */
  forced?: {
    queue: ForcedInclusionQueue;
    /** Largest total of tx bytes one block takes. */
    maxBlockTxBytes: number;
    /**
     * A test switch (NODED_TEST_CENSOR_FORCED_TXS=1): take the forced txs off
     * the queue but leave them out of the blocks, as a censoring aggregator
     * would, so a test can show full nodes catching it.
     */
    censor: boolean;
  };
}

/**
 * The aggregator's block loop: a block every block time (empty ones too), or in
 * lazy mode only when txs wait and at least every lazy block interval.
 */
export class BlockProducer {
  /** The loop now running or last run; a new start waits for it, so two loops never overlap. */
  private loop: Promise<void> = Promise.resolve();
  /** Stops the running loop (stop()); null while stopped. */
  private halt: AbortController | null = null;
  /** What the running loop runs under: the node's signal and `halt`. */
  private signal: AbortSignal | null = null;
  /** Wall-clock ms when production last started (0 before the first start), for readiness. */
  startedAt = 0;
  /** Set while production waits for DA to catch up; the reason health reports. */
  pausedReason: string | null = null;
  /** Blocks built whose commit is still under way (pipelined): they count toward the pending cap. */
  private uncommitted = 0;

  constructor(
    private readonly chain: Chain,
    private readonly executor: Executor,
    private readonly signer: Ed25519Key,
    private readonly opts: ProducerOptions,
    private readonly logger: Logger,
    private readonly metrics: NodeMetrics | null,
    /** What block times are read from and the block time is waited on. */
    private readonly clock: Clock,
  ) {}

  /** True between start() and stop() (or the node's signal aborting). */
  get running(): boolean {
    return this.signal !== null && !this.signal.aborted;
  }

  /**
   * Starts the loop under `signal` (the node's); `onFatal` hears of an error
   * that stops production (the node then shuts down). Does nothing while it
   * runs; after stop() it starts again once the last block is committed, at
   * the chain's next height (ev-node block/components.go builds a component per
   * role, each with Start/Stop: a role change starts or stops a component).
   */
  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    if (this.running || signal.aborted) return;
    const halt = new AbortController();
    this.halt = halt;
    this.startedAt = this.clock.now();
    const loopSignal = AbortSignal.any([signal, halt.signal]);
    this.signal = loopSignal;
    const previous = this.loop;
    this.loop = previous
      .then(() => this.run(loopSignal))
      .catch((err) => {
        if (!isAbortError(err, loopSignal)) onFatal(err as Error);
      });
  }

  /** Stops production while the node runs; resolves once the block under way is committed. Safe to call when stopped. */
  async stop(): Promise<void> {
    const halt = this.halt;
    this.halt = null;
    this.signal = null;
    this.pausedReason = null;
    halt?.abort(new Error('block production stopped'));
    await this.loop;
    if (halt) this.logger.info({ height: Number(this.chain.height) }, 'block production stopped');
  }

  /** Resolves once the loop has finished the block it was on. */
  async stopped(): Promise<void> {
    await this.loop;
  }

  /**
   * Why production cannot go on now (the pending cap is reached), or null:
   * read at the moment asked, so tx admission sees a pause before the loop's next tick does.
   */
  pendingCapReason(): string | null {
    const { maxPendingBlocks } = this.opts;
    const pending = this.pendingBlocks();
    if (maxPendingBlocks <= 0 || pending < BigInt(maxPendingBlocks)) return null;
    return `production paused: ${pending} blocks pending DA inclusion (cap ${maxPendingBlocks})`;
  }

  /** Blocks not on DA, counting those built whose commit is still under way. */
  private pendingBlocks(): bigint {
    return this.opts.pendingBlocks() + BigInt(this.uncommitted);
  }

  /** Checks the pending cap, logging once when production halts and once when it resumes. */
  private atPendingCap(): boolean {
    const { maxPendingBlocks } = this.opts;
    const pending = this.pendingBlocks();
    const reason = this.pendingCapReason();
    const atCap = reason !== null;
    if (atCap && !this.pausedReason) {
      this.pausedReason = reason;
      this.logger.warn(
        { code: 'PRODUCTION_PAUSED', pending: Number(pending), maxPendingBlocks },
        `block production halted until DA catches up: ${pending} of ${maxPendingBlocks} blocks are waiting for DA inclusion (node.max_pending_blocks)`,
      );
    } else if (!atCap && this.pausedReason) {
      this.pausedReason = null;
      this.logger.info({ pending: Number(pending) }, 'block production resumed: DA caught up');
    }
    return atCap;
  }

  /**
   * The loop. Each block's commit goes on while the next is built (the chain
   * decides how far: a pipelined executor's next block is built while this
   * one's batch is written, Chain.build); the loop ends once the last is committed.
   */
  private async run(signal: AbortSignal): Promise<void> {
    const { blockTimeMs, lazyMode, lazyBlockIntervalMs } = this.opts;
    const clock = this.clock;
    let lastBlockAt = clock.now();
    let nextTick = lastBlockAt + blockTimeMs;
    let lastCommitted: Promise<void> = Promise.resolve();
    let previousCommitAt = 0;
    this.logger.info({ blockTime: `${blockTimeMs}ms`, lazyMode, height: Number(this.chain.nextHeight) }, 'block production started');
    try {
      while (!signal.aborted) {
        const wait = nextTick - clock.now();
        // A timer waits at least 1 ms: when the block is already due, only let the event loop turn.
        await (wait > 0 ? clock.sleep(wait, signal) : new Promise(setImmediate));
        // Keep a steady cadence, but do not burst to catch up after a slow block.
        nextTick = Math.max(nextTick + blockTimeMs, clock.now());
        if (this.atPendingCap()) continue;
        if (lazyMode && this.opts.pendingTxs() === 0 && (this.opts.forced?.queue.pendingCount ?? 0) === 0 && clock.now() - lastBlockAt < lazyBlockIntervalMs)
          continue;
        // The executor learns the block's time first: an EVM payload is built with it.
        const time = BigInt(clock.now()) * 1_000_000n;
        const txs = await this.blockTxs(time);
        const { block, committed } = await this.chain.build(txs.txs, time, this.signer, txs.forced?.ops);
        // The next block selects forced txs after this one's; the queue's checkpoint is in this block's batch.
        txs.forced?.commit();
        lastBlockAt = clock.now();
        this.uncommitted++;
        lastCommitted = committed
          .finally(() => this.uncommitted--)
          .then(() => {
            if (this.metrics) {
              this.metrics.blockTxs.observe(txs.txs.length);
              // The first block after a start has no previous one to measure from.
              if (previousCommitAt > 0) this.metrics.blockInterval.observe((this.chain.lastCommitAt - previousCommitAt) / 1000);
              previousCommitAt = this.chain.lastCommitAt;
            }
            this.logger.debug({ height: Number(block.header!.header!.height), txs: txs.txs.length }, 'produced block');
          });
        // A failed commit stops the loop at the next block's build (Chain.build waits on it), or below.
        lastCommitted.catch(() => undefined);
      }
    } finally {
      // Stopped (or failed) with a block's commit under way: the loop is done once it is in.
      await lastCommitted;
    }
  }

  /**
   * The next block's txs: forced txs first, as much of them as fits (ev-node
   * pkg/sequencers/single/sequencer.go prepends them and trims the mempool
   * batch to the rest), then the mempool's in the bytes left.
   */
  private async blockTxs(time: bigint): Promise<{ txs: Uint8Array[]; forced: ForcedSelection | null }> {
    const forced = this.opts.forced;
    if (!forced) return { txs: await this.executor.getTxs(time), forced: null };
    const selection = await forced.queue.select(this.executor, forced.maxBlockTxBytes);
    if (selection.txs.length > 0) {
      if (forced.censor) {
        this.logger.warn(
          { code: 'FORCED_TXS_DROPPED', txs: selection.txs.length },
          'test switch NODED_TEST_CENSOR_FORCED_TXS: leaving forced txs out of the block',
        );
      } else {
        this.logger.info({ txs: selection.txs.length, epoch: Number(selection.source!.epoch.number) }, 'including forced txs');
      }
    }
    const included = forced.censor ? [] : selection.txs;
    const rest = await this.executor.getTxs(time, forced.maxBlockTxBytes - (forced.censor ? 0 : selection.bytes));
    return { txs: [...included, ...rest], forced: selection };
  }
}
