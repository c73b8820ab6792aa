import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Logger } from '../../log/index.js';
import { parseHostPort } from '../../config/index.js';
import { listen, type Listener } from '../../rpc/listen.js';
import { BodyTooLargeError, readBody } from '../../rpc/http.js';
import { sleep } from '../../util/index.js';
import { DaErrorText, DaMethod, type Balance, type SyncState, type TxConfig, type WireBlob, type WireExtendedHeader } from '../types.js';
import { BlockLog, type SealedBlock, type StoredBlob } from './block-log.js';
import { applyFaultsPatch, NO_FAULTS, parseFaultsPatch, FaultsError, type DaFaults } from './faults.js';

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

export interface LocalDaOptions {
  /** Data directory (`<home>/data/local-da`); created when missing. */
  dir: string;
  /** host:port of the JSON-RPC and REST listener; port 0 picks a free one. */
  listen: string;
  /** A DA block is sealed this often, empty or not. */
  blockTimeMs: number;
  /** When set, every request needs `Authorization: Bearer <token>` (else HTTP 401). Never logged. */
  authToken?: string;
  /** Largest total of blob bytes one `blob.Submit` may carry. */
  maxBlobSize: number;
  logger: Logger;
  /** The flag a port error tells the operator to change (default `listen`). */
  flag?: string;
  /** host:port of the admin listener (fault switches, submissions); none when absent. */
  adminListen?: string;
  /** The flag a port error of the admin listener names (default `admin`). */
  adminFlag?: string;
}

/** One `blob.Submit` the server judged (accepted or failed), for tests. */
export interface DaSubmission {
  /** When it arrived (RFC 3339). */
  at: string;
  ok: boolean;
  /** DA height that includes the blobs; null while waiting for the block, or when it failed. */
  height: number | null;
  /** Why it failed (the JSON-RPC error message); null when accepted. */
  error: string | null;
  /** Number of blobs per namespace (namespace as base64, as on the wire). */
  blobs: Record<string, number>;
  /** Total blob data bytes. */
  bytes: number;
  /** The TxConfig exactly as received. */
  txConfig: TxConfig;
}

/** A JSON-RPC error the server answers with; code 1 is how celestia-node reports method errors. */
class RpcFailure extends Error {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly httpStatus = 200,
  ) {
    super(message);
  }
}

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const METHOD_ERROR = 1;

const invalidParams = (what: string) => new RpcFailure(INVALID_PARAMS, `invalid params: ${what}`, 400);

const NAMESPACE_BYTES = 29;
/** Version-0 namespaces: version byte 0, then 18 zero bytes of the 28-byte id (as celestia requires for blobs). */
const V0_ZERO_PREFIX = 19;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CHAIN_ID = 'local-da';
const DEFAULT_BALANCE = '1000000000000000';
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
const NOT_SYNCED_LAG = 100;
const ADMIN_BODY_LIMIT = 64 * 1024;

/**
 * The commitment the built-in DA gives a blob: sha256(namespace ‖ data). It is
 * NOT celestia's commitment (the Merkle subtree root over the blob's shares);
 * it only has to be deterministic and tie the blob to its namespace.
 */
export function localCommitment(namespace: Uint8Array, data: Uint8Array): Buffer {
  return createHash('sha256').update(namespace).update(data).digest();
}

function decodeBase64(text: unknown, what: string): Buffer {
  if (typeof text !== 'string' || !BASE64.test(text)) throw invalidParams(`${what}: expected a base64 string`);
  return Buffer.from(text, 'base64');
}

function decodeNamespace(text: unknown, what: string): Buffer {
  const ns = decodeBase64(text, what);
  if (ns.length !== NAMESPACE_BYTES) throw invalidParams(`${what}: got ${ns.length} bytes, expected ${NAMESPACE_BYTES} (version byte + 28-byte id)`);
  if (ns[0] !== 0) throw invalidParams(`${what}: namespace version ${ns[0]} is not supported, expected version 0`);
  if (ns.subarray(1, V0_ZERO_PREFIX).some((b) => b !== 0)) throw invalidParams(`${what}: a version-0 namespace id must start with 18 zero bytes`);
  return ns;
}

function parseHeight(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw invalidParams(`height: got ${JSON.stringify(value)}, expected a whole number`);
  return n;
}

function send(res: Res, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const r = res as ServerResponse;
  if (r.headersSent || r.destroyed) return;
  r.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  r.end(text);
}

