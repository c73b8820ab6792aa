import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { DaError, classifyDaMessage } from './errors.js';
import { DaMethod, MISSING_PERMISSION, type Balance, type SyncState, type TxConfig, type WireBlob, type WireExtendedHeader } from './types.js';

export interface DaClientOptions {
  /** http(s) URL of the DA node's JSON-RPC endpoint. */
  address: string;
  /** Sent as `Authorization: Bearer`; never logged or put in an error. */
  authToken: string;
  requestTimeoutMs: number;
}

/** What the operator chose for a submission's price (da.gas_price, da.max_gas_price). */
export interface GasSettings {
  /** -1: the DA node estimates; else the price to pay. */
  gasPrice: number;
  /** 0: the DA node's default cap; else the highest price it may estimate. */
  maxGasPrice: number;
}

/**
 * The TxConfig for these settings, as celestia-node reads it
 * (state/txclient/tx_config.go): a set price travels with is_gas_price_set
 * (0 is a price too); an estimated one, and a default cap, are left out. A
 * negative cap is never sent: celestia-node would compare every estimate
 * against it and refuse every submission.
 */
export function submitOptions({ gasPrice, maxGasPrice }: GasSettings): TxConfig {
  const options: TxConfig = {};
  if (gasPrice >= 0) {
    // A price of 0 is left out as celestia-node's own MarshalJSON does (omitempty); is_gas_price_set carries it.
    if (gasPrice > 0) options.gas_price = gasPrice;
    options.is_gas_price_set = true;
  }
  if (maxGasPrice > 0) options.max_gas_price = maxGasPrice;
  return options;
}

/** A blob as the node works with it: raw bytes. */
export interface Blob {
  namespace: Uint8Array;
  data: Uint8Array;
  commitment: Uint8Array;
}

/**
 * The calls the DA submitter and retriever make (celestia-node blob.Submit,
 * blob.GetAll, header.NetworkHead): DaClient over JSON-RPC in the node, an
 * in-memory double with celestia-node's answers in their unit tests.
 */
export interface BlobApi {
  /** Submits blobs in one transaction; resolves with the DA height that includes them. */
  submit(blobs: Blob[], config: TxConfig, signal?: AbortSignal): Promise<bigint>;
  /** Blobs at a DA height in the given namespaces (empty when none). */
  getAll(height: bigint, namespaces: Uint8Array[], signal?: AbortSignal): Promise<Blob[]>;
  /** The DA network's head height. */
  networkHead(signal?: AbortSignal): Promise<bigint>;
  /**
   * Encodes `blobs` now for a later submit(blobs) of the same array, when the
   * caller has time to spare before it (a batch prepared while the one before
   * it is in flight).
   */
  prepareSubmit?(blobs: Blob[]): void;
}

/** A view of `bytes` as a Buffer, no copy (Buffer.from(Uint8Array) copies). */
const bufferOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** blob.Submit's first param as JSON text: celestia-node's blob.Blob JSON (blob/blob.go jsonBlob: base64 bytes, index -1 until included). */
function wireBlobsJson(blobs: Blob[]): string {
  const wire: WireBlob[] = blobs.map((b) => ({
    namespace: bufferOf(b.namespace).toString('base64'),
    data: bufferOf(b.data).toString('base64'),
    share_version: 0,
    commitment: bufferOf(b.commitment).toString('base64'),
    index: -1,
  }));
  return JSON.stringify(wire);
}

/** How long an idle pooled connection is kept (the DA node's `Keep-Alive: timeout=` hint shortens it), and how many are opened at most. */
const KEEP_ALIVE_MS = 30_000;
const MAX_CONNECTIONS = 8;

/**
 * POSTs `body` and reads the whole answer. node:http rather than undici: undici
 * (its fetch, llhttp in WebAssembly) added ~5 MB to every idle node (bench
 * figure rss), and a JSON-RPC POST needs none of it. `signal` aborts the
 * request and the reading of its answer.
 */
