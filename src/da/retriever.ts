import type { Logger } from '../log/index.js';
import { create } from '@bufbuild/protobuf';
import {
  BlockSchema,
  DataSchema,
  GenesisMismatchError,
  InvalidBlockError,
  MetadataSchema,
  txsHash,
  type Block,
  type Data,
  type SignedHeader,
} from '../types/index.js';
import { Backoff, type Clock, runLoop } from '../util/index.js';
import {
  decodeDataBlob,
  decodeHeaderBlob,
  envelopeSignatureProblem,
  sameNamespace,
  signedDataProblem,
  type DaNamespaces,
  type DataBlob,
  type HeaderBlob,
} from './blobs.js';
import type { DaCache } from './cache.js';
import type { Blob, BlobApi } from './client.js';
import { DaError } from './errors.js';
import { recordDaFailure, recordDaSuccess, type DaActivity } from './submitter.js';

/**
 * Where retrieved blocks go: the node's chain, which validates, executes and
 * stores them. A block the chain already holds (from peers) is matched
 * against the stored one and only its DA heights are recorded.
 */
export interface BlockSink {
  readonly nextHeight: bigint;
  /** The chain's last data hash, for a next block with no txs: ev-node posts no data blob for it. */
  readonly lastDataHash: Uint8Array;
  apply(block: Block, daHeights: { header: bigint; data: bigint }): Promise<void>;
}

export interface RetrieverOptions {
  chainId: string;
  /** The chain's proposer (genesis): a header blob of another proposer is skipped. */
  proposerAddress: Uint8Array;
  /** First DA height to read on a fresh node (genesis da_start_height, at least 1). */
  startDaHeight: bigint;
  /** DA height of the last applied block's header (0 = none): where a restart without cache resumes. */
  lastAppliedDaHeight: bigint;
  /** How long to wait for the next DA block once caught up. */
  pollMs: number;
  retryMaxMs: number;
  /** Throws GenesisMismatchError for a header of another genesis (the node reports that once, not per blob). */
  checkGenesis?: (signed: SignedHeader) => void;
}

interface HeaderCandidate {
  signed: SignedHeader;
  daHeight: bigint;
}

/** ingestHeader's answer for a header of another genesis: skipped without a line of its own. */
const FOREIGN_GENESIS = Symbol('foreign genesis');

/** How far ahead of this node's clock a header's time may be (ev-node types/header.go, MaxClockDrift). */
const MAX_CLOCK_DRIFT_NS = 60_000_000_000n;

/** data_hash of a block without txs (ev-node block/internal/common/empty.go, DataHashForEmptyTxs). */
const EMPTY_TXS_HASH = txsHash([]);

/** How often the scan position is written to the cache (it is a hint; DA heights are re-read safely). */
const CACHE_WRITE_INTERVAL_MS = 1000;
/**
 * DA heights a blob of a block the chain already holds waits for its other
 * half; past that it is dropped, and the block keeps no DA heights.
 */
const KNOWN_BLOB_WAIT_DA_HEIGHTS = 64n;

/**
 * Follows the chain from DA alone: reads every DA height's header and data
 * blobs, pairs them, and hands each next block to the chain, which validates
 * it (signature, proposer, height, links, data hash) before storing it. A blob
 * that fails is skipped with the reason; it never stops the node.
 */
export class DaRetriever {
  private loop: Promise<void> | null = null;
  private readonly headers = new Map<bigint, HeaderCandidate[]>();
  private readonly data = new Map<string, { data: Data; daHeight: bigint }>();
  private next = 0n;
  private head = 0n;
  private cacheWrittenAt = 0;
  /**
   * Set once a header blob came as a DA envelope with a valid signature; from
   * then on header blobs without one are skipped (ev-node's strict mode,
   * block/internal/syncing/da_retriever.go).
   */
  private strictMode = false;
  /**
   * Where a chain of another genesis begins on DA (its first header seen):
   * the scan position saved never passes it, so a node restarted with the
   * right genesis reads those blocks again.
   */
  private foreignDaHeight: bigint | null = null;
  /** The first DA height with a header of another proposer: where that other chain began, once it proves to be one. */
  private otherProposerDaHeight: bigint | null = null;
  readonly activity: DaActivity = { lastSuccessAt: 0, lastError: null, failingSince: 0 };