function urlPath(req: Req): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

const hostPortText = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
const pseudoHash = (height: number) => createHash('sha256').update(`${CHAIN_ID}:${height}`).digest('hex').toUpperCase();

interface PendingSubmit {
  blobs: StoredBlob[];
  record: DaSubmission;
  resolve: (height: number) => void;
  reject: (err: Error) => void;
}

function failPending(p: PendingSubmit, message: string): void {
  p.record.ok = false;
  p.record.error = message;
  p.reject(new RpcFailure(METHOD_ERROR, message));
}

/**
 * The built-in DA server: celestia-node's JSON-RPC subset (DESIGN.md §8) plus
 * `GET /health` and `GET /header/sync_state`, over an append-only file log, with
 * a DA block every `blockTimeMs`. A development default, never a production claim.
 *
 * Fault switches (`setFaults`, or `POST /faults` on the admin listener) imitate
 * a DA node that refuses connections, answers slowly, lags behind, or rejects
 * submissions with celestia's error texts.
 */
export class LocalDa {
  private head = 0;
  private headTime = new Date().toISOString();
  private readonly startedAt = new Date().toISOString();
  /** Height → its blobs, for heights that have any. */
  private readonly index = new Map<number, StoredBlob[]>();
  private pending: PendingSubmit[] = [];
  private readonly records: DaSubmission[] = [];
  private state: DaFaults = { ...NO_FAULTS };
  private listener: Listener | undefined;
  private admin: Listener | undefined;
  private timer: NodeJS.Timeout | undefined;
  private listenerOp: Promise<void> = Promise.resolve();
  private readonly stop = new AbortController();
  private closing: Promise<void> | undefined;
  private readonly token: Buffer | undefined;
  private readonly logger: Logger;
  private readonly host: string;
  private port: number;

  private constructor(
    private readonly opts: LocalDaOptions,
    private readonly log: BlockLog,
  ) {
    this.logger = opts.logger;
    this.token = opts.authToken ? Buffer.from(opts.authToken) : undefined;
    const { host, port } = parseHostPort(opts.listen);
    this.host = host;
    this.port = port;
  }

  /** Replays the log in `dir`, listens, and starts sealing a block every `blockTimeMs`. */
  static async start(opts: LocalDaOptions): Promise<LocalDa> {
    if (!Number.isSafeInteger(opts.blockTimeMs) || opts.blockTimeMs <= 0) throw new RangeError(`local DA: blockTimeMs must be a whole number > 0, got ${opts.blockTimeMs}`);
    if (!Number.isSafeInteger(opts.maxBlobSize) || opts.maxBlobSize <= 0) throw new RangeError(`local DA: maxBlobSize must be a whole number > 0, got ${opts.maxBlobSize}`);
    parseHostPort(opts.listen);
    if (opts.adminListen !== undefined) parseHostPort(opts.adminListen);
    const blocks: SealedBlock[] = [];
    const log = BlockLog.open(opts.dir, opts.logger, (b) => blocks.push(b));
    const da = new LocalDa(opts, log);
    for (const b of blocks) da.applyBlock(b);
    try {
      da.listener = await listen(opts.listen, da.handle, opts.flag ?? 'listen');
      da.port = da.listener.address.port;
      if (opts.adminListen !== undefined) da.admin = await listen(opts.adminListen, da.handleAdmin, opts.adminFlag ?? 'admin');
    } catch (err) {
      await da.close();
      throw err;
    }
    if (da.head === 0) da.seal(); // a fresh DA chain starts at height 1
    da.timer = setInterval(() => da.seal(), opts.blockTimeMs);
    opts.logger.debug({ dir: opts.dir, height: da.head, replayed: blocks.length }, 'local DA started');
    return da;
  }

  /** `http://host:port` of the JSON-RPC and REST listener, as bound. */
  get address(): string {
    return `http://${hostPortText(this.host, this.port)}`;
  }

  /** `http://host:port` of the admin listener, when there is one. */
  get adminAddress(): string | undefined {
    const a = this.admin?.address;
    return a ? `http://${hostPortText(a.host, a.port)}` : undefined;
  }

  /** Height of the last sealed DA block. */
  get height(): number {
    return this.head;
  }

  get faults(): DaFaults {
    return { ...this.state };
  }

