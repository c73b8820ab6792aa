import { Agent, request } from 'undici';
import { DaError, classifyDaMessage } from './errors.js';
import { DaMethod, type Balance, type SyncState, type TxConfig, type WireBlob, type WireExtendedHeader } from './types.js';

export interface DaClientOptions {
  /** http(s) URL of the DA node's JSON-RPC endpoint. */
  address: string;
  /** Sent as `Authorization: Bearer`; never logged or put in an error. */
  authToken: string;
  requestTimeoutMs: number;
}

/** A blob as the node works with it: raw bytes. */
export interface Blob {
  namespace: Uint8Array;
  data: Uint8Array;
  commitment: Uint8Array;
}

/**
 * celestia-node's JSON-RPC subset over undici with keep-alive. Every call is
 * bounded by the request timeout and fails with a DaError that says what went
 * wrong in plain words.
 */
export class DaClient {
  private readonly agent: Agent;
  private nextId = 1;
  readonly url: URL;

  constructor(private readonly opts: DaClientOptions) {
    this.url = new URL(opts.address);
    this.agent = new Agent({ keepAliveTimeout: 30_000, connections: 8 });
  }

  private async call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.opts.authToken) headers.authorization = `Bearer ${this.opts.authToken}`;
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
    const where = `DA node ${this.url.host}`;
    let status: number;
    let text: string;
    try {
      const res = await request(this.url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(this.opts.requestTimeoutMs)]) : AbortSignal.timeout(this.opts.requestTimeoutMs),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      const e = err as { code?: string; name?: string; message?: string };
      // The caller's own abort (shutdown) is not a DA failure: pass it on as is.
      if (signal?.aborted) throw signal.reason;
      if (e.name === 'TimeoutError' || e.name === 'AbortError' || (e.code?.startsWith('UND_ERR_') && /TIMEOUT/.test(e.code))) {
        throw new DaError(`${method} to ${where} timed out after ${this.opts.requestTimeoutMs}ms`, 'timeout');
      }
      if (e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET' || e.code === 'EHOSTUNREACH' || e.code === 'ENOTFOUND' || e.code === 'UND_ERR_SOCKET') {
        throw new DaError(`${method} to ${where}: connection refused (${e.code})`, 'connection_refused');
      }
      throw new DaError(`${method} to ${where} failed: ${e.message ?? String(err)}`, 'other');
    }
    if (status === 401 || status === 403) {
      throw new DaError(`${method} to ${where}: HTTP ${status}, the auth token was rejected`, 'unauthorized');
    }
    let rpc: { result?: T; error?: { code: number; message: string } };
    try {
      rpc = JSON.parse(text);
    } catch {
      throw new DaError(`${method} to ${where}: HTTP ${status}, not a JSON-RPC answer: ${text.slice(0, 200)}`, 'other');
    }
    if (rpc.error) {
      const classified = classifyDaMessage(rpc.error.message);
      throw new DaError(`${method} to ${where}: ${rpc.error.message}`, classified.reason, classified.sdkCode);
    }
    if (status !== 200) throw new DaError(`${method} to ${where}: HTTP ${status}`, 'other');
    return rpc.result as T;
  }

  /** Submits blobs in one transaction; resolves with the DA height that includes them. */
  async submit(blobs: Blob[], config: TxConfig, signal?: AbortSignal): Promise<bigint> {
    const wire: WireBlob[] = blobs.map((b) => ({
      namespace: Buffer.from(b.namespace).toString('base64'),
      data: Buffer.from(b.data).toString('base64'),
      share_version: 0,
      commitment: Buffer.from(b.commitment).toString('base64'),
      index: -1,
    }));
    return BigInt(await this.call<number | string>(DaMethod.submit, [wire, config], signal));
  }

  /** Blobs at a DA height in the given namespaces (empty when none). */
  async getAll(height: bigint, namespaces: Uint8Array[], signal?: AbortSignal): Promise<Blob[]> {
    const result = await this.call<WireBlob[] | null>(DaMethod.getAll, [
      Number(height),
      namespaces.map((n) => Buffer.from(n).toString('base64')),
    ], signal);
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

  async syncState(): Promise<SyncState> {
    return this.call<SyncState>(DaMethod.syncState, []);
  }

  async balance(): Promise<Balance> {
    return this.call<Balance>(DaMethod.balance, []);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
