import { DaError, recordDaFailure, recordDaSuccess, type DaActivity, type DaClient } from '../da/index.js';
import { FilterStatus, type Executor } from '../exec/index.js';
import type { Logger } from '../log/index.js';
import type { BlockStore, StoreOp } from '../store/index.js';
import { Backoff, onAbort, sleep, runLoop } from '../util/index.js';
import { epochOf, nextEpoch, type Epoch, type EpochRules } from './epoch.js';
import { readEpoch, type EpochTxs } from './reader.js';

/**
 * How far the node has taken forced txs: the epoch holding `daHeight`, of
 * which the first `txIndex` txs are consumed (included or removed). ev-node's
 * sequencers keep the same pair (pkg/sequencers/common, Checkpoint); here it
 * is written with the block that consumed them, in its atomic batch, so a
 * restart neither loses nor repeats a forced tx.
 */
export interface Checkpoint {
  daHeight: bigint;
  txIndex: number;
}

/** Store metadata key of the checkpoint (JSON `{"da_height","tx_index"}`). */
export const CHECKPOINT_KEY = 'forced_inclusion_checkpoint';

/** What one block takes from the queue: its forced txs, and how to record that it took them. */
export interface ForcedSelection {
  txs: Uint8Array[];
  bytes: number;
  /** The checkpoint after this block, for its commit batch. */
  ops: StoreOp[];
  /** Call once the block is committed. */
  commit(): void;
  /** The epoch the txs came from (based blocks take their time from it). */
  source: EpochTxs | null;
  /** Index in that epoch after the txs taken. */
  txIndexAfter: number;
  /** The checkpoint once the block is committed. */
  after: Checkpoint;
}

export interface QueueOptions {
  rules: EpochRules;
  namespace: Uint8Array;
  /** How often DA's head is asked once the queue has read every epoch that has ended. */
  pollMs: number;
  retryMaxMs: number;
  /** Also read each epoch's end time (based mode dates its blocks with it). */
  withEndTime: boolean;
  /** Epochs read ahead at most. */
  readAhead?: number;
}

/**
 * The forced txs a block producer (the aggregator, or a based node) has yet to
 * take, epoch by epoch: a background loop reads each epoch of the
 * forced-inclusion namespace once DA's head has passed its end (ev-node reads
 * an epoch at its end, forced_inclusion_retriever.go), and `select` hands the
 * next block its share, in DA order, filtered by the executor.
 */
export class ForcedInclusionQueue {
  private readonly epochs: EpochTxs[] = [];
  private checkpoint: Checkpoint;
  private toRead: Epoch;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** What the queue last heard from DA (a based node's DA health). */
  readonly activity: DaActivity = { lastSuccessAt: 0, lastError: null, failingSince: 0 };

  private constructor(
    private readonly da: DaClient,
    private readonly store: BlockStore,
    private readonly opts: QueueOptions,
    private readonly logger: Logger,
    checkpoint: Checkpoint,
  ) {
    this.checkpoint = checkpoint;
    this.toRead = epochOf(checkpoint.daHeight, opts.rules);
  }

  /** The queue from the checkpoint the store holds, or from genesis' first epoch. */
  static async open(da: DaClient, store: BlockStore, opts: QueueOptions, logger: Logger): Promise<ForcedInclusionQueue> {
    const raw = await store.getMetadata(CHECKPOINT_KEY);
    const saved = raw ? (JSON.parse(new TextDecoder().decode(raw)) as { da_height: string; tx_index: number }) : null;
    const checkpoint = saved ? { daHeight: BigInt(saved.da_height), txIndex: saved.tx_index } : { daHeight: opts.rules.daStartHeight, txIndex: 0 };
    return new ForcedInclusionQueue(da, store, opts, logger, checkpoint);
  }

  /** The epoch the next forced tx comes from, and how many of its txs are taken. */
  get position(): Checkpoint {
    return { ...this.checkpoint };
  }

  /** Forced txs read and not yet taken. */
  get pendingCount(): number {
    return this.epochs.reduce((n, e, i) => n + e.txs.length - (i === 0 ? this.checkpoint.txIndex : 0), 0);
  }

  /** Epochs read and not yet wholly taken, oldest first; the first is the checkpoint's. */
  get readEpochs(): readonly EpochTxs[] {
    return this.epochs;
  }

  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.loop = runLoop((s) => this.run(s), signal, onFatal);
  }

  async stopped(): Promise<void> {
    await this.loop;
  }

