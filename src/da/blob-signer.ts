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

/** Blocks in a batch from which it is signed on the signing thread: a few blocks cost the event loop less than the trip. */
export const SIGNING_THREAD_MIN_BLOCKS = 64;
/** How long the signing thread is kept without work: it holds about 10 MB, which a node posting a block or two at a time never needs. */
const SIGNING_THREAD_IDLE_MS = 10_000;

/**
 * Signs batches of blobs, a large one (a backlog) on a thread of its own: it
 * is a few thousand ed25519 signatures, and node:crypto's sign costs the
 * calling thread about as much with a callback (the threadpool) as without,
 * so on the event loop it would hold back everything else the node serves.
 * The thread starts with a large batch and ends once idle for
 * SIGNING_THREAD_IDLE_MS, or with close().
 */
export class BlobSigner {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, { resolve: (answer: Answer) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly layout: BlobLayout,
    private readonly key: Ed25519Key,
  ) {}

  /** The blocks' blobs, signed by the key, in order. */
  async sign(blocks: UnsignedBlock[]): Promise<Blob[]> {
    const packed = this.layout.pack(blocks);
    if (blocks.length < SIGNING_THREAD_MIN_BLOCKS) return this.layout.signHere(packed, this.key);
    const id = this.nextId++;
    const worker = this.thread();
    const answer = await new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Held while a batch is being signed (an idle thread keeps no process alive).
      worker.ref();
      worker.postMessage({ id, ...packed }, [packed.buffer]);
    });
    if ('error' in answer) throw new Error(`signing DA blobs failed: ${answer.error}`);
    return this.layout.blobs({ buffer: answer.buffer, spans: packed.spans }, answer.commitments);
  }

  private thread(): Worker {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.worker) return this.worker;
    const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
    const workerData: SigningThreadData = {
      jwk: { kty: 'OKP', crv: 'Ed25519', d: b64url(this.key.seed), x: b64url(this.key.publicKey) },
      namespaces: this.layout.namespaces,
    };
    const worker = new Worker(SIGNING_THREAD_SOURCE, { eval: true, workerData });
    worker.unref();
    worker.on('message', (answer: Answer) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) {
        worker.unref();
        this.idleTimer = setTimeout(() => void this.close(), SIGNING_THREAD_IDLE_MS).unref();
      }
      waiter?.resolve(answer);
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const waiter of this.waiting.values()) waiter.reject(err);
      this.waiting.clear();
    };
    worker.on('error', (err) => fail(new Error(`the DA signing thread failed: ${err.message}`)));
    worker.on('exit', (code) => fail(new Error(`the DA signing thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  /** Ends the thread: a batch still being signed fails. */
  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    // Its exit must not fail the batches of a thread started after it.
    worker.removeAllListeners();
    for (const waiter of this.waiting.values()) waiter.reject(new Error('the DA signing thread was closed'));
    this.waiting.clear();
    await worker.terminate();
  }
}
