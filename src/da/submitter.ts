import type { Logger } from '../log/index.js';
import type { Executor } from '../exec/index.js';
import type { NodeMetrics } from '../metrics/index.js';
import { decodeStoredBlock, type BlockStore, type StoreOp } from '../store/index.js';
import { headerHash, type Ed25519Key } from '../types/index.js';
import { Backoff, type Clock, runLoop } from '../util/index.js';
import { BlobSigner } from './blob-signer.js';
import { BlobLayout, blobSignatures, decodeHeaderBlob, type DaNamespaces, type UnsignedBlock } from './blobs.js';
import type { DaCache, PendingSubmission } from './cache.js';
import { submitOptions, type Blob, type BlobApi } from './client.js';
import { CELESTIA_MIN_GAS_PRICE } from './types.js';
import { DaError, type DaFailureReason } from './errors.js';

export interface SubmitterOptions {
  maxBlobSize: number;
  /** -1: the DA node estimates the gas price. */
  gasPrice: number;
  /** 0: the DA node's default cap on an estimated gas price. */
  maxGasPrice: number;
  gasMultiplier: number;
  retryBaseMs: number;
  retryMaxMs: number;
  chainId: string;
  /** The proposer's key: it signs each header's DA envelope and each block's data blob, as ev-node does. */
  signer: Ed25519Key;
  /**
   * DA blocks within which a submission the DA node took is included, or never:
   * after a submission whose fate is unknown, DA is searched up to this many
   * blocks above the head before the blocks are posted again.
   */
  inclusionWindow: number;
  /** The DA block time: how often that search looks for a new DA head. */
  daBlockTimeMs: number;
}

/**
 * Failures the DA node answered before taking the submission (CheckTx refused
 * it, code 19 included: another tx holds the sequence): it is not included, so
 * nothing needs finding.
 */
const NOT_TAKEN: ReadonlySet<DaFailureReason> = new Set(['unauthorized', 'gas_price_above_cap', 'insufficient_funds', 'too_big', 'already_in_mempool']);

/**
 * Whether a failed `blob.Submit` may still be included. celestia-node broadcasts
 * the PFB before it waits for inclusion (state/txclient/tx_client.go,
 * SubmitPayForBlob), so a timeout or a dropped connection leaves a tx in the
 * mempool; "tx already exists in cache" says these very bytes are there.
 */
function mayBeIncluded(err: DaError): boolean {
  if (err.delivery === 'refused') return false;
  return err.delivery === 'unknown' || !NOT_TAKEN.has(err.reason);
}

export interface DaActivity {
  /** Unix ms of the last DA call that succeeded (0 = none yet). */
  lastSuccessAt: number;
  lastError: { message: string; reason: DaFailureReason; remedy: string; at: number } | null;
  /** Unix ms of the first failure since the last success (0 = the last call succeeded): how long DA has been failing. */
  failingSince: number;
}

/** Records a failed DA call at `at` (Unix ms): the error, and when the run of failures it belongs to began. */
export function recordDaFailure(activity: DaActivity, err: DaError, at = Date.now()): void {
  activity.lastError = { message: err.message, reason: err.reason, remedy: err.remedy, at };
  if (activity.failingSince === 0) activity.failingSince = at;
}

/** Records a DA call that succeeded at `at` (Unix ms): the run of failures, if any, is over. */
export function recordDaSuccess(activity: DaActivity, at = Date.now()): void {
  activity.lastSuccessAt = at;
  activity.lastError = null;
  activity.failingSince = 0;
}

export interface SubmitterStatus extends DaActivity {
  gasPrice: number;
  attempt: number;
}

/**
 * Where an HA leader records each submission before sending it, so the next
 * leader knows the last one that may be on DA (src/node/ha.ts keeps it in etcd).
 */
export interface SharedSubmissions {
  /** Records `pending` as this leader's last submission; false when it could not (no longer leading, etcd away): it is not sent then. */
  record(pending: PendingSubmission): Promise<boolean>;
  /** The last submission any leader recorded, or null when none did. */
  last(): Promise<PendingSubmission | null>;
}

/** DA heights a restart searches for an in-flight submission, at most. */
const MAX_RECONCILE_SCAN = 10_000;

/**
 * DA block times a known DA height stands in for the head before a submission
 * (see daHeadBefore): at most this many more heights for a search after a crash
 * to read, in exchange for no round trip on the steady path.
 */
const HEAD_REUSE_DA_BLOCKS = 64;