  constructor(
    private readonly client: BlobApi,
    private readonly cache: DaCache,
    private readonly namespaces: DaNamespaces,
    private readonly sink: BlockSink,
    private readonly opts: RetrieverOptions,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /** Highest block height seen on DA (applied or waiting). */
  bestSeenHeight(): bigint {
    let best = this.sink.nextHeight - 1n;
    for (const h of this.headers.keys()) if (h > best) best = h;
    return best;
  }

  /** True while DA holds heights this node has not read yet (more than the one being sealed). */
  catchingUp(): boolean {
    return this.head > 0n && this.next < this.head;
  }

  /** Last DA height read (0 = none yet). */
  scannedHeight(): bigint {
    return this.next > 0n ? this.next - 1n : 0n;
  }

  /** DA's head when last asked (0 = not asked yet). */
  headHeight(): bigint {
    return this.head;
  }

  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.loop = runLoop((s) => this.run(s), signal, onFatal);
  }

  async stopped(): Promise<void> {
    await this.loop;
    this.saveScanPosition(true);
  }

  private resumePoint(): bigint {
    const cached = this.cache.get().scannedDaHeight;
    const candidates = [this.opts.startDaHeight, this.opts.lastAppliedDaHeight, cached ? BigInt(cached) + 1n : 0n, 1n];
    return candidates.reduce((a, b) => (b > a ? b : a));
  }

  private async run(signal: AbortSignal): Promise<void> {
    this.next = this.resumePoint();
    this.logger.info({ daHeight: Number(this.next) }, 'following the chain from DA');
    // The first wait after a failure is twice the poll interval, as before the shared policy.
    const backoff = new Backoff({ baseMs: 2 * this.opts.pollMs, maxMs: this.opts.retryMaxMs });
    while (!signal.aborted) {
      try {
        if (this.next > this.head) {
          this.head = await this.client.networkHead(signal);
          // Caught up, the node asks only for the head: that answer is DA working too.
          recordDaSuccess(this.activity, this.clock.now());
          backoff.reset();
          if (this.next > this.head) {
            this.saveScanPosition(false);
            await this.clock.sleep(this.opts.pollMs, signal);
            continue;
          }
        }
        const blobs = await this.client.getAll(this.next, this.readNamespaces, signal);
        this.ingest(blobs, this.next);
        await this.applyReady();
        recordDaSuccess(this.activity, this.clock.now());
        backoff.reset();
        this.next++;
        this.saveScanPosition(false);
      } catch (err) {
        if (!(err instanceof DaError)) throw err;
        const delayMs = backoff.next();
        const failures = backoff.attempt;
        recordDaFailure(this.activity, err, this.clock.now());
        // One line per outage, then one every ten attempts, so a long outage does not flood the log.
        if (failures === 1 || failures % 10 === 0) {
          this.logger.warn(
            { code: 'DA_RETRIEVE_FAILED', error: err.message, reason: err.reason, attempt: failures, remedy: err.remedy },
            'DA retrieval failed',
          );
        }
        await this.clock.sleep(delayMs, signal);
      }
    }
  }

  /** The namespaces asked at each DA height: one, when data shares the headers' (ev-node's fetchBlobs asks once then). */
  private get readNamespaces(): Uint8Array[] {
    const { header, data } = this.namespaces;
    return sameNamespace(header, data) ? [header] : [header, data];
  }

