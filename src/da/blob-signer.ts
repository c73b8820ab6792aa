import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Ed25519Key } from '../types/index.js';
import { signPacked, type BlobLayout, type PackedBlobs, type UnsignedBlock } from './blobs.js';
import type { Blob } from './client.js';

/** What the signing thread is given once: the proposer's key (JWK) and the namespaces. */
interface SigningThreadData {
  jwk: { kty: 'OKP'; crv: 'Ed25519'; d: string; x: string };
  namespaces: Uint8Array[];
}

type Answer = { id: number; buffer: ArrayBuffer; commitments: Uint8Array } | { id: number; error: string };

/**
 * The signing thread's body. It runs from its source text (a worker given a
 * file would need the compiled .js, which tests running the TypeScript sources
 * lack), so it uses nothing but its arguments.
 */
function signingThread(threads: typeof import('node:worker_threads'), crypto: typeof import('node:crypto'), sign: typeof signPacked): void {
  const data = threads.workerData as SigningThreadData;
  const key = crypto.createPrivateKey({ key: data.jwk, format: 'jwk' });
  const commitment = (namespace: Uint8Array, bytes: Uint8Array) => crypto.createHash('sha256').update(namespace).update(bytes).digest();
  threads.parentPort!.on('message', ({ id, buffer, spans }: { id: number } & PackedBlobs) => {
    try {
      const commitments = sign(new Uint8Array(buffer), spans, data.namespaces, (message) => crypto.sign(null, message, key), commitment);
      threads.parentPort!.postMessage({ id, buffer, commitments }, [buffer, commitments.buffer as ArrayBuffer]);
    } catch (err) {
      threads.parentPort!.postMessage({ id, error: (err as Error).message });
    }
  });
}

const SIGNING_THREAD_SOURCE = `(${signingThread.toString()})(require('node:worker_threads'), require('node:crypto'), ${signPacked.toString()})`;

/** Blocks in a batch from which it is signed on the signing threads: a few blocks cost the event loop less than the trip. */
export const SIGNING_THREAD_MIN_BLOCKS = 64;
/** How long the signing threads are kept without work: each holds about 10 MB, which a node posting a block or two at a time never needs. */
const SIGNING_THREAD_IDLE_MS = 10_000;
/** Signing threads at most: a batch is split among them, one per core but the event loop's. */
const MAX_SIGNING_THREADS = 4;

/** One signing thread, and the batches it was given, answered in turn. */
class SigningThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (answer: Answer) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  failed = false;

  constructor(workerData: SigningThreadData, onIdle: () => void) {
    this.worker = new Worker(SIGNING_THREAD_SOURCE, { eval: true, workerData });
    // Held only while a batch is being signed: an idle thread keeps no process alive.
    this.worker.unref();
    this.worker.on('message', (answer: Answer) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) {
        this.worker.unref();
        onIdle();
      }
      waiter?.resolve(answer);
    });
    const fail = (err: Error) => {
      this.failed = true;
      for (const waiter of this.waiting.values()) waiter.reject(err);
      this.waiting.clear();
    };
    this.worker.on('error', (err) => fail(new Error(`a DA signing thread failed: ${err.message}`)));
    this.worker.on('exit', (code) => fail(new Error(`a DA signing thread exited (code ${code})`)));
  }

  async sign(packed: PackedBlobs): Promise<{ buffer: ArrayBuffer; commitments: Uint8Array }> {
    const id = this.nextId++;
    const answer = await new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, ...packed }, [packed.buffer]);
    });
    if ('error' in answer) throw new Error(`signing DA blobs failed: ${answer.error}`);
    return answer;
  }

  get idle(): boolean {
    return this.waiting.size === 0;
  }

  /** Ends the thread: a batch still being signed fails. */
  async close(): Promise<void> {
    this.worker.removeAllListeners();
    for (const waiter of this.waiting.values()) waiter.reject(new Error('the DA signing thread was closed'));
    this.waiting.clear();
    await this.worker.terminate();
  }
}

/**
 * Signs batches of blobs, a large one (a backlog) split among threads of
 * their own, one per core but the event loop's: it is a few thousand ed25519 signatures, and
 * node:crypto's sign costs the calling thread about as much with a callback
 * (the threadpool) as without, so on the event loop it would hold back
 * everything else the node serves. The threads start with a large batch and
 * end once all are idle for SIGNING_THREAD_IDLE_MS, or with close().
 */
export class BlobSigner {
  private threads: SigningThread[] = [];
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly threadCount = Math.max(1, Math.min(MAX_SIGNING_THREADS, availableParallelism() - 1));

  constructor(
    private readonly layout: BlobLayout,
    private readonly key: Ed25519Key,
  ) {}

  /** The blocks' blobs, signed by the key, in order. */
  async sign(blocks: UnsignedBlock[]): Promise<Blob[]> {
    if (blocks.length < SIGNING_THREAD_MIN_BLOCKS) return this.layout.signHere(this.layout.pack(blocks), this.key);
    const threads = this.started();
    const share = Math.ceil(blocks.length / threads.length);
    const parts = threads.map(async (thread, i) => {
      const packed = this.layout.pack(blocks.slice(i * share, (i + 1) * share));
      const { buffer, commitments } = await thread.sign(packed);
      return this.layout.blobs({ buffer, spans: packed.spans }, commitments);
    });
    return (await Promise.all(parts)).flat();
  }

  private started(): SigningThread[] {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    // A thread that failed is replaced (its batches failed with it).
    this.threads = this.threads.filter((t) => !t.failed);
    if (this.threads.length === this.threadCount) return this.threads;
    const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
    const workerData: SigningThreadData = {
      jwk: { kty: 'OKP', crv: 'Ed25519', d: b64url(this.key.seed), x: b64url(this.key.publicKey) },
      namespaces: this.layout.namespaces,
    };
    const onIdle = () => {
      if (this.threads.every((t) => t.idle)) this.idleTimer = setTimeout(() => void this.close(), SIGNING_THREAD_IDLE_MS).unref();
    };
    while (this.threads.length < this.threadCount) this.threads.push(new SigningThread(workerData, onIdle));
    return this.threads;
  }

  /** Ends the threads: a batch still being signed fails. */
  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => t.close()));
  }
}
