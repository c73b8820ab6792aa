import { DaError, DaErrorText, DaMethod, classifyDaMessage, type Blob, type BlobApi, type TxConfig } from '../../src/da/index.js';

/** How the next blob.Submit goes wrong, as a celestia node and the client see it. */
export type SubmitFault =
  /** The DA node answers this error text before taking the tx (CheckTx refused it, a namespace it will not take…). */
  | { answer: string }
  /**
   * The DA node takes the tx but its answer never comes (the client's request
   * timeout): celestia-node broadcasts the PFB before it waits for inclusion
   * (state/txclient/tx_client.go, SubmitPayForBlob), so it sits in the mempool
   * and is included when the next DA block is sealed.
   */
  | 'answer lost'
  /** The request is lost on the way (timeout before the DA node read it): nothing is taken, and the client cannot tell. */
  | 'request lost';

const NAMESPACE_BYTES = 29;

/**
 * An in-memory DA node behind the BlobApi the submitter and retriever call,
 * answering as celestia-node does and failing as the DA client does (src/da/client.ts):
 *  - blob.Submit (blob/service.go, Submit): includes the blobs in a new DA block
 *    and answers its height; a blob in a reserved namespace or of another
 *    namespace version is refused (blob/blob.go NewBlob, go-square
 *    ValidateForBlob), as is a submission above the blob size limit.
 *  - blob.GetAll (blob/service.go): the blobs at a height in the namespaces
 *    asked, none when it holds none; the height goes through
 *    header.GetByHeight first (nodebuilder/header/service.go), which answers
 *    "given height is from the future" more than one height above the network
 *    head, "syncing in progress" above the node's own header store, and waits
 *    for the next block at head + 1 (SyncWait).
 *  - header.NetworkHead: the head height.
 * An error answer reaches the caller as the client makes it: classifyDaMessage's
 * DaError of the answer's text; a lost answer as the client's timeout, whose
 * delivery is unknown.
 */
export class MemoryDa implements BlobApi {
  /** blocks[h - 1]: the blobs DA height h holds. */
  private readonly blocks: Blob[][] = [];
  /** Txs taken whose answer was lost: included at the next seal. */
  private mempool: Blob[][] = [];
  private readonly faults: SubmitFault[] = [];
  private readonly nextBlock: Array<() => void> = [];
  /** Every call, by its JSON-RPC method name, in order. */
  readonly calls: string[] = [];
  /** Heights the node's own header store is behind the network head (GetAll above it: "syncing in progress"). */
  storeLag = 0;

  constructor(
    private readonly maxBlobSize = 1_974_272,
    /** DA blocks already sealed, without blobs: a DA network that was running before the test. */
    startHeight = 1,
  ) {
    for (let i = 0; i < startHeight; i++) this.blocks.push([]);
  }

  get head(): bigint {
    return BigInt(this.blocks.length);
  }

  /** The next blob.Submit calls fail this way, one fault each, in order. */
  failSubmits(...faults: SubmitFault[]): void {
    this.faults.push(...faults);
  }

  /** Seals the next DA block with what the mempool holds (and `blobs`); returns its height. */
  seal(blobs: Blob[] = []): bigint {
    this.blocks.push([...this.mempool.flat(), ...blobs]);
    this.mempool = [];
    for (const wake of this.nextBlock.splice(0)) wake();
    return this.head;
  }

  /** Every blob DA holds, in height order. */
  allBlobs(): Blob[] {
    return this.blocks.flat();
  }

  /** The calls of one method made so far. */
  count(method: string): number {
    return this.calls.filter((m) => m === method).length;
  }

  async submit(blobs: Blob[], _config: TxConfig, signal?: AbortSignal): Promise<bigint> {
    this.calls.push(DaMethod.submit);
    signal?.throwIfAborted();
    for (const blob of blobs) {
      const problem = blobNamespaceProblem(blob.namespace);
      // go-jsonrpc fails the params' unmarshaling (blob.Blob's UnmarshalJSON runs NewBlob) before Submit runs.
      if (problem) throw answered(`unmarshaling params for '${DaMethod.submit}' (param: *[]*blob.Blob): ${problem}`);
    }
    const bytes = blobs.reduce((n, b) => n + b.data.length, 0);
    if (bytes > this.maxBlobSize) throw answered(`${DaErrorText.blobTooLarge}: ${bytes} bytes of blob data, the limit is ${this.maxBlobSize}`);
    const fault = this.faults.shift();
    if (fault === 'answer lost') {
      this.mempool.push(blobs);
      throw timedOut(DaMethod.submit);
    }
    if (fault === 'request lost') throw timedOut(DaMethod.submit);
    if (fault) throw answered(fault.answer);
    return this.seal(blobs);
  }

  async getAll(height: bigint, namespaces: Uint8Array[], signal?: AbortSignal): Promise<Blob[]> {
    this.calls.push(DaMethod.getAll);
    for (const ns of namespaces) {
      const problem = namespaceProblem(ns);
      if (problem) throw answered(`unmarshaling params for '${DaMethod.getAll}' (param: *[]share.Namespace): ${problem}`);
    }
    if (height === 0n) throw answered('height is equal to 0');
    if (height > this.head + 1n) throw answered(`header: ${DaErrorText.heightFromFuture}: networkHeight: ${this.head}, requestedHeight: ${height}`);
    const storeHead = this.head - BigInt(this.storeLag);
    if (height > storeHead + 1n) throw answered(`header: syncing in progress: localHeadHeight: ${storeHead}, requestedHeight: ${height}`);
    if (height === this.head + 1n) await this.sealed(signal);
    const wanted = new Set(namespaces.map(hex));
    return this.blocks[Number(height) - 1]!.filter((b) => wanted.has(hex(b.namespace)));
  }

  async networkHead(signal?: AbortSignal): Promise<bigint> {
    this.calls.push(DaMethod.networkHead);
    signal?.throwIfAborted();
    return this.head;
  }

  /** header.GetByHeight at head + 1: the syncer's SyncWait, until the next block is sealed. */
  private sealed(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      this.nextBlock.push(resolve);
    });
  }
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** The DaError the client throws for an error answer (src/da/client.ts, call). */
const answered = (message: string): DaError => classifyDaMessage(message);

/** The DaError the client throws when no answer comes within its request timeout (src/da/client.ts, call). */
const timedOut = (method: string): DaError => new DaError(`${method} to DA node memory timed out after 1000ms`, 'timeout', undefined, 'unknown');

/** go-square share/namespace.go, NewNamespaceFromBytes: what a namespace must be to decode. */
function namespaceProblem(ns: Uint8Array): string | null {
  if (ns.length !== NAMESPACE_BYTES) return `invalid namespace length: ${ns.length} must be ${NAMESPACE_BYTES}`;
  if (ns[0] !== 0 && ns[0] !== 255) return `unsupported namespace version ${ns[0]}`;
  return null;
}

/** go-square ValidateForBlob, as celestia-node's NewBlob wraps it (blob/blob.go): the namespaces a blob may not use. */
function blobNamespaceProblem(ns: Uint8Array): string | null {
  const problem = namespaceProblem(ns);
  if (problem) return problem;
  // The primary reserved namespaces: version 0, an id of zeros up to its last byte.
  if (ns.subarray(0, NAMESPACE_BYTES - 1).every((b) => b === 0))
    return `invalid user namespace: invalid data namespace(${hex(ns)}): reserved data is forbidden`;
  if (ns[0] !== 0) return `invalid user namespace: blob version ${ns[0]} is not supported`;
  return null;
}