  /**
   * Changes fault switches (the fields given; see DaFaults). Resolves once they
   * are in effect: with `refuse` the listener is closed, and after it is
   * cleared the server listens on the same port again.
   */
  async setFaults(patch: Partial<DaFaults>): Promise<DaFaults> {
    const checked = parseFaultsPatch(patch);
    this.state = applyFaultsPatch(this.state, checked);
    this.logger.info({ faults: this.state }, 'local DA fault switches changed');
    await this.syncListener();
    return this.faults;
  }

  /** Every `blob.Submit` judged so far, oldest first: accepted ones and those that failed (fault, too large). */
  submissions(): DaSubmission[] {
    return this.records.map((r) => ({ ...r, blobs: { ...r.blobs } }));
  }

  /** Stops sealing blocks and closes both listeners and the log. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.timer);
      this.stop.abort(new Error('local DA closed'));
      const waiting = this.pending;
      this.pending = [];
      for (const p of waiting) failPending(p, 'the local DA server is shutting down; the blobs were not included');
      await this.listenerOp.catch(() => undefined);
      const listeners = [this.listener, this.admin];
      this.listener = undefined;
      this.admin = undefined;
      await Promise.all(listeners.map((l) => l?.close()));
      this.log.close();
    })();
    return this.closing;
  }

  // --- blocks -------------------------------------------------------------

  private applyBlock(block: SealedBlock): void {
    this.head = block.height;
    this.headTime = block.time;
    if (block.blobs.length > 0) this.index.set(block.height, block.blobs);
  }

  /** Seals the next DA block with every blob waiting, and answers their submitters with its height. */
  private seal(): void {
    if (this.closing) return;
    const batch = this.pending;
    this.pending = [];
    const block: SealedBlock = { height: this.head + 1, time: new Date().toISOString(), blobs: batch.flatMap((p) => p.blobs) };
    try {
      this.log.append(block);
    } catch (err) {
      this.logger.error({ code: 'LOCAL_DA_WRITE_FAILED', err, height: block.height }, 'local DA: cannot write the block log; the block was not sealed');
      for (const p of batch) failPending(p, `local DA cannot write its block log: ${(err as Error).message}`);
      return;
    }
    this.applyBlock(block);
    if (batch.length > 0) this.logger.debug({ height: block.height, blobs: block.blobs.length, submits: batch.length }, 'local DA block sealed');
    for (const p of batch) {
      p.record.height = block.height;
      p.resolve(block.height);
    }
  }

  // --- listeners ----------------------------------------------------------

  /** Brings the listener in line with `refuse`; transitions run one at a time. */
  private syncListener(): Promise<void> {
    const op = this.listenerOp.then(async () => {
      if (this.closing) return;
      if (this.state.refuse && this.listener) {
        const l = this.listener;
        this.listener = undefined;
        await l.close();
        this.logger.info({ address: this.address }, 'local DA refusing connections (fault switch)');
      } else if (!this.state.refuse && !this.listener) {
        this.listener = await listen(hostPortText(this.host, this.port), this.handle, this.opts.flag ?? 'listen');
        this.logger.info({ address: this.address }, 'local DA accepting connections again');
      }
    });
    this.listenerOp = op.catch(() => undefined);
    return op;
  }

  /** False (after answering 401) when a token is required and the request lacks it or has another. */
  private authorized(req: Req, res: Res): boolean {
    if (!this.token) return true;
    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
    if (!m) {
      send(res, 401, 'unauthorized: missing auth token; send the header "Authorization: Bearer <token>"\n');
      return false;
    }
    const given = Buffer.from(m[1]!);
    if (given.length !== this.token.length || !timingSafeEqual(given, this.token)) {
      send(res, 401, 'unauthorized: wrong auth token\n');
      return false;
    }
    return true;
  }

  private readonly handle = (req: Req, res: Res): void => {
    this.route(req, res).catch((err: unknown) => {
      this.logger.error({ code: 'LOCAL_DA_REQUEST_FAILED', err }, 'local DA: request failed');
      send(res, 500, { jsonrpc: '2.0', id: null, error: { code: -32603, message: `internal error: ${(err as Error).message}` } });
    });
  };

