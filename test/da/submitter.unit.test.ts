import { dirname } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DaCache, DaErrorText, DaMethod, blockBlobs, type DaNamespaces } from '../../src/da/index.js';
import { SIGNING_THREAD_MIN_BLOCKS } from '../../src/da/blob-signer.js';
import { decodeStoredBlock } from '../../src/store/index.js';
import { buildChain, buildSubmitter, type CoreParts } from '../../src/node/index.js';
import { ManualClock } from '../helpers/clock.js';
import { MemoryDa } from '../helpers/memory-da.js';
import { coreParts, closedAfterEach } from '../helpers/node-parts.js';
import { waitFor } from '../helpers/wait.js';

// The DA submitter built alone (src/node/parts.ts, buildSubmitter) over a real
// store in a temp dir, an in-memory DA node with celestia-node's answers
// (test/helpers/memory-da.ts) and a clock moved by hand: no socket, and no
// wait on the wall clock (a retry's backoff, the search watching DA).

const closers = closedAfterEach();

const DA_BLOCK_MS = 100;
const INCLUSION_WINDOW = 3;
const enc = (s: string) => new TextEncoder().encode(s);
/** Numbers every tx of the file: a restarted aggregator's txs differ from the first one's. */
let txs = 0;

/**
 * An aggregator's chain and DA submitter over `da` (over `parts`, or new ones
 * whose batches hold at most `maxBlobSize` bytes); `produce(n)` commits n blocks of one tx.
 */
async function aggregator(da: MemoryDa, opts: { namespaces?: DaNamespaces; parts?: CoreParts; maxBlobSize?: number } = {}) {
  const parts =
    opts.parts ??
    (await coreParts(closers, {
      config: (c) =>
        Object.assign(c.da, { block_time: DA_BLOCK_MS, inclusion_window: INCLUSION_WINDOW, ...(opts.maxBlobSize ? { max_blob_size: opts.maxBlobSize } : {}) }),
    }));
  const clock = new ManualClock();
  const chain = await buildChain(parts);
  const submitter = buildSubmitter({ ...parts, da, clock, ...(opts.namespaces ? { namespaces: opts.namespaces } : {}) }, chain);
  const root = new AbortController();
  const fatal: Error[] = [];
  closers.push(() => submitter.stopped());
  closers.push(() => root.abort(new Error('test over')));
  const produce = async (n: number) => {
    for (let i = 0; i < n; i++) await chain.produce([enc(`k${txs++}=v`)], BigInt(clock.now()) * 1_000_000n, parts.signer);
  };
  const start = () => submitter.start(root.signal, (err) => fatal.push(err));
  const stop = async () => {
    root.abort(new Error('stopped'));
    await submitter.stopped();
  };
  const included = (height: bigint) => waitFor(() => parts.store.daIncludedHeight() >= height, `blocks up to ${height} recorded on DA`);
  return { parts, clock, chain, submitter, fatal, produce, start, stop, included };
}

/** The block heights whose header blob DA holds, in DA order: a block posted twice shows twice. */
async function postedHeights(da: MemoryDa, parts: CoreParts): Promise<number[]> {
  // A block's header blob is deterministic (ed25519 signatures are): the one the store's block makes.
  const heightOf = new Map<string, number>();
  for (let h = 1n; h <= parts.store.height(); h++) {
    const [header] = blockBlobs(decodeStoredBlock((await parts.store.getBlock(h))!), parts.namespaces, parts.signer);
    heightOf.set(Buffer.from(header!.data).toString('hex'), Number(h));
  }
  return da.allBlobs().flatMap((b) => heightOf.get(Buffer.from(b.data).toString('hex')) ?? []);
}