  /** Resolves once an epoch is read (or at once when one is waiting); for a producer with nothing else to do. */
  async epochReady(signal: AbortSignal): Promise<void> {
    if (this.epochs.length > 0) return;
    await new Promise<void>((resolve) => {
      const forgetAbort = onAbort(signal, resolve);
      this.wake = () => {
        forgetAbort();
        resolve();
      };
    });
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { pollMs, retryMaxMs, readAhead = 4 } = this.opts;
    // The first wait is two polls, as before the shared helper; then it doubles up to retryMaxMs.
    const backoff = new Backoff({ baseMs: 2 * pollMs, maxMs: retryMaxMs });
    while (!signal.aborted) {
      try {
        if (this.epochs.length >= readAhead || this.toRead.end > (await this.da.networkHead(signal))) {
          recordDaSuccess(this.activity);
          await sleep(pollMs, signal);
          continue;
        }
        const read = await readEpoch(this.da, this.opts.namespace, this.toRead, { withEndTime: this.opts.withEndTime, signal });
        if (backoff.attempt > 0) this.logger.info({ epoch: Number(this.toRead.number) }, 'forced-inclusion reads from DA work again');
        backoff.reset();
        recordDaSuccess(this.activity);
        if (read.txs.length > 0) {
          this.logger.info(
            { epoch: Number(read.epoch.number), daHeights: `${read.epoch.start}-${read.epoch.end}`, txs: read.txs.length },
            'forced txs read from DA',
          );
        }
        this.epochs.push(read);
        this.toRead = nextEpoch(this.toRead, this.opts.rules);
        this.wake?.();
        this.wake = null;
      } catch (err) {
        if (!(err instanceof DaError)) throw err;
        const wait = backoff.next();
        recordDaFailure(this.activity, err);
        if (backoff.attempt === 1 || backoff.attempt % 10 === 0) {
          this.logger.warn(
            { code: 'FORCED_READ_FAILED', error: err.message, attempt: backoff.attempt, remedy: err.remedy },
            'reading forced txs from DA failed',
          );
        }
        await sleep(wait, signal);
      }
    }
  }

  /**
   * The next block's forced txs, at most `maxBytes` of them: the pending txs
   * in DA order through the executor's FilterTxs, as ev-node's single
   * sequencer takes them (pkg/sequencers/single/sequencer.go, GetNextBatch):
   * ok ones go in, removed ones are consumed, the first postponed one stops
   * the block. Only the epoch at the head of the queue is taken from, so a
   * block never mixes epochs and a based node's blocks stay within one.
   */
  async select(executor: Executor, maxBytes: number): Promise<ForcedSelection> {
    const epoch = this.epochs[0];
    const start = this.checkpoint.txIndex;
    const pending = epoch ? epoch.txs.slice(start) : [];
    const statuses = pending.length > 0 ? await executor.filterTxs(pending, maxBytes, 0, true) : [];
    const txs: Uint8Array[] = [];
    let consumed = 0;
    let bytes = 0;
    for (const [i, status] of statuses.entries()) {
      if (status === FilterStatus.postpone) break;
      consumed++;
      if (status === FilterStatus.ok) {
        txs.push(pending[i]!);
        bytes += pending[i]!.length;
      }
    }
    const after = this.advance(start + consumed);
    return {
      txs,
      bytes,
      ops: [this.store.metadataOp(CHECKPOINT_KEY, encodeCheckpoint(after))],
      commit: () => this.moveTo(after),
      source: epoch ?? null,
      txIndexAfter: start + consumed,
      after,
    };
  }

  /** The checkpoint once `txIndex` txs of the head epoch are consumed: the next epoch's start when all are. */
  private advance(txIndex: number): Checkpoint {
    const epoch = this.epochs[0];
    if (!epoch || txIndex < epoch.txs.length) return { daHeight: this.checkpoint.daHeight, txIndex };
    return { daHeight: epoch.epoch.end + 1n, txIndex: 0 };
  }

  private moveTo(checkpoint: Checkpoint): void {
    if (checkpoint.daHeight !== this.checkpoint.daHeight) this.epochs.shift();
    this.checkpoint = checkpoint;
  }

  /** Records a selection that makes no block (an epoch with no forced txs, or only removed ones): its checkpoint on its own. */
  async record(selection: ForcedSelection): Promise<void> {
    await this.store.setMetadata(CHECKPOINT_KEY, encodeCheckpoint(selection.after));
    selection.commit();
  }
}

const encodeCheckpoint = (c: Checkpoint) => new TextEncoder().encode(JSON.stringify({ da_height: c.daHeight.toString(), tx_index: c.txIndex }));