  private async route(req: Req, res: Res): Promise<void> {
    if (!this.authorized(req, res)) return;
    const path = urlPath(req);
    if (req.method === 'GET' && path === '/health') return send(res, 200, { status: 'ok', height: this.head });
    if (req.method === 'GET' && path === '/header/sync_state') return send(res, 200, this.syncState());
    if (path === '/' && req.method === 'POST') return this.serveRpc(req, res);
    if (path === '/') return send(res, 405, 'the JSON-RPC endpoint takes POST\n');
    send(res, 404, `no such endpoint ${path}; this local DA serves POST / (JSON-RPC), GET /health and GET /header/sync_state\n`);
  }

  private async serveRpc(req: Req, res: Res): Promise<void> {
    let id: unknown = null;
    try {
      let body: Buffer;
      try {
        body = await readBody(req, this.opts.maxBlobSize * 2 + 1024 * 1024);
      } catch (err) {
        if (err instanceof BodyTooLargeError) {
          throw new RpcFailure(METHOD_ERROR, `${DaErrorText.blobTooLarge}: the request is larger than the blob size limit of ${this.opts.maxBlobSize} bytes allows`, 413);
        }
        throw err;
      }
      let msg: unknown;
      try {
        msg = JSON.parse(body.toString('utf8'));
      } catch {
        throw new RpcFailure(PARSE_ERROR, 'parse error: the body is not JSON', 400);
      }
      if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
        throw new RpcFailure(INVALID_REQUEST, 'invalid request: expected one JSON-RPC 2.0 request object (batches are not supported)', 400);
      }
      const rpc = msg as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
      if (typeof rpc.id === 'number' || typeof rpc.id === 'string') id = rpc.id;
      if (rpc.jsonrpc !== '2.0' || typeof rpc.method !== 'string') {
        throw new RpcFailure(INVALID_REQUEST, 'invalid request: expected {"jsonrpc":"2.0","id":…,"method":"…","params":[…]}', 400);
      }
      const params = rpc.params ?? [];
      if (!Array.isArray(params)) throw invalidParams('params must be an array (positional)');
      if (this.state.delayMs > 0) await sleep(this.state.delayMs, this.stop.signal);
      const result = await this.call(rpc.method, params);
      send(res, 200, { jsonrpc: '2.0', id, result });
    } catch (err) {
      if (this.stop.signal.aborted && !(err instanceof RpcFailure)) return;
      if (!(err instanceof RpcFailure)) throw err;
      send(res, err.httpStatus, { jsonrpc: '2.0', id, error: { code: err.rpcCode, message: err.message } });
    }
  }

  private call(method: string, params: unknown[]): Promise<unknown> | unknown {
    switch (method) {
      case DaMethod.submit:
        return this.submit(params);
      case DaMethod.getAll:
        return this.getAll(params);
      case DaMethod.networkHead:
        return { header: { chain_id: CHAIN_ID, height: String(this.head), time: this.headTime } } satisfies WireExtendedHeader;
      case DaMethod.syncState:
        return this.syncState();
      case DaMethod.balance:
        return { denom: 'utia', amount: this.state.balance ?? DEFAULT_BALANCE } satisfies Balance;
      default:
        throw new RpcFailure(METHOD_NOT_FOUND, `method '${method}' not found; this local DA serves ${Object.values(DaMethod).join(', ')}`, 400);
    }
  }

  private syncState(): SyncState {
    const behind = this.state.notSynced;
    const to = behind ? this.head + NOT_SYNCED_LAG : this.head;
    return {
      id: 1,
      height: this.head,
      from_height: 1,
      to_height: to,
      from_hash: pseudoHash(1),
      to_hash: pseudoHash(to),
      start: this.startedAt,
      end: behind ? GO_ZERO_TIME : this.headTime,
    };
  }

  private submit(params: unknown[]): Promise<number> {
    const [wireBlobs, txConfig] = params;
    if (!Array.isArray(wireBlobs) || wireBlobs.length === 0) throw invalidParams('blob.Submit takes [blobs, TxConfig]: blobs must be a non-empty array');
    if (typeof txConfig !== 'object' || txConfig === null || Array.isArray(txConfig)) {
      throw invalidParams(`blob.Submit takes [blobs, TxConfig]: TxConfig must be an object (got ${txConfig === null ? 'null' : Array.isArray(txConfig) ? 'an array' : typeof txConfig}); send {} for defaults`);
    }
    const blobs: StoredBlob[] = [];
    const perNamespace: Record<string, number> = {};
    let bytes = 0;
    wireBlobs.forEach((b: unknown, i) => {
      if (typeof b !== 'object' || b === null) throw invalidParams(`blob ${i}: expected an object {namespace, data, share_version}`);
      const wb = b as Partial<WireBlob>;
      const ns = decodeNamespace(wb.namespace, `blob ${i}: namespace`);
      const data = decodeBase64(wb.data, `blob ${i}: data`);
      if (data.length === 0) throw invalidParams(`blob ${i}: data is empty`);
      if (wb.share_version !== undefined && wb.share_version !== 0) throw invalidParams(`blob ${i}: share_version ${JSON.stringify(wb.share_version)} is not supported, expected 0`);
      const namespace = ns.toString('base64');
      blobs.push({ namespace, data: wb.data as string, commitment: localCommitment(ns, data).toString('base64') });
      perNamespace[namespace] = (perNamespace[namespace] ?? 0) + 1;
      bytes += data.length;
    });
    const record: DaSubmission = { at: new Date().toISOString(), ok: false, height: null, error: null, blobs: perNamespace, bytes, txConfig: txConfig as TxConfig };
    this.records.push(record);
    const fail = (message: string) => {
      record.error = message;
      return new RpcFailure(METHOD_ERROR, message);
    };
    if (bytes > this.opts.maxBlobSize) throw fail(`${DaErrorText.blobTooLarge}: ${bytes} bytes of blob data, the limit is ${this.opts.maxBlobSize}`);
    const fault = this.state.submitError;
    if (fault) {
      if (this.state.submitErrorCount > 0 && --this.state.submitErrorCount === 0) this.state.submitError = null;
      throw fail(fault === 'already_in_mempool' ? DaErrorText.alreadyInMempool : DaErrorText.insufficientFunds);
    }
    record.ok = true;
    return new Promise<number>((resolve, reject) => this.pending.push({ blobs, record, resolve, reject }));
  }

  private getAll(params: unknown[]): WireBlob[] | null {
    const [rawHeight, rawNamespaces] = params;
    const height = parseHeight(rawHeight);
    if (!Array.isArray(rawNamespaces)) throw invalidParams('blob.GetAll takes [height, namespaces]: namespaces must be an array');
    const wanted = new Set(rawNamespaces.map((n, i) => decodeNamespace(n, `namespace ${i}`).toString('base64')));
    if (height === 0) throw new RpcFailure(METHOD_ERROR, 'height must be bigger than zero');
    if (height > this.head) throw new RpcFailure(METHOD_ERROR, `header: ${DaErrorText.heightFromFuture}: networkHeight: ${this.head}, requestedHeight: ${height}`);
    const found: WireBlob[] = [];
    // `index` is the blob's position in its DA block, not celestia's share index in the data square.
    (this.index.get(height) ?? []).forEach((b, index) => {
      if (wanted.has(b.namespace)) found.push({ namespace: b.namespace, data: b.data, share_version: 0, commitment: b.commitment, index });
    });
    return found.length > 0 ? found : null;
  }

  // --- admin --------------------------------------------------------------

  private readonly handleAdmin = (req: Req, res: Res): void => {
    this.routeAdmin(req, res).catch((err: unknown) => send(res, 500, { error: (err as Error).message }));
  };

  private async routeAdmin(req: Req, res: Res): Promise<void> {
    const path = urlPath(req);
    if (req.method === 'GET' && path === '/faults') return send(res, 200, this.faults);
    if (req.method === 'GET' && path === '/submissions') return send(res, 200, this.submissions());
    if (req.method === 'GET' && path === '/health') return send(res, 200, { status: 'ok', height: this.head, address: this.address, refusing: !this.listener });
    if (req.method === 'POST' && path === '/faults') {
      let body: unknown;
      try {
        body = JSON.parse((await readBody(req, ADMIN_BODY_LIMIT)).toString('utf8'));
      } catch (err) {
        const why = err instanceof BodyTooLargeError ? err.message : 'the body is not JSON';
        return send(res, 400, { error: `${why}; send a JSON object of fault switches`, field: '(body)' });
      }
      try {
        return send(res, 200, await this.setFaults(body as Partial<DaFaults>));
      } catch (err) {
        if (err instanceof FaultsError) return send(res, 400, { error: err.message, field: err.field });
        throw err;
      }
    }
    send(res, 404, { error: `no such endpoint ${req.method} ${path}; the admin listener serves GET /faults, POST /faults, GET /submissions, GET /health` });
  }
}