function post(url: URL, agent: HttpAgent, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<{ status: number; text: string }> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, signal, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * celestia-node's JSON-RPC subset over HTTP with keep-alive. Every call is
 * bounded by the request timeout and fails with a DaError that says what went
 * wrong in plain words.
 */
export class DaClient implements BlobApi {
  private readonly agent: HttpAgent;
  /** Calls under way: close() lets them finish before it closes the connections. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private nextId = 1;
  /** Bodies' blobs encoded ahead (prepareSubmit), with how many blobs the array held then; gone with their array. */
  private readonly preparedBlobs = new WeakMap<Blob[], { count: number; json: string }>();
  readonly url: URL;

  constructor(private readonly opts: DaClientOptions) {
    this.url = new URL(opts.address);
    // `timeout` is how long a pooled connection may idle; node:http also takes the answer's Keep-Alive hint when shorter.
    const agentOptions = { keepAlive: true, maxSockets: MAX_CONNECTIONS, timeout: KEEP_ALIVE_MS };
    this.agent = this.url.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  }

  private call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
    return this.callWithParams(method, JSON.stringify(params), signal);
  }

  /** A call whose params are JSON text already: the body is the same bytes JSON.stringify({ jsonrpc, id, method, params }) makes. */
  private async callWithParams<T>(method: string, paramsJson: string, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.opts.authToken) headers.authorization = `Bearer ${this.opts.authToken}`;
    const body = `{"jsonrpc":"2.0","id":${this.nextId++},"method":${JSON.stringify(method)},"params":${paramsJson}}`;
    const where = `DA node ${this.url.host}`;
    let status: number;
    let text: string;
    const timeout = AbortSignal.timeout(this.opts.requestTimeoutMs);
    const answer = post(this.url, this.agent, headers, body, signal ? AbortSignal.any([signal, timeout]) : timeout);
    this.inFlight.add(answer);
    try {
      ({ status, text } = await answer);
    } catch (err) {
      const e = err as { code?: string; message?: string };
      // The caller's own abort (shutdown) is not a DA failure: pass it on as is.
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) throw new DaError(`${method} to ${where} timed out after ${this.opts.requestTimeoutMs}ms`, 'timeout', undefined, 'unknown');
      // Refused, unreachable or unresolved: no connection, so the request was never sent.
      if (e.code === 'ECONNREFUSED' || e.code === 'EHOSTUNREACH' || e.code === 'ENOTFOUND') {
        throw new DaError(`${method} to ${where}: connection refused (${e.code})`, 'connection_refused', undefined, 'refused');
      }
      // The connection dropped after the request may have gone out.
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') {
        throw new DaError(`${method} to ${where}: the connection dropped before an answer (${e.code})`, 'connection_refused', undefined, 'unknown');
      }
      throw new DaError(`${method} to ${where} failed: ${e.message ?? String(err)}`, 'other', undefined, 'unknown');
    } finally {
      this.inFlight.delete(answer);
    }
    // go-jsonrpc auth/handler.go answers a token it cannot verify with a bare HTTP 401 (celestia-node api/rpc/server.go wires it).
    if (status === 401 || status === 403) {
      const what = this.opts.authToken
        ? 'the DA node rejected the token in da.auth_token (wrong, expired, or made for another node)'
        : 'the DA node wants an auth token and da.auth_token is empty';
      throw new DaError(`${method} to ${where}: HTTP ${status}: ${what}`, 'unauthorized');
    }
    let rpc: { result?: T; error?: { code: number; message: string } };
    try {
      rpc = JSON.parse(text) as typeof rpc;
    } catch {
      // Not the DA node's own answer (a proxy's, say): it may have passed the request on.
      throw new DaError(`${method} to ${where}: HTTP ${status}, not a JSON-RPC answer: ${text.slice(0, 200)}`, 'other', undefined, 'unknown');
    }
    if (rpc.error) {
      const classified = classifyDaMessage(rpc.error.message);
      throw new DaError(`${method} to ${where}: ${rpc.error.message}${this.permissionHint(rpc.error.message)}`, classified.reason, classified.sdkCode);
    }
    if (status !== 200) throw new DaError(`${method} to ${where}: HTTP ${status}`, 'other');
    return rpc.result as T;
  }

  /**
   * What a missing permission means here: without a token celestia-node grants
   * only `public` (HTTP 200 with the error, go-jsonrpc auth/auth.go), so the
   * token is missing; with one, the token lacks that permission.
   */
  private permissionHint(message: string): string {
    const m = MISSING_PERMISSION.exec(message);
    if (!m) return '';
    return this.opts.authToken ? `: the token in da.auth_token lacks the '${m[2]}' permission` : ': no auth token is set (da.auth_token is empty)';
  }

  /** Submits blobs in one transaction; resolves with the DA height that includes them. */
  /**
   * A full batch's body is ~2.7 MB of JSON, ~12 ms of the main thread to
   * make: made between a submission's answer and the next send, it held every
   * batch back that long (bench figure submitter, DA +50 ms).
   */
  prepareSubmit(blobs: Blob[]): void {
    this.preparedBlobs.set(blobs, { count: blobs.length, json: wireBlobsJson(blobs) });
  }

  async submit(blobs: Blob[], config: TxConfig, signal?: AbortSignal): Promise<bigint> {
    const prepared = this.preparedBlobs.get(blobs);
    // An array with blobs added since it was prepared is encoded again.
    const json = prepared?.count === blobs.length ? prepared.json : wireBlobsJson(blobs);
    return BigInt(await this.callWithParams<number | string>(DaMethod.submit, `[${json},${JSON.stringify(config)}]`, signal));
  }

  /**
   * Blobs at a DA height in the given namespaces (empty when none). celestia-node
   * answers a height without blobs with `null`; before v0.15 (#3223) it answered
   * `blob: not found` (blob/service.go, ErrBlobNotFound), which means the same.
   */
  async getAll(height: bigint, namespaces: Uint8Array[], signal?: AbortSignal): Promise<Blob[]> {
    let result: WireBlob[] | null;
    try {
      result = await this.call<WireBlob[] | null>(DaMethod.getAll, [Number(height), namespaces.map((n) => Buffer.from(n).toString('base64'))], signal);
    } catch (err) {
      if (err instanceof DaError && err.reason === 'blob_not_found') return [];
      throw err;
    }
    return (result ?? []).map((b) => ({
      namespace: new Uint8Array(Buffer.from(b.namespace, 'base64')),
      data: new Uint8Array(Buffer.from(b.data, 'base64')),
      commitment: new Uint8Array(Buffer.from(b.commitment ?? '', 'base64')),
    }));
  }

  async networkHead(signal?: AbortSignal): Promise<bigint> {
    const head = await this.call<WireExtendedHeader>(DaMethod.networkHead, [], signal);
    return BigInt(head.header.height);
  }

  /** The time of the DA block at `height` (Unix ns), from its header (`header.GetByHeight`), as ev-node's DA client reads it (block/internal/da/client.go, getBlockTimestamp). */
  async blockTime(height: bigint, signal?: AbortSignal): Promise<bigint> {
    const header = await this.call<WireExtendedHeader>(DaMethod.headerByHeight, [Number(height)], signal);
    const ms = Date.parse(header.header.time);
    if (Number.isNaN(ms)) throw new DaError(`${DaMethod.headerByHeight} answered a header without a time at DA height ${height}`, 'other');
    // RFC 3339 with nanoseconds: Date.parse keeps milliseconds; the digits below them are added back.
    const frac = /\.(\d+)/.exec(header.header.time)?.[1] ?? '';
    return BigInt(ms) * 1_000_000n + BigInt(frac.padEnd(9, '0').slice(3, 9) || '0');
  }

  async syncState(): Promise<SyncState> {
    return this.call<SyncState>(DaMethod.syncState, []);
  }

  async balance(): Promise<Balance> {
    return this.call<Balance>(DaMethod.balance, []);
  }

  /** Lets the calls under way finish, then closes the pooled connections. */
  async close(): Promise<void> {
    await Promise.allSettled(this.inFlight);
    this.agent.destroy();
  }
}