/** The DA heights holding each header blob, in DA order. */
async function postedAt(da: MemoryDa, parts: CoreParts): Promise<bigint[]> {
  const heights: bigint[] = [];
  for (let h = 1n; h <= da.head; h++) if ((await da.getAll(h, [parts.namespaces.header])).length > 0) heights.push(h);
  return heights;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('DaSubmitter (socket-free)', () => {
  it('posts every block once, in order, and asks DA for its head only before its first submission', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da);
    await a.produce(3);
    a.start();
    await a.included(3n);
    // The next blocks come while it waits for blocks: no header.NetworkHead before their submission (issue 19).
    await a.produce(2);
    await a.included(5n);
    await a.produce(1);
    await a.included(6n);
    expect(await postedHeights(da, a.parts)).toEqual(range(1, 6));
    expect(da.count(DaMethod.networkHead)).toBe(1);
    // Each block records the DA height that holds it.
    const stored = await a.parts.store.getBlock(6n);
    expect(stored!.headerDaHeight).toBe(da.head);
    // After a long wait for blocks the last inclusion is too old to start a search from: the head is asked once.
    a.clock.advance(65 * DA_BLOCK_MS);
    await a.produce(1);
    await a.included(7n);
    expect(da.count(DaMethod.networkHead)).toBe(2);
    // The cache names the last submission until the next one is sent; its blocks are recorded, so a restart searches nothing.
    expect(a.parts.cache.get().pending).toMatchObject({ fromHeight: '7', toHeight: '7' });
    expect(a.fatal).toEqual([]);
    await a.stop();
    const searchesBefore = da.count(DaMethod.getAll);
    const cache = new DaCache(dirname(a.parts.cache.path), a.parts.logger);
    const restarted = await aggregator(da, { parts: { ...a.parts, cache } });
    restarted.start();
    await restarted.produce(1);
    await restarted.included(8n);
    expect(da.count(DaMethod.getAll)).toBe(searchesBefore);
    expect(await postedHeights(da, a.parts)).toEqual(range(1, 8));
  });

  it('signs a large batch on the signing thread: the same blobs, each block once', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da);
    await a.produce(SIGNING_THREAD_MIN_BLOCKS + 6);
    // The first half without kept signatures: the thread signs those and leaves the others' in place.
    await a.parts.store.clearDaSignatures(BigInt(SIGNING_THREAD_MIN_BLOCKS / 2));
    a.start();
    await a.included(BigInt(SIGNING_THREAD_MIN_BLOCKS + 6));
    expect(da.count(DaMethod.submit)).toBe(1);
    expect(await postedHeights(da, a.parts)).toEqual(range(1, SIGNING_THREAD_MIN_BLOCKS + 6));
    expect(a.fatal).toEqual([]);
  });

  it('a crash while an included submission is being recorded (the next one already sent): the restart finds both on DA and posts neither again', async () => {
    const da = new MemoryDa();
    // One block a batch.
    const first = await aggregator(da, { maxBlobSize: 1 });
    const parts = first.parts;
    await first.produce(2);
    // The store's writes of inclusions are held, then lost with the process.
    const markDaIncluded = parts.store.markDaIncluded.bind(parts.store);
    const killed = new Error('process killed');
    let kill!: () => void;
    const held = new Promise<void>((_, reject) => (kill = () => reject(killed)));
    held.catch(() => undefined);
    parts.store.markDaIncluded = () => held;
    first.start();
    // Block 1's inclusion is being recorded while block 2 is sent.
    await waitFor(() => da.count(DaMethod.submit) === 2, 'both blocks submitted');
    const includedAt = (await postedAt(da, parts))[0]!;
    kill();
    await first.stop();
    expect(first.fatal).toEqual([killed]);
    expect(parts.store.daIncludedHeight()).toBe(0n);
    // The search for block 2 starts at block 1's DA height.
    expect(BigInt(parts.cache.get().pending!.daHeadBefore)).toBe(includedAt - 1n);

    parts.store.markDaIncluded = markDaIncluded;
    const cache = new DaCache(dirname(parts.cache.path), parts.logger);
    const second = await aggregator(da, { parts: { ...parts, cache } });
    second.start();
    await second.included(2n);
    expect(da.count(DaMethod.submit)).toBe(2);
    expect(await postedHeights(da, parts)).toEqual([1, 2]);
    expect((await parts.store.getBlock(1n))!.headerDaHeight).toBe(includedAt);
  });

  it('a backlog of many batches, the next ones prepared while one is in flight: one refused midway, every block posted once, in order', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da, { maxBlobSize: 1_500 });
    await a.produce(12);
    // The second batch is refused: the batches prepared after it start past it, and are read again.
    const submits: number[] = [];
    const submit = da.submit.bind(da);
    da.submit = async (blobs, config, signal) => {
      submits.push(blobs.length);
      if (submits.length === 2) da.failSubmits({ answer: DaErrorText.insufficientFunds });
      return submit(blobs, config, signal);
    };
    a.start();
    a.clock.advance(await a.clock.sleeping());
    await a.included(12n);
    expect(await postedHeights(da, a.parts)).toEqual(range(1, 12));
    // Several batches of a few blocks each (a header and a data blob a block), the refused one sent twice.
    expect(submits.length).toBeGreaterThanOrEqual(5);
    expect(submits[1]).toBe(submits[2]);
    expect(a.fatal).toEqual([]);
  });

  it('a submission the DA node refused before taking it is posted again after the backoff, with no search of DA', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da);
    await a.produce(2);
    da.failSubmits({ answer: DaErrorText.insufficientFunds });
    a.start();
    const wait = await a.clock.sleeping();
    expect(wait).toBeGreaterThan(0);
    const status = a.submitter.status();
    expect(status.attempt).toBe(1);
    expect(status.lastError).toMatchObject({ reason: 'insufficient_funds' });
    expect(a.parts.store.daIncludedHeight()).toBe(0n);
    // Refused by CheckTx: nothing in flight to find on DA.
    expect(a.parts.cache.get().pending).toBeNull();
    const searchesBefore = da.count(DaMethod.getAll);
    a.clock.advance(wait);
    await a.included(2n);
    expect(da.count(DaMethod.getAll)).toBe(searchesBefore);
    expect(await postedHeights(da, a.parts)).toEqual([1, 2]);
    expect(a.submitter.status()).toMatchObject({ attempt: 0, lastError: null, failingSince: 0 });
  });

  it('a produced block is posted with the blob signatures made with it: nothing signed at submission, the same bytes, deleted once on DA', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da);
    await a.produce(3);
    const heights = [1n, 2n, 3n];
    expect((await a.parts.store.getDaSignatures(heights)).map((s) => s?.length)).toEqual([128, 128, 128]);
    const sign = vi.spyOn(a.parts.signer, 'sign');
    a.start();
    await a.included(3n);
    expect(sign).not.toHaveBeenCalled();
    // Header and data blobs byte for byte as the block's blobs signed now (ed25519 is deterministic).
    const expected: string[] = [];
    for (const h of heights) {
      for (const blob of blockBlobs(decodeStoredBlock((await a.parts.store.getBlock(h))!), a.parts.namespaces, a.parts.signer)) {
        expected.push(Buffer.from(blob.data).toString('hex'));
      }
    }
    expect(da.allBlobs().map((b) => Buffer.from(b.data).toString('hex'))).toEqual(expected);
    await waitFor(async () => (await a.parts.store.getDaSignatures(heights)).every((s) => s === undefined), 'the signatures deleted');
  });

  it('retries post the blobs signed for the first attempt: a DA outage costs no signing per attempt', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da);
    await a.produce(3);
    // Blocks without kept signatures (synced, or made by an older noded) are signed at submission.
    await a.parts.store.clearDaSignatures(3n);
    const refused = { answer: DaErrorText.insufficientFunds };
    da.failSubmits(refused, refused, refused);
    const sign = vi.spyOn(a.parts.signer, 'sign');
    a.start();
    await a.clock.sleeping();
    const signedForFirst = sign.mock.calls.length;
    expect(signedForFirst).toBeGreaterThan(0);
    for (let attempt = 2; attempt <= 3; attempt++) {
      a.clock.advance(await a.clock.sleeping());
      await waitFor(() => a.submitter.status().attempt === attempt, `attempt ${attempt} to fail`);
    }
    a.clock.advance(await a.clock.sleeping());
    await a.included(3n);
    expect(sign.mock.calls.length).toBe(signedForFirst);
    expect(await postedHeights(da, a.parts)).toEqual([1, 2, 3]);
  });

  it('a submission whose answer was lost is found on DA by the inclusion-window search, not posted twice', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da);
    await a.produce(3);
    da.failSubmits('answer lost');
    a.start();
    // The retry's backoff, then the search: nothing on DA yet (the tx waits in the mempool), so it watches DA a block time.
    await a.clock.endNextSleep();
    expect(await a.clock.sleeping()).toBe(DA_BLOCK_MS);
    expect(a.parts.store.daIncludedHeight()).toBe(0n);
    const includedAt = da.seal();
    await a.clock.endNextSleep();
    await a.included(3n);
    expect(da.count(DaMethod.submit)).toBe(1);
    expect(await postedHeights(da, a.parts)).toEqual([1, 2, 3]);
    expect((await a.parts.store.getBlock(3n))!.headerDaHeight).toBe(includedAt);
    // Found after all: DA is not failing.
    expect(a.submitter.status()).toMatchObject({ attempt: 0, lastError: null });
  });

  it('a submission lost on its way is posted again once the inclusion window has passed, exactly once', async () => {
    const da = new MemoryDa();
    const a = await aggregator(da);
    await a.produce(2);
    da.failSubmits('request lost');
    a.start();
    await a.clock.endNextSleep(); // the backoff
    // The search watches DA until its head is INCLUSION_WINDOW blocks above the head it began at.
    for (let i = 0; i < INCLUSION_WINDOW; i++) {
      expect(await a.clock.sleeping()).toBe(DA_BLOCK_MS);
      expect(da.count(DaMethod.submit)).toBe(1);
      da.seal();
      await a.clock.endNextSleep();
    }
    await a.included(2n);
    expect(da.count(DaMethod.submit)).toBe(2);
    expect(await postedHeights(da, a.parts)).toEqual([1, 2]);
  });

  it('after a restart, finds on DA the submission in flight when it stopped and does not post it again', async () => {
    const da = new MemoryDa(undefined, 5);
    const first = await aggregator(da);
    await first.produce(4);
    da.failSubmits('answer lost');
    first.start();
    await first.clock.sleeping(); // the submission is out; its answer lost; the node stops in the backoff
    await first.stop();
    const pending = first.parts.cache.get().pending;
    expect(pending).toMatchObject({ fromHeight: '1', toHeight: '4' });
    // The head before sending was asked (a fresh start knows no DA height): the search starts above it.
    expect(BigInt(pending!.daHeadBefore)).toBe(5n);
    const includedAt = da.seal();

    // The node starts again: its cache file says what was in flight.
    const cache = new DaCache(dirname(first.parts.cache.path), first.parts.logger);
    const second = await aggregator(da, { parts: { ...first.parts, cache } });
    const readsBefore = da.count(DaMethod.getAll);
    second.start();
    await second.included(4n);
    expect(da.count(DaMethod.submit)).toBe(1);
    expect(await postedHeights(da, first.parts)).toEqual([1, 2, 3, 4]);
    expect((await first.parts.store.getBlock(1n))!.headerDaHeight).toBe(includedAt);
    // The search read only the heights above the head seen before sending.
    expect(da.count(DaMethod.getAll) - readsBefore).toBe(Number(includedAt - 5n));
    await second.produce(1);
    await second.included(5n);
    expect(await postedHeights(da, first.parts)).toEqual([1, 2, 3, 4, 5]);
  });

  it('splits a batch the DA node refuses as too large, and posts every block once', async () => {
    const da = new MemoryDa(1200);
    const a = await aggregator(da);
    await a.produce(8);
    a.start();
    await a.included(8n);
    expect(await postedHeights(da, a.parts)).toEqual(range(1, 8));
    expect(da.count(DaMethod.submit)).toBeGreaterThan(2);
    // Splitting retries at once: no backoff wait.
    expect(a.clock.pending()).toEqual([]);
  });

  it('a namespace the DA node will not take is reported with its reason, nothing is recorded, and it is tried again', async () => {
    const da = new MemoryDa();
    const reserved = new Uint8Array(29);
    reserved[28] = 1; // celestia's reserved transaction namespace
    const a = await aggregator(da, { namespaces: { header: reserved, data: reserved } });
    await a.produce(1);
    a.start();
    await a.clock.sleeping();
    const { lastError } = a.submitter.status();
    expect(lastError).toMatchObject({ reason: 'other' });
    expect(lastError!.message).toContain(
      'invalid user namespace: invalid data namespace(0000000000000000000000000000000000000000000000000000000001): reserved data is forbidden',
    );
    expect(a.parts.store.daIncludedHeight()).toBe(0n);
    expect(da.allBlobs()).toEqual([]);
    const submits = da.count(DaMethod.submit);
    // An answer it does not know keeps the submission pending: DA is watched for it, then it is posted again (and refused again).
    while (da.count(DaMethod.submit) === submits) {
      da.seal();
      await a.clock.endNextSleep();
    }
    await waitFor(() => a.submitter.status().attempt === 2, 'the second refusal recorded');
    expect(a.fatal).toEqual([]);
  });
});