  /**
   * Every blob is tried as a header, then as block data, whatever namespace it
   * came in, as ev-node's processBlobs does (block/internal/syncing/da_retriever.go):
   * with data in the headers' namespace (ev-node's default) that is how they
   * are told apart. A blob that is neither is skipped with both reasons.
   */
  private ingest(blobs: Blob[], daHeight: bigint): void {
    for (const blob of blobs) {
      if (blob.data.length === 0) continue;
      const notHeader = this.ingestHeader(blob, daHeight);
      if (notHeader === null || notHeader === FOREIGN_GENESIS) continue;
      const notData = this.ingestData(blob, daHeight);
      if (notData === null) continue;
      this.skip(daHeight, `neither a header (${notHeader}) nor block data (${notData})`);
    }
  }

  /**
   * Takes a header blob as ev-node's retriever does (da_retriever.go,
   * tryDecodeHeader): a DA envelope must carry a valid envelope signature;
   * after the first such envelope, only envelopes are taken; the header needs
   * a proposer, which must be the chain's, and a time, not more than a minute ahead.
   * Returns null when taken, FOREIGN_GENESIS for a header of another genesis
   * (reported by checkGenesis), else why the blob is no header of this chain.
   */
  private ingestHeader(blob: Blob, daHeight: bigint): string | null | typeof FOREIGN_GENESIS {
    let decoded: HeaderBlob;
    try {
      decoded = decodeHeaderBlob(blob.data);
    } catch (err) {
      return `not a signed header: ${(err as Error).message}`;
    }
    const header = decoded.signed.header;
    if (!header) return 'signed header without a header';
    try {
      this.opts.checkGenesis?.(decoded.signed);
    } catch (err) {
      if (!(err instanceof GenesisMismatchError)) throw err;
      this.foreignDaHeight ??= this.otherProposerDaHeight ?? daHeight;
      this.logger.debug({ daHeight: Number(daHeight), reason: err.message }, 'skipping a header of another genesis');
      return FOREIGN_GENESIS;
    }
    if (header.chainId !== this.opts.chainId) return `header of another chain (${JSON.stringify(header.chainId)})`;
    const validEnvelope = decoded.envelopeSignature.length > 0;
    if (validEnvelope) {
      const problem = envelopeSignatureProblem(decoded);
      if (problem) return problem;
    } else if (this.strictMode) {
      return 'a header without a DA envelope signature, after signed envelopes (strict mode)';
    }
    if (header.proposerAddress.length === 0) return 'header without a proposer address';
    if (header.time === 0n) return 'header timestamp cannot be zero';
    if (header.time > BigInt(this.clock.now()) * 1_000_000n + MAX_CLOCK_DRIFT_NS) return 'header timestamp too far in the future';
    if (Buffer.compare(header.proposerAddress, this.opts.proposerAddress) !== 0) {
      this.otherProposerDaHeight ??= daHeight;
      return "proposer is not the chain's aggregator";
    }
    if (validEnvelope && !this.strictMode) {
      this.strictMode = true;
      this.logger.info(
        { height: Number(header.height), daHeight: Number(daHeight) },
        'valid DA envelope seen: header blobs without one are skipped from now on',
      );
    }
    const list = this.headers.get(header.height) ?? [];
    list.push({ signed: decoded.signed, daHeight });
    this.headers.set(header.height, list);
    return null;
  }

  /**
   * Takes a data blob as ev-node's SignedData, signed over its Data (da_retriever.go tryDecodeData).
   * Returns null when taken, else why the blob is no block data.
   */
  private ingestData(blob: Blob, daHeight: bigint): string | null {
    let decoded: DataBlob;
    try {
      decoded = decodeDataBlob(blob.data);
    } catch (err) {
      return `not signed block data: ${(err as Error).message}`;
    }
    const problem = signedDataProblem(decoded);
    if (problem) return problem;
    const height = decoded.data.metadata?.height ?? 0n;
    this.data.set(dataKey(height, txsHash(decoded.data.txs)), { data: decoded.data, daHeight });
    return null;
  }

