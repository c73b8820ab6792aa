import { hash as digest } from 'node:crypto';
import type { DaClient } from '../da/index.js';
import { FilterStatus, type Executor } from '../exec/index.js';
import type { Logger } from '../log/index.js';
import type { BlockStore } from '../store/index.js';
import { InvalidBlockError } from '../types/index.js';
import { epochOf, graceBoundary, gracePeriodEpochs, nextEpoch, type Epoch, type EpochRules } from './epoch.js';
import { readEpoch } from './reader.js';

/** Store metadata key of the last epoch end a full node has checked (decimal text): a restart resumes after it. */
export const CHECKED_KEY = 'forced_inclusion_checked_through';

/** What a full node found: forced txs of an epoch that no block held by its grace boundary. */
export interface ForcedInclusionViolation {
  epoch: Epoch;
  graceBoundary: bigint;
  /** DA height of the block that proved it (a block past the boundary). */
  daHeight: bigint;
  /** Height of that block. */
  height: bigint;
  /** sha256 of each missing tx, upper-case hex (CometBFT's tx hash). */
  txHashes: string[];
  /** The aggregator that left them out (genesis proposer address, hex). */
  aggregator: string;
  /** The line logged, also the readiness reason. */
  message: string;
}

export interface VerifierOptions {
  rules: EpochRules;
  namespace: Uint8Array;
  /** Largest total of tx bytes a block takes: a forced tx bigger than this alone is one FilterTxs removes. */
  maxBlockTxBytes: number;
  /** The largest blob (ev-node's DefaultMaxBlobSize role in the grace period's fullness rule). */
  maxBlobSize: number;
  proposerAddress: Uint8Array;
}

const sha256 = (tx: Uint8Array) => digest('sha256', tx, 'buffer');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();

/**
 * A full node's check that the aggregator includes forced txs, after ev-node's
 * Syncer.VerifyForcedInclusionTxs (block/internal/syncing/syncer.go): each
 * block is checked at the DA height DA holds it at; every epoch whose grace
 * boundary that height has passed must have each of its valid forced txs
 * (FilterTxs does not remove it) in a block by then — in the node's tx index,
 * or in this block. A miss is a censoring aggregator: the block is refused
 * and, from then on, every block (the node stops following that chain).
 */
export class ForcedInclusionVerifier {
  violation: ForcedInclusionViolation | null = null;
  /** Tx bytes of the chain's blocks by DA height, for the grace period's fullness rule (as ev-node keeps daBlockBytes). */
  private readonly bytesAt = new Map<bigint, number>();

  private constructor(
    private readonly da: DaClient,
    private readonly store: BlockStore,
    private readonly executor: Executor,
    private readonly opts: VerifierOptions,
    private readonly logger: Logger,
    /** The next epoch to check. */
    private next: Epoch,
  ) {}

  static async open(da: DaClient, store: BlockStore, executor: Executor, opts: VerifierOptions, logger: Logger): Promise<ForcedInclusionVerifier> {
    const raw = await store.getMetadata(CHECKED_KEY);
    const first = epochOf(opts.rules.daStartHeight, opts.rules);
    const next = raw ? nextEpoch(epochOf(BigInt(new TextDecoder().decode(raw)), opts.rules), opts.rules) : first;
    return new ForcedInclusionVerifier(da, store, executor, opts, logger, next);
  }

  /** The error that refuses every block once a violation is found. */
  private refusal(height: bigint): InvalidBlockError {
    return new InvalidBlockError(height, `not applied: ${this.violation!.message}`);
  }

  /**
   * Checks the chain as it would be with the block at `height` (txs `txs`;
   * it may be applied already, from a peer) held at DA height `daHeight`. Throws
   * InvalidBlockError when a forced tx is missing past its grace boundary
   * (logged once as FORCED_INCLUSION_VIOLATED), and for every block after;
   * a DA read that fails throws its DaError (the caller retries).
   */
  async check(daHeight: bigint, height: bigint, txs: Uint8Array[]): Promise<void> {
    if (this.violation) throw this.refusal(height);
    this.bytesAt.set(daHeight, (this.bytesAt.get(daHeight) ?? 0) + txs.reduce((n, tx) => n + tx.length, 0));
    const { rules } = this.opts;
    for (;;) {
      const epoch = this.next;
      const boundary = graceBoundary(
        epoch,
        rules,
        gracePeriodEpochs(epoch, (h) => this.bytesAt.get(h) ?? 0, this.opts.maxBlobSize),
      );
      // syncer.go: an epoch is checked once a block's DA height is past its grace boundary.
      if (boundary >= daHeight) return;
      const missing = await this.missing(epoch, txs);
      if (missing.length > 0) {
        const aggregator = hex(this.opts.proposerAddress);
        const message = `FORCED_INCLUSION_VIOLATED: ${missing.length} forced tx(s) of epoch ${epoch.number} (DA heights ${epoch.start}-${epoch.end}) are in no block by the grace boundary, DA height ${boundary}; aggregator ${aggregator} censored them (block ${height} at DA height ${daHeight}); txs ${missing.join(', ')}`;
        this.violation = { epoch, graceBoundary: boundary, daHeight, height, txHashes: missing, aggregator, message };
        this.logger.error(
          {
            code: 'FORCED_INCLUSION_VIOLATED',
            epoch: Number(epoch.number),
            epochStart: Number(epoch.start),
            epochEnd: Number(epoch.end),
            graceBoundary: Number(boundary),
            daHeight: Number(daHeight),
            height: Number(height),
            aggregator,
            txs: missing,
          },
          `${message}; this node stops applying the chain's blocks`,
        );
        throw this.refusal(height);
      }
      await this.store.setMetadata(CHECKED_KEY, new TextEncoder().encode(epoch.end.toString()));
      for (const h of this.bytesAt.keys()) if (h <= epoch.end) this.bytesAt.delete(h);
      this.next = nextEpoch(epoch, rules);
    }
  }

  /** Hashes of the epoch's forced txs FilterTxs keeps that neither the tx index nor `blockTxs` holds. */
  private async missing(epoch: Epoch, blockTxs: Uint8Array[]): Promise<string[]> {
    const { txs } = await readEpoch(this.da, this.opts.namespace, epoch);
    if (txs.length === 0) return [];
    const statuses = await this.executor.filterTxs(txs, this.opts.maxBlockTxBytes, 0, true);
    // Only removed txs are excused: a postponed one is valid, and had to be in a later block.
    const required = txs.filter((_, i) => statuses[i] !== FilterStatus.remove).map(sha256);
    const inBlock = new Set(blockTxs.map((tx) => hex(sha256(tx))));
    const locations = await this.store.getTxLocations(required);
    return [...new Set(required.filter((h, i) => locations[i] === null && !inBlock.has(hex(h))).map(hex))];
  }
}