interface Recording {
  to: bigint;
  daHeight: bigint;
  done: Promise<void>;
}

/**
 * Batches read and signed ahead of the one in flight. Signing a full batch
 * takes about a DA round trip of CPU (2,222 ed25519 signatures): begun two
 * round trips before its turn, a batch is ready when its turn comes even when
 * a round trip is shorter than its signing, or the signing thread was held up.
 * Each batch held is at most max_blob_size.
 */
const PREPARE_AHEAD = 2;

/** A batch being prepared: `read` once its blocks are chosen (the next batch starts after them), `signed` once its blobs are made; null when there was nothing to prepare. */
interface Prepared {
  read: Promise<Batch | null>;
  signed: Promise<Batch | null>;
}

/** Blocks `from..to` as the blobs of one submission, filled up to `cap` bytes (at least one block). */
interface Batch {
  from: bigint;
  /** from - 1 while empty. */
  to: bigint;
  blobs: Blob[];
  bytes: number;
  cap: number;
  /** The next block did not fit: nothing is to be added. */
  full: boolean;
}

const emptyBatch = (from: bigint, cap: number): Batch => ({ from, to: from - 1n, blobs: [], bytes: 0, cap, full: false });

/**
 * Posts every produced block's header and data to DA, in order, batched up to
 * the max blob size; retries with capped exponential backoff; records each
 * block's DA heights in the store when included. A submission in flight is
 * noted in the cache first, so a restart finds it on DA instead of posting it twice.
 */
export class DaSubmitter {
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private gasPrice: number;
  /** Consecutive failed submissions and the wait after each (the node's one retry policy). */
  private readonly backoff: Backoff;
  /** The wait before the next try, drawn when the last failure was recorded. */
  private retryDelayMs = 0;
  private sizeCap: number;
  /** The highest DA height known to exist (a submission's inclusion, a head asked for), and when it was learned (clock ms). */
  private knownDaHead: { height: bigint; at: number } | null = null;
  /** The batches after the one in flight, in order, read and signed while the DA node holds that one (PREPARE_AHEAD). */
  private prepared: Prepared[] = [];
  private readonly layout: BlobLayout;
  private readonly signer: BlobSigner;
  /** Blocks read from the store past the last batch filled (the rest of the read that filled it): the next batch starts with them. */
  private readAhead: UnsignedBlock[] = [];
  /** The last included submission, being recorded in the store (record). */
  private recording: Recording | null = null;
  readonly activity: DaActivity = { lastSuccessAt: 0, lastError: null, failingSince: 0 };
  /** An HA node's record of its submissions (set by src/node/ha.ts); null for a lone aggregator. */
  shared: SharedSubmissions | null = null;

  constructor(
    private readonly store: BlockStore,
    private readonly client: BlobApi,
    private readonly cache: DaCache,
    private readonly namespaces: DaNamespaces,
    private readonly executor: Executor,
    private readonly opts: SubmitterOptions,
    private readonly logger: Logger,
    private readonly metrics: NodeMetrics | null,
    private readonly clock: Clock,
  ) {
    this.gasPrice = opts.gasPrice;
    this.sizeCap = opts.maxBlobSize;
    this.backoff = new Backoff({ baseMs: opts.retryBaseMs, maxMs: opts.retryMaxMs });
    this.layout = new BlobLayout(namespaces, opts.signer);
    this.signer = new BlobSigner(this.layout, opts.signer);
  }

  status(): SubmitterStatus {
    return { ...this.activity, gasPrice: this.gasPrice, attempt: this.backoff.attempt };
  }

  /**
   * An HA node become leader (issue 20): the blocks it holds above its
   * DA-included height may be on DA already, or on their way, posted by an old
   * leader. The last submission a leader recorded (`shared`, written before each
   * was sent) says how far that can go: blocks above it were never sent. Up to
   * there the blocks are noted as one submission in flight since the DA height
   * of the last block known included, so the start-up search (reconcile) reads
   * DA from there and, until that last recorded block turns up, watches the
   * inclusion window before posting any of them: none posted twice, none
   * skipped. With nothing recorded, every block held may have been sent. The
   * search is bounded by how current the DA-included height is: an HA
   * follower's DA retriever keeps it so. Call before start().
   */
  async inheritSubmission(): Promise<void> {
    const included = this.store.daIncludedHeight();
    let recorded: PendingSubmission | null = null;
    try {
      recorded = (await this.shared?.last()) ?? null;
    } catch (err) {
      this.logger.warn(
        { code: 'DA_SHARED_SUBMISSION_UNREADABLE', err: (err as Error).message },
        "the cluster's last DA submission cannot be read: every block held above the DA-included height is searched for as if sent",
      );
    }
    const held = this.store.height();
    const lastSent = recorded && BigInt(recorded.toHeight) < held ? BigInt(recorded.toHeight) : held;
    if (included >= lastSent) return;
    const since = await this.lastIncludedDaHeight(included);
    this.cache.update({ pending: { fromHeight: (included + 1n).toString(), toHeight: lastSent.toString(), daHeadBefore: (since - 1n).toString() } });
  }