  /**
   * The data of a header whose data_hash says it has no txs: ev-node posts no
   * blob for it, so it is rebuilt from the header, with the chain's last data
   * hash (block/internal/syncing: da_retriever.go createEmptyDataForHeader, syncer.go).
   */
  private emptyDataFor(candidate: HeaderCandidate): { data: Data; daHeight: bigint } | undefined {
    const header = candidate.signed.header!;
    if (header.dataHash.length > 0 && Buffer.compare(header.dataHash, EMPTY_TXS_HASH) !== 0) return undefined;
    const metadata = create(MetadataSchema, { chainId: header.chainId, height: header.height, time: header.time, lastDataHash: this.sink.lastDataHash });
    return { data: create(DataSchema, { metadata, txs: [] }), daHeight: candidate.daHeight };
  }

  private skip(daHeight: bigint, reason: string): void {
    this.logger.warn({ daHeight: Number(daHeight), reason }, "skipping a blob on the chain's DA namespace");
  }

  /**
   * Applies every block whose header and data are both here, in height order;
   * for blocks the chain already has (from peers) the sink records where DA
   * holds them.
   */
  private async applyReady(): Promise<void> {
    for (const height of [...this.headers.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (height > this.sink.nextHeight) break;
      const candidates = this.headers.get(height)!;
      for (const candidate of [...candidates]) {
        const key = dataKey(height, candidate.signed.header!.dataHash);
        const data = this.data.get(key) ?? this.emptyDataFor(candidate);
        if (!data) continue;
        try {
          await this.sink.apply(create(BlockSchema, { header: candidate.signed, data: data.data }), { header: candidate.daHeight, data: data.daHeight });
        } catch (err) {
          if (!(err instanceof InvalidBlockError)) throw err;
          this.logger.warn({ daHeight: Number(candidate.daHeight), reason: err.message }, 'rejected a block from DA');
          candidates.splice(candidates.indexOf(candidate), 1);
          continue;
        }
        this.headers.delete(height);
        this.data.delete(key);
        break;
      }
      if (candidates.length === 0) this.headers.delete(height);
    }
    this.dropStale();
  }

  /** Forgets blobs of heights the chain has whose other half did not come within KNOWN_BLOB_WAIT_DA_HEIGHTS. */
  private dropStale(): void {
    const next = this.sink.nextHeight;
    const stale = (height: bigint, daHeight: bigint) => height < next && daHeight + KNOWN_BLOB_WAIT_DA_HEIGHTS < this.next;
    for (const [height, list] of this.headers) {
      const kept = list.filter((c) => !stale(height, c.daHeight));
      if (kept.length === 0) this.headers.delete(height);
      else if (kept.length < list.length) this.headers.set(height, kept);
    }
    for (const [key, entry] of this.data) if (stale(entry.data.metadata?.height ?? 0n, entry.daHeight)) this.data.delete(key);
  }

  /**
   * Saves how far DA was read — no further than the lowest DA height of a block
   * still waiting, so a restart re-reads what it had not applied.
   */
  private saveScanPosition(force: boolean): void {
    if (!force && this.clock.now() - this.cacheWrittenAt < CACHE_WRITE_INTERVAL_MS) return;
    let safe = this.next - 1n;
    if (this.foreignDaHeight !== null && this.foreignDaHeight - 1n < safe) safe = this.foreignDaHeight - 1n;
    for (const list of this.headers.values()) for (const c of list) if (c.daHeight - 1n < safe) safe = c.daHeight - 1n;
    for (const entry of this.data.values()) if (entry.daHeight - 1n < safe) safe = entry.daHeight - 1n;
    if (safe < 0n) return;
    this.cache.update({ scannedDaHeight: safe.toString() });
    this.cacheWrittenAt = this.clock.now();
  }
}

const dataKey = (height: bigint, hash: Uint8Array) => `${height}:${Buffer.from(hash).toString('hex')}`;