  /** Wakes the loop: a new block is waiting. */
  notify(): void {
    this.wake?.();
  }

  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.loop = runLoop((s) => this.run(s), signal, onFatal);
  }

  async stopped(): Promise<void> {
    await this.loop;
    // A batch being prepared reads the store: done before the node closes it. Its failure, if any, no longer matters.
    await Promise.allSettled(this.prepared.map((p) => p.signed));
    await this.signer.close();
  }

  private waitForBlock(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.wake = null;
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.wake = null;
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.wake = done;
    });
  }

  /**
   * The writes that keep a block this aggregator made with its DA blob
   * signatures (blobSignatures), made now on libuv's thread pool while the
   * block's batch waits for the one before (on the producer's thread they were
   * ~0.5 ms of its ~6.5 a block of 1,000 txs): a backlog is then posted
   * without signing. They are deleted once the block is on DA.
   */
  async producedBlockOps(height: bigint, blockBytes: Uint8Array): Promise<StoreOp[]> {
    return [this.store.daSignaturesOp(height, await blobSignatures(blockBytes, this.opts.signer))];
  }

  private async run(signal: AbortSignal): Promise<void> {
    // Without a cache file nothing says what was in flight before: look on DA for every pending block.
    let searchAll = !this.cache.loaded;
    // Kept for blocks that reached DA while another node led, or that an older noded left behind.
    await this.store.clearDaSignatures(this.store.daIncludedHeight());
    try {
      while (!signal.aborted) {
        const from = this.recordedThrough() + 1n;
        if (from > this.store.height()) {
          // Settled before waiting, then looked at again: a block made meanwhile woke no one.
          if (this.recording) await this.settleRecording();
          else await this.waitForBlock(signal);
          continue;
        }
        const batch = await this.nextBatch(from, this.store.height());
        const { blobs, to, bytes } = batch;
        // Already now: a search of DA, or the note of the submission, may take a while.
        this.prepareAhead(to + 1n);
        this.metrics?.daAttempts.inc();
        this.metrics?.daGasPrice.set(this.gasPrice);
        try {
          // A submission that failed after it was sent may still have been included: look before sending again.
          if (searchAll || this.unrecordedSubmission()) {
            await this.settleRecording();
            await this.reconcile(signal);
            searchAll = false;
            // Found on DA from an earlier attempt: that attempt succeeded after all, and DA is no longer failing.
            if (this.store.daIncludedHeight() >= from) {
              this.succeeded();
              continue;
            }
          }
          const daHeadBefore = await this.daHeadBefore(signal);
          const pending = { fromHeight: from.toString(), toHeight: to.toString(), daHeadBefore: daHeadBefore.toString() };
          // Not recorded for the next HA leader, not sent: try again (a leader that lost its term is stopped meanwhile).
          if (this.shared && !(await this.shared.record(pending))) {
            await this.clock.sleep(this.opts.retryBaseMs, signal);
            continue;
          }
          this.cache.update({ pending });
          let daHeight: bigint;
          try {
            daHeight = await this.client.submit(blobs, submitOptions({ gasPrice: this.gasPrice, maxGasPrice: this.opts.maxGasPrice }), signal);
          } catch (err) {
            await this.settleRecording();
            // Refused before the DA node took it: there is nothing to find on DA before posting again.
            if (err instanceof DaError && !mayBeIncluded(err)) this.cache.update({ pending: null });
            throw err;
          }
          await this.settleRecording();
          this.learnedDaHead(daHeight);
          this.recording = this.record(from, to, daHeight);
          this.succeeded();
          this.metrics?.daSubmittedBlobs.inc(blobs.length);
          this.metrics?.daSubmittedBytes.inc(bytes);
          this.logger.info({ heights: span(from, to), daHeight: Number(daHeight), blobs: blobs.length, bytes }, 'submitted blocks to DA');
        } catch (err) {
          if (!(err instanceof DaError)) throw err;
          this.failed(err, from, to);
          if (err.reason === 'too_big' && to > from) continue;
          // The retry posts these same blobs (a DA outage must not cost a read and a signing of the batch per attempt):
          // first in line, where nextBatch takes it if it still starts at the first height not on DA.
          this.prepared.unshift({ read: Promise.resolve(batch), signed: Promise.resolve(batch) });
          await this.clock.sleep(this.retryDelayMs, signal);
        }
      }
    } finally {
      await this.settleRecording();
    }
  }

  /**
   * Writes an included submission's DA height to the store, and tells the
   * execution layer its blocks are final, while the next submission is sent:
   * the cache still names the submission until the next one replaces it, and a
   * search after a crash covers its DA height (daHeadBefore), so nothing waits
   * on the write.
   */
  private record(from: bigint, to: bigint, daHeight: bigint): Recording {
    const done = (async () => {
      // Once the next submission is on its way: the store's batch for a full submission takes a while to build.
      await new Promise((resolve) => setImmediate(resolve));
      await this.store.markDaIncluded(from, to, daHeight, daHeight);
      await this.executor.setFinal(to);
    })();
    // Awaited by settleRecording; until then a failure must not go unhandled.
    done.catch(() => undefined);
    return { to, daHeight, done };
  }

  /** Waits for the last submission's recording, if any: a failed store write stops the submitter. */
  private async settleRecording(): Promise<void> {
    const recording = this.recording;
    this.recording = null;
    await recording?.done;
  }

  /** The last block that is on DA, counting the submission being recorded. */
  private recordedThrough(): bigint {
    const stored = this.store.daIncludedHeight();
    return this.recording && this.recording.to > stored ? this.recording.to : stored;
  }

  /**
   * Whether the submission the cache names may be on DA without the store
   * knowing: it failed after it was sent, or the node stopped while it was in
   * flight. One that was included stays named until the next is sent, and
   * needs no search.
   */
  private unrecordedSubmission(): boolean {
    const pending = this.cache.get().pending;
    return !!pending && BigInt(pending.toHeight) > this.recordedThrough();
  }

  /**
   * The DA head before a submission is sent: a search for the submission after
   * a crash starts above it (reconcile). Any DA height known to exist will do,
   * since the submission lands above the head at sending, which is at least that
   * height. So the last inclusion's height (or the head the last search asked
   * for) stands in for the head, and the steady path makes no round trip a bare
   * client does not make: asking here would hold every submission back by one.
   * Only once that height is older than HEAD_REUSE_DA_BLOCKS DA block times (the
   * node waited that long for blocks, or for DA) is the head asked again, so it
   * adds at most that many heights to a search after a crash, whose reach
   * stays MAX_RECONCILE_SCAN. While the last submission is being recorded,
   * the height below its inclusion stands in: one more height to read.
   */
  private async daHeadBefore(signal: AbortSignal): Promise<bigint> {
    const known = this.knownDaHead;
    const head = known && this.clock.now() - known.at <= HEAD_REUSE_DA_BLOCKS * this.opts.daBlockTimeMs ? known.height : await this.networkHead(signal);
    // The last submission's blocks may not be in the store yet (record): a search starts at their DA height, to find them too.
    return this.recording && this.recording.daHeight <= head ? this.recording.daHeight - 1n : head;
  }

  private async networkHead(signal: AbortSignal): Promise<bigint> {
    const head = await this.client.networkHead(signal);
    this.learnedDaHead(head);
    return head;
  }

  private learnedDaHead(height: bigint): void {
    if (!this.knownDaHead || height >= this.knownDaHead.height) this.knownDaHead = { height, at: this.clock.now() };
  }

  /**
   * Starts reading and signing the batches from `from` while the one before
   * them is in flight, up to PREPARE_AHEAD of them: each begins where the one
   * before it ends, when that one is full (a batch with room takes the
   * blocks made before its turn then, in nextBatch).
   */
  private prepareAhead(from: bigint): void {
    while (this.prepared.length < PREPARE_AHEAD) {
      const before = this.prepared.at(-1)?.read;
      const cap = this.sizeCap;
      let blocks: UnsignedBlock[] = [];
      const read = (async () => {
        const start = before ? await before.then((b) => (b?.full ? b.to + 1n : null)) : from;
        if (start === null || start > this.store.height()) return null;
        const batch = emptyBatch(start, cap);
        blocks = await this.read(batch, this.store.height());
        return batch;
      })();
      const signed = read.then(async (batch) => {
        if (!batch) return null;
        await this.sign(batch, blocks);
        // A full batch is sent as it is: its body is made now, not after the answer to the one before.
        if (batch.full) this.client.prepareSubmit?.(batch.blobs);
        return batch;
      });
      // Awaited when taken (or at stop); until then a failure must not go unhandled.
      signed.catch(() => undefined);
      this.prepared.push({ read, signed });
    }
  }

  /**
   * The batch from `from`: the first prepared while the last submission was
   * in flight when it starts there and was filled to the same cap (topped up
   * with blocks made since, if it had room), else one read now (the other
   * batches prepared are then dropped, once they are done with the store).
   */
  private async nextBatch(from: bigint, head: bigint): Promise<Batch> {
    const prepared = await this.prepared.shift()?.signed;
    if (prepared && prepared.from === from && prepared.cap === this.sizeCap) return prepared.full ? prepared : this.fill(prepared, head);
    const dropped = this.prepared;
    this.prepared = [];
    await Promise.allSettled(dropped.map((p) => p.signed));
    return this.fill(emptyBatch(from, this.sizeCap), head);
  }

  /** Adds to `batch` the blocks after it up to `head` that fit its cap (at least one block), and signs them. */
  private async fill(batch: Batch, head: bigint): Promise<Batch> {
    return this.sign(batch, await this.read(batch, head));
  }

  /** Adds the blobs of `blocks`, the ones read into `batch` last, signed all at once. */
  private async sign(batch: Batch, blocks: UnsignedBlock[]): Promise<Batch> {
    if (blocks.length > 0) batch.blobs.push(...(await this.signer.sign(blocks)));
    return batch;
  }

  /**
   * Adds to `batch` the blocks after it up to `head` whose blobs fit its cap
   * (at least one block), unsigned: they are returned, for sign. Each block is
   * read once: what a read brings past the cap waits in readAhead for the next batch.
   */
  private async read(batch: Batch, head: bigint): Promise<UnsignedBlock[]> {
    const blocks: UnsignedBlock[] = [];
    let bytes = batch.bytes;
    let to = batch.to;
    const take = (block: UnsignedBlock): boolean => {
      batch.full = (batch.to >= batch.from || blocks.length > 0) && bytes + block.bytes > batch.cap;
      if (batch.full) return false;
      blocks.push(block);
      bytes += block.bytes;
      to = block.height;
      return true;
    };
    const ahead = this.readAhead[0]?.height === to + 1n ? this.readAhead.filter((b) => b.height <= head) : [];
    this.readAhead = [];
    const rest = ahead.findIndex((block) => !take(block));
    if (rest >= 0) this.readAhead = ahead.slice(rest);
    else if (to < head) {
      read: for await (const stored of this.store.blocksInRange(to + 1n, head)) {
        const signatures = await this.store.getDaSignatures(stored.map((b) => b.height));
        const unsigned = stored.map((b, i) => this.layout.stored(b.height, b.bytes, signatures[i] ?? null));
        for (const [i, block] of unsigned.entries()) {
          if (take(block)) continue;
          this.readAhead = unsigned.slice(i);
          break read;
        }
      }
    }
    if (!batch.full && to < head) throw new Error(`block ${to + 1n} is missing from the store although the chain is at ${head}`);
    batch.bytes = bytes;
    batch.to = to;
    return blocks;
  }

  private recordError(err: DaError): void {
    this.retryDelayMs = this.backoff.next();
    recordDaFailure(this.activity, err, this.clock.now());
  }

  private succeeded(): void {
    this.backoff.reset();
    recordDaSuccess(this.activity, this.clock.now());
    // Ease a raised gas price back toward the configured one.
    if (this.gasPrice > this.opts.gasPrice) {
      const eased = this.gasPrice / this.opts.gasMultiplier;
      this.gasPrice = this.opts.gasPrice >= 0 ? Math.max(this.opts.gasPrice, eased) : eased < CELESTIA_MIN_GAS_PRICE ? -1 : eased;
    }
  }

  private failed(err: DaError, from: bigint, to: bigint): void {
    this.recordError(err);
    this.metrics?.daFailures.inc({ reason: err.reason });
    this.metrics?.daLastFailure.set(this.activity.lastError!.at / 1000);
    this.logger.error(
      {
        code: 'DA_SUBMIT_FAILED',
        error: err.message,
        reason: err.reason,
        attempt: this.backoff.attempt,
        heights: span(from, to),
        gasPrice: this.gasPrice,
        remedy: err.remedy,
      },
      'DA layer submission failed',
    );
    // "tx already exists in cache" is not raised for: the same tx is still in the mempool, and a higher price would not replace it.
    if (err.reason === 'already_in_mempool') {
      // An estimated price is unknown here: raising starts from celestia's minimum.
      this.gasPrice = (this.gasPrice >= 0 ? this.gasPrice : CELESTIA_MIN_GAS_PRICE) * this.opts.gasMultiplier;
    } else if (err.reason === 'too_big') {
      this.sizeCap = Math.max(1, Math.floor(this.sizeCap / 2));
      this.logger.warn({ sizeCap: this.sizeCap }, 'DA rejected the batch as too large; splitting it');
    }
  }

  /**
   * Finds on DA the blocks of a submission that was in flight when it failed
   * or the node stopped (or, without a cache, any pending block) and records
   * them as included, so nothing confirmed is posted twice. A DA node may
   * include what it took after the client lost the answer (celestia: while the
   * tx is in its mempool), so for a submission in flight the search goes on
   * until the DA head is `inclusionWindow` blocks above the head seen when it
   * began, unless that submission turns up first. It reads at most MAX_RECONCILE_SCAN
   * heights below that head, plus the window.
   */
  private async reconcile(signal: AbortSignal): Promise<void> {
    const cached = this.cache.get();
    const included = this.store.daIncludedHeight();
    // Nothing left to find: every block is recorded, or the in-flight submission was recorded just before a stop.
    if (included >= this.store.height() || (cached.pending && BigInt(cached.pending.toHeight) <= included)) return this.cache.update({ pending: null });
    let head = await this.networkHead(signal);
    // Without a cache nothing says a submission was in flight (a new home, or the cache deleted while stopped): one pass will do.
    const settled = cached.pending ? head + BigInt(this.opts.inclusionWindow) : head;
    // The in-flight submission is one blob.Submit: once its last block is found, all of it is.
    const last = cached.pending ? BigInt(cached.pending.toHeight) : null;
    let fromDa = cached.pending ? BigInt(cached.pending.daHeadBefore) + 1n : await this.lastIncludedDaHeight(included);
    if (head - fromDa > BigInt(MAX_RECONCILE_SCAN)) {
      this.logger.warn({ from: Number(fromDa), head: Number(head) }, `searching only the last ${MAX_RECONCILE_SCAN} DA heights for pending blocks`);
      fromDa = head - BigInt(MAX_RECONCILE_SCAN);
    }
    const found = new Map<bigint, bigint>();
    let watching = false;
    for (;;) {
      for (; fromDa <= head; fromDa++) {
        for (const blob of await this.client.getAll(fromDa, [this.namespaces.header], signal)) {
          const height = await this.storedBlockPostedIn(blob.data, included);
          if (height !== null && !found.has(height)) found.set(height, fromDa);
        }
      }
      if (head >= settled || (last !== null && found.has(last))) break;
      if (!watching)
        this.logger.info({ daHeight: Number(head), until: Number(settled) }, 'an earlier submission may still be included; watching DA before posting again');
      watching = true;
      await this.clock.sleep(this.opts.daBlockTimeMs, signal);
      head = await this.networkHead(signal);
    }
    let next = included + 1n;
    for (; found.has(next); next++) await this.store.markDaIncluded(next, next, found.get(next)!, found.get(next)!);
    if (next > included + 1n) {
      this.logger.info({ heights: span(included + 1n, next - 1n) }, 'found blocks already on DA from an earlier attempt; not posting them again');
    }
    this.cache.update({ pending: null });
  }

  private async lastIncludedDaHeight(included: bigint): Promise<bigint> {
    if (included === 0n) return 1n;
    const stored = await this.store.getBlock(included);
    return stored && stored.headerDaHeight > 0n ? stored.headerDaHeight : 1n;
  }

  /** The height of the pending stored block a header blob carries, or null when it carries none. */
  private async storedBlockPostedIn(data: Uint8Array, included: bigint): Promise<bigint | null> {
    let header;
    try {
      header = decodeHeaderBlob(data).signed.header;
    } catch {
      return null;
    }
    if (!header || header.chainId !== this.opts.chainId || header.height <= included) return null;
    const stored = await this.store.getBlock(header.height);
    if (!stored) return null;
    const ours = headerHash(decodeStoredBlock(stored).header!.header!);
    return Buffer.compare(headerHash(header), ours) === 0 ? header.height : null;
  }
}

export const span = (from: bigint, to: bigint) => (from === to ? `${from}` : `${from}-${to}`);
