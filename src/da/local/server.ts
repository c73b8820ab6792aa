import { createHash, hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Logger } from '../../log/index.js';
import { formatHostPort, hostPortFlagMove, parseHostPort, type ListenerMove } from '../../config/index.js';
import { listen, type Listener } from '../../rpc/listen.js';
import { BodyTooLargeError, readBody } from '../../rpc/http.js';
import { strictBase64, strictBase64Into, sleep } from '../../util/index.js';
import {
  CELESTIA_MIN_GAS_PRICE,
  DaErrorText,
  DaMethod,
  missingPermission,
  type Balance,
  type SyncState,
  type TxConfig,
  type WireBlob,
  type WireExtendedHeader,
} from '../types.js';
import { BlockLog, LocalDaError, type BlockSummary, type StoredBlob } from './block-log.js';
import { applyFaultsPatch, NO_FAULTS, parseFaultsPatch, FaultsError, SUBMIT_FAULT_TEXT, type DaFaults } from './faults.js';
import { goJsonKind, goUint64, paramError, requestId, rpcError, rpcResult, RpcCode, RpcFailure, type RpcAnswer } from './go-jsonrpc.js';
import { decodeTxConfig, submissionGasPrice, type DecodedTxConfig } from './tx-config.js';

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

export interface LocalDaOptions {
  /** Data directory (`<home>/data/local-da`); created when missing. */
  dir: string;
  /** host:port of the JSON-RPC and REST listener; port 0 picks a free one. */
  listen: string;
  /** A DA block is sealed this often, empty or not. */
  blockTimeMs: number;
  /**
   * When set, the server checks tokens as celestia-node does: a wrong one is
   * HTTP 401, none at all grants only public methods (so every DA method answers
   * "missing permission"). Unset: everything is allowed, as with
   * celestia-node's --rpc.skip-auth. Never logged.
   */
  authToken?: string;
  /** Largest total of blob bytes one `blob.Submit` may carry. */
  maxBlobSize: number;
  logger: Logger;
  /** How a port error tells the operator to move the listener (default: `da serve`'s --listen). */
  move?: ListenerMove;
  /**
   * host:port of the admin listener (fault switches, submissions); none when
   * absent. With `authToken` it takes only `Authorization: Bearer <token>`;
   * without one it must be a loopback address.
   */
  adminListen?: string;
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
  /** The gas price the submission paid: the one set, or the estimate; null when refused before pricing. */
  gasPrice: number | null;
}

/** A JSON-RPC request as go-jsonrpc's `request` struct takes it (handler.go); `jsonrpc` is not checked there. */
interface RpcRequest {
  id?: unknown;
  method?: string;
  params?: unknown;
}

/** The request a JSON value decodes into, or undefined where encoding/json would fail (not an object, a method that is not a string). */
function asRequest(msg: unknown): RpcRequest | undefined {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return undefined;
  const method = (msg as { method?: unknown }).method;
  return method === undefined || method === null || typeof method === 'string' ? msg : undefined;
}

/** What a request may call: celestia-node grants all with a valid token (or without auth), only `public` without one. */
type Permissions = 'all' | 'public';

/**
 * The `perm` tag of each method (nodebuilder/blob/blob.go, header/header.go,
 * state/state.go) and its Go field name, which go-jsonrpc's permission error names.
 */
const METHODS: Record<string, { perm: 'read' | 'write'; goName: string; params: number }> = {
  [DaMethod.submit]: { perm: 'write', goName: 'Submit', params: 2 },
  [DaMethod.getAll]: { perm: 'read', goName: 'GetAll', params: 2 },
  [DaMethod.networkHead]: { perm: 'read', goName: 'NetworkHead', params: 0 },
  [DaMethod.headerByHeight]: { perm: 'read', goName: 'GetByHeight', params: 1 },
  [DaMethod.syncState]: { perm: 'read', goName: 'SyncState', params: 0 },
  [DaMethod.balance]: { perm: 'read', goName: 'Balance', params: 0 },
};

/** The price the built-in server estimates unless a fault switch sets another: celestia's minimum, as on a quiet network. */
export const DEFAULT_ESTIMATED_GAS_PRICE = CELESTIA_MIN_GAS_PRICE;
/** celestia-node's DefaultMaxGasPrice (state/txclient/tx_config.go): the cap when max_gas_price is 0. */
export const DEFAULT_MAX_GAS_PRICE = CELESTIA_MIN_GAS_PRICE * 100;

const methodError = (message: string) => new RpcFailure(RpcCode.methodError, message);

const NAMESPACE_BYTES = 29;
/** Version-0 namespaces: version byte 0, then 18 zero bytes of the 28-byte id (as celestia requires for blobs). */
const V0_ZERO_PREFIX = 19;
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
  return Buffer.from(joinedCommitment(Buffer.concat([namespace, data])), 'base64');
}

/** localCommitment (base64) of a blob whose namespace and data lie one after the other: one hash call, no hash object per blob. */
function joinedCommitment(namespaceAndData: Uint8Array): string {
  return hash('sha256', namespaceAndData, 'base64');
}

/** Loopback hosts: 127.0.0.0/8, ::1 and localhost. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The admin listener changes the DA's behaviour without authentication unless
 * a token is set: without one it may listen only on a loopback address.
 */
export function checkAdminListen(adminListen: string, authToken: string | undefined): void {
  const { host } = parseHostPort(adminListen);
  if (!authToken && !isLoopback(host)) {
    throw new LocalDaError(
      `the admin listener ${adminListen} is not a loopback address and no token is set: anyone who reaches it could switch faults on. Listen on 127.0.0.1 (e.g. --admin 127.0.0.1:0), or set a token (--token) that the admin listener then requires`,
      'LOCAL_DA_ADMIN_EXPOSED',
    );
  }
}

/** A param that does not decode: go-jsonrpc's framing around our own words for what is wrong. */
type ParamError = (why: string) => RpcFailure;

const notBase64 = (what: string) => `${what}: expected a base64 string`;

function decodeBase64(text: unknown, what: string, invalid: ParamError): Buffer {
  const bytes = typeof text === 'string' ? strictBase64(text) : null;
  if (!bytes) throw invalid(notBase64(what));
  return bytes;
}

function decodeNamespace(text: unknown, what: string, invalid: ParamError): Buffer {
  const ns = decodeBase64(text, what, invalid);
  if (ns.length !== NAMESPACE_BYTES) throw invalid(`${what}: got ${ns.length} bytes, expected ${NAMESPACE_BYTES} (version byte + 28-byte id)`);
  if (ns[0] !== 0) throw invalid(`${what}: namespace version ${ns[0]} is not supported, expected version 0`);
  if (ns.subarray(1, V0_ZERO_PREFIX).some((b) => b !== 0)) throw invalid(`${what}: a version-0 namespace id must start with 18 zero bytes`);
  return ns;
}

function send(res: Res, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  writeAnswer(res, status, text, typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json');
}

/** go-jsonrpc sets `Content-Type: application/json` on every answer of its handler (server.go, ServeHTTP); a 401 from auth has no body. */
function writeAnswer(res: Res, status: number, text: string, contentType = 'application/json'): void {
  const r = res as ServerResponse;
  if (r.headersSent || r.destroyed) return;
  r.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  r.end(text);
}

function urlPath(req: Req): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

const pseudoHash = (height: number) => createHash('sha256').update(`${CHAIN_ID}:${height}`).digest('hex').toUpperCase();

/** What a call knows of its request: whether the client hung up, and how to drop its connection. */
interface CallContext {
  hungUp: AbortSignal;
  drop: () => void;
}

/** Aborted when the connection closes before the answer is written (the client hung up, or `drop`). */
function hungUpSignal(res: Res): AbortSignal {
  const hungUp = new AbortController();
  res.once('close', () => {
    if (!(res as ServerResponse).writableFinished) hungUp.abort(new Error('the client hung up'));
  });
  return hungUp.signal;
}

/**
 * The blobs of a blob.Submit, checked: each one's namespace (canonical base64),
 * data (as sent), its decoded size, and where its namespace ‖ data ends in
 * `joined` (it starts where the one before ends). The commitments are hashed
 * only when the call runs (withCommitments): after the fault switch's delay,
 * not on the way to it, and not for a submission that is refused.
 */
interface DecodedBlobs {
  blobs: Array<{ namespace: string; data: string; bytes: number; end: number }>;
  joined: Buffer;
}

function withCommitments({ blobs, joined }: DecodedBlobs): StoredBlob[] {
  let start = 0;
  return blobs.map(({ namespace, data, end }) => {
    const commitment = joinedCommitment(joined.subarray(start, end));
    start = end;
    return { namespace, data, commitment };
  });
}

interface PendingSubmit {
  /** How many blobs it added to the block being filled. */
  blobs: number;
  record: DaSubmission;
  resolve: (height: number) => void;
  reject: (err: Error) => void;
}

function failPending(p: PendingSubmit, message: string): void {
  p.record.ok = false;
  p.record.error = message;
  p.reject(methodError(message));
}

/** How many of the latest `blob.Submit` calls the admin listener's GET /submissions lists. */
const SUBMISSIONS_KEPT = 1_000;

/**
 * The built-in DA server: celestia-node's JSON-RPC subset (DESIGN.md §8) plus
 * `GET /health` and `GET /header/sync_state`, over an append-only file log, with
 * a DA block every `blockTimeMs`. A development default, never a production claim.
 *
 * Apart from those two REST paths it answers as a celestia-node's RPC port does,
 * so a client that works here works there: go-jsonrpc's framing, status codes
 * and auth (go-jsonrpc.ts), Go's decoding of the TxConfig and celestia-node's
 * gas price cap (tx-config.ts), `null` for a height without blobs. What it
 * cannot know from celestia-node's source it refuses in its own words.
 *
 * Fault switches (`setFaults`, or `POST /faults` on the admin listener) imitate
 * a DA node that refuses connections, answers slowly, lags behind, or rejects
 * submissions with celestia's error texts.
 */
export class LocalDa {
  private head = 0;
  private headTime = new Date().toISOString();
  private readonly startedAt = new Date().toISOString();
  /**
   * Height → where its line lies in the log and its namespaces, for heights that
   * have blobs. The blobs themselves stay in the file (GetAll reads them back):
   * memory grows by a few numbers per DA height, not by the bytes posted.
   */
  private readonly index = new Map<number, BlockSummary>();
  /** Height → when its block was sealed (ms since the epoch), for header.GetByHeight. */
  private readonly times: number[] = [];
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
  private readonly move: ListenerMove;

  private constructor(
    private readonly opts: LocalDaOptions,
    private readonly log: BlockLog,
    replayed: BlockSummary[],
  ) {
    this.logger = opts.logger;
    this.token = opts.authToken ? Buffer.from(opts.authToken) : undefined;
    const { host, port } = parseHostPort(opts.listen);
    this.host = host;
    this.port = port;
    this.move = opts.move ?? hostPortFlagMove('listen', host);
    for (const b of replayed) this.applyBlock(b);
  }

  /** Replays the log in `dir`, listens, and starts sealing a block every `blockTimeMs`. */
  static async start(opts: LocalDaOptions): Promise<LocalDa> {
    if (!Number.isSafeInteger(opts.blockTimeMs) || opts.blockTimeMs <= 0)
      throw new RangeError(`local DA: blockTimeMs must be a whole number > 0, got ${opts.blockTimeMs}`);
    if (!Number.isSafeInteger(opts.maxBlobSize) || opts.maxBlobSize <= 0)
      throw new RangeError(`local DA: maxBlobSize must be a whole number > 0, got ${opts.maxBlobSize}`);
    parseHostPort(opts.listen);
    if (opts.adminListen !== undefined) checkAdminListen(opts.adminListen, opts.authToken);
    const blocks: BlockSummary[] = [];
    const log = await BlockLog.open(opts.dir, opts.logger, (b) => blocks.push(b));
    const da = new LocalDa(opts, log, blocks);
    try {
      da.listener = await listen(opts.listen, da.handle, da.move);
      da.port = da.listener.address.port;
      if (opts.adminListen !== undefined)
        da.admin = await listen(opts.adminListen, da.handleAdmin, hostPortFlagMove('admin', parseHostPort(opts.adminListen).host));
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
    return `http://${formatHostPort(this.host, this.port)}`;
  }

  /** `http://host:port` of the admin listener, when there is one. */
  get adminAddress(): string | undefined {
    const a = this.admin?.address;
    return a ? `http://${formatHostPort(a.host, a.port)}` : undefined;
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

  /**
   * The latest `blob.Submit` calls judged (SUBMISSIONS_KEPT at most), oldest
   * first: accepted ones and those that failed (fault, too large).
   */
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
      await Promise.all(listeners.filter((l) => l !== undefined).map((l) => l.close()));
      await this.log.close();
    })();
    return this.closing;
  }

  // --- blocks -------------------------------------------------------------

  private applyBlock(block: BlockSummary): void {
    this.head = block.height;
    this.headTime = new Date(block.time).toISOString();
    this.times[block.height] = block.time;
    if (block.namespaces.length > 0) this.index.set(block.height, block);
  }

  /** Seals the next DA block with every blob waiting, and answers their submitters with its height. */
  private seal(): void {
    if (this.closing) return;
    const batch = this.pending;
    this.pending = [];
    const height = this.head + 1;
    let summary: BlockSummary;
    try {
      summary = this.log.seal(height, new Date().toISOString());
    } catch (err) {
      this.logger.error({ code: 'LOCAL_DA_WRITE_FAILED', err, height }, 'local DA: cannot write the block log; the block was not sealed');
      for (const p of batch) failPending(p, `local DA cannot write its block log: ${(err as Error).message}`);
      return;
    }
    this.applyBlock(summary);
    if (batch.length > 0) this.logger.debug({ height, blobs: batch.reduce((n, p) => n + p.blobs, 0), submits: batch.length }, 'local DA block sealed');
    for (const p of batch) {
      p.record.height = height;
      p.resolve(height);
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
        this.listener = await listen(formatHostPort(this.host, this.port), this.handle, this.move);
        this.logger.info({ address: this.address }, 'local DA accepting connections again');
      }
    });
    this.listenerOp = op.catch(() => undefined);
    return op;
  }

  /**
   * What the request may call, as go-jsonrpc's auth handler decides
   * (auth/handler.go): a token in `Authorization: Bearer …` (or `?token=`)
   * that is wrong, or a header without the `Bearer ` prefix, is HTTP 401 with
   * an empty body; no token at all runs the call with public permissions only.
   * Null after answering 401.
   */
  private permissions(req: Req, res: Res): Permissions | null {
    if (!this.token) return 'all';
    let header = req.headers.authorization ?? '';
    if (header === '') {
      const query = new URL(req.url ?? '/', 'http://local').searchParams.get('token');
      if (query) header = `Bearer ${query}`;
    }
    if (header === '') return 'public';
    if (!this.bearerMatches(header)) {
      writeAnswer(res, 401, '');
      return null;
    }
    return 'all';
  }

  /** Whether an Authorization header is `Bearer <the token>` (compared in constant time). */
  private bearerMatches(header: string): boolean {
    const given = header.startsWith('Bearer ') ? Buffer.from(header.slice('Bearer '.length)) : undefined;
    return given !== undefined && this.token !== undefined && given.length === this.token.length && timingSafeEqual(given, this.token);
  }

  private readonly handle = (req: Req, res: Res): void => {
    this.route(req, res).catch((err: unknown) => {
      this.logger.error({ code: 'LOCAL_DA_REQUEST_FAILED', err }, 'local DA: request failed');
      const answer = rpcError(null, RpcCode.fatal, `internal error: ${(err as Error).message}`);
      writeAnswer(res, answer.status, answer.body);
    });
  };

  private async route(req: Req, res: Res): Promise<void> {
    const call: CallContext = { hungUp: hungUpSignal(res), drop: () => (req.socket as { destroy(): void }).destroy() };
    const perms = this.permissions(req, res);
    if (perms === null) return;
    const path = urlPath(req);
    // The spec's REST paths (SPEC.md §4.5), which celestia-node's RPC port does not have.
    if (req.method === 'GET' && path === '/health') return send(res, 200, { status: 'ok', height: this.head });
    if (req.method === 'GET' && path === '/header/sync_state') {
      if (perms !== 'all') return send(res, 403, `${missingPermission(METHODS[DaMethod.syncState]!.goName, 'read')}\n`);
      return send(res, 200, this.syncState());
    }
    // Everything else is go-jsonrpc's handler, which takes any path and method and reads the body (a GET has none: HTTP 400).
    const answer = await this.serveRpc(req, perms, call);
    if (answer) writeAnswer(res, answer.status, answer.body);
  }

  /** go-jsonrpc handler.go, handleReader: one request or a batch; null when nothing is written (a notification). */
  private async serveRpc(req: Req, perms: Permissions, call: CallContext): Promise<RpcAnswer | null> {
    const limit = this.opts.maxBlobSize * 2 + 1024 * 1024;
    let body: string;
    try {
      body = (await readBody(req, limit)).toString('utf8').trim();
    } catch (err) {
      if (err instanceof BodyTooLargeError) return rpcError(null, RpcCode.parseError, `request bigger than maximum ${limit} allowed`);
      throw err;
    }
    if (body === '') return rpcError(null, RpcCode.invalidRequest, 'Invalid request');
    let msg: unknown;
    try {
      msg = JSON.parse(body);
    } catch {
      return rpcError(null, RpcCode.parseError, 'Parse error');
    }
    if (!(body.startsWith('[') && body.endsWith(']'))) {
      const one = asRequest(msg);
      return one ? this.serveOne(one, perms, call) : rpcError(null, RpcCode.parseError, 'Parse error');
    }
    // A batch decodes as a whole into []request, or fails as a whole.
    const batch = Array.isArray(msg) ? msg.map(asRequest) : [undefined];
    if (batch.some((r) => r === undefined)) return rpcError(null, RpcCode.parseError, 'Parse error');
    if (batch.length === 0) return rpcError(null, RpcCode.invalidRequest, 'Invalid request');
    // One writer for the batch: the first answer's status is the one sent (later WriteHeader calls are ignored).
    const answers: RpcAnswer[] = [];
    for (const one of batch) {
      const answer = await this.serveOne(one!, perms, call);
      if (answer) answers.push(answer);
    }
    return { status: answers[0]?.status ?? 200, body: `[${answers.map((a) => a.body).join(',')}]` };
  }

  /** go-jsonrpc handler.go, handle: method lookup, params, then the call (where the permission is checked). */
  private async serveOne(rpc: RpcRequest, perms: Permissions, ctx: CallContext): Promise<RpcAnswer | null> {
    let id: unknown = null;
    try {
      id = requestId(rpc.id);
      const method = rpc.method ?? '';
      const spec = Object.hasOwn(METHODS, method) ? METHODS[method]! : undefined;
      if (!spec) throw new RpcFailure(RpcCode.methodNotFound, `method '${method}' not found`);
      const params = rpc.params ?? [];
      if (!Array.isArray(params)) {
        throw new RpcFailure(
          RpcCode.parseError,
          `unmarshaling param array: json: cannot unmarshal ${goJsonKind(params)} into Go value of type []jsonrpc.param`,
        );
      }
      if (params.length !== spec.params)
        throw new RpcFailure(RpcCode.invalidParams, `wrong param count (method '${method}'): ${params.length} != ${spec.params}`);
      const call = this.decodeCall(method, params);
      // auth/auth.go, PermissionedProxy: checked when the method is called, after its params decoded.
      if (perms !== 'all') throw methodError(missingPermission(spec.goName, spec.perm));
      if (this.state.delayMs > 0) await sleep(this.state.delayMs, AbortSignal.any([this.stop.signal, ctx.hungUp]));
      const result = await call(ctx);
      return id === null ? null : rpcResult(id, result);
    } catch (err) {
      if ((this.stop.signal.aborted || ctx.hungUp.aborted) && !(err instanceof RpcFailure)) return null;
      if (!(err instanceof RpcFailure)) throw err;
      // A notification's method error is not written (handler.go returns before the response).
      if (err.code === RpcCode.methodError && id === null) return null;
      return rpcError(id, err.code, err.message);
    }
  }

  /** Decodes the params as go-jsonrpc would into the method's Go types; the returned function runs the method. */
  private decodeCall(method: string, params: unknown[]): (ctx: CallContext) => unknown {
    switch (method) {
      case DaMethod.submit: {
        const blobs = this.decodeBlobs(params[0]);
        const config = decodeTxConfig(params[1]);
        return (ctx) => this.submit(blobs, params[1] as TxConfig, config, ctx);
      }
      case DaMethod.getAll: {
        const height = goUint64(params[0], (why) => paramError(method, 'uint64', why));
        const invalid: ParamError = (why) => paramError(method, '[]share.Namespace', why);
        if (!Array.isArray(params[1])) throw invalid(`namespaces: expected an array`);
        const wanted = new Set(params[1].map((n, i) => decodeNamespace(n, `namespace ${i}`, invalid).toString('base64')));
        return () => this.getAll(height, wanted);
      }
      case DaMethod.networkHead:
        return () => ({ header: { chain_id: CHAIN_ID, height: String(this.head), time: this.headTime } }) satisfies WireExtendedHeader;
      case DaMethod.headerByHeight: {
        const height = goUint64(params[0], (why) => paramError(method, 'uint64', why));
        return () => this.headerAt(height);
      }
      case DaMethod.syncState:
        return () => this.syncState();
      default:
        return () => ({ denom: 'utia', amount: this.state.balance ?? DEFAULT_BALANCE }) satisfies Balance;
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

  /**
   * The blobs of a blob.Submit, each checked as celestia-node checks it. A
   * submission carries thousands of blobs, mostly in one namespace: each
   * distinct namespace text is decoded once, and the blobs' data is decoded
   * into one buffer, each behind its namespace, for the commitments.
   */
  private decodeBlobs(raw: unknown): DecodedBlobs {
    const invalid: ParamError = (why) => paramError(DaMethod.submit, '[]*blob.Blob', why);
    if (!Array.isArray(raw) || raw.length === 0) throw invalid('blobs must be a non-empty array');
    /** Namespace text → its bytes and canonical base64, for the texts already checked. */
    const namespaces = new Map<string, { bytes: Buffer; base64: string }>();
    // Room for every blob's namespace and the most its data text can decode to.
    const room = raw.reduce((n: number, b: unknown) => {
      const data = (b as Partial<WireBlob> | null)?.data;
      return n + NAMESPACE_BYTES + (typeof data === 'string' ? (data.length >>> 2) * 3 : 0);
    }, 0);
    const joined = Buffer.allocUnsafe(room);
    let end = 0;
    const blobs = raw.map((b: unknown, i) => {
      if (typeof b !== 'object' || b === null) throw invalid(`blob ${i}: expected an object {namespace, data, share_version}`);
      const wb = b as Partial<WireBlob>;
      let ns = typeof wb.namespace === 'string' ? namespaces.get(wb.namespace) : undefined;
      if (!ns) {
        const bytes = decodeNamespace(wb.namespace, `blob ${i}: namespace`, invalid);
        // go-square share/namespace.go, ValidateForBlob (celestia-node blob/blob.go, NewBlob): the primary reserved namespaces (version 0, id up to 0x…FF) hold no blobs.
        if (bytes.subarray(1, NAMESPACE_BYTES - 1).every((b) => b === 0)) {
          throw invalid(`blob ${i}: invalid user namespace: invalid data namespace(${bytes.toString('hex')}): reserved data is forbidden`);
        }
        ns = { bytes, base64: bytes.toString('base64') };
        namespaces.set(wb.namespace as string, ns);
      }
      const start = end + ns.bytes.copy(joined, end);
      const length = typeof wb.data === 'string' ? strictBase64Into(wb.data, joined, start) : null;
      if (length === null) throw invalid(notBase64(`blob ${i}: data`));
      if (length === 0) throw invalid(`blob ${i}: data is empty`);
      if (wb.share_version !== undefined && wb.share_version !== 0)
        throw invalid(`blob ${i}: share_version ${JSON.stringify(wb.share_version)} is not supported, expected 0`);
      end = start + length;
      return { namespace: ns.base64, data: wb.data as string, bytes: length, end };
    });
    return { blobs, joined };
  }

  /** blob.Submit after decoding: size, fault switches, then the gas price as celestia-node prices it. */
  private async submit(decoded: DecodedBlobs, txConfig: TxConfig, config: DecodedTxConfig, ctx: CallContext): Promise<number> {
    const perNamespace: Record<string, number> = {};
    let bytes = 0;
    for (const b of decoded.blobs) {
      perNamespace[b.namespace] = (perNamespace[b.namespace] ?? 0) + 1;
      bytes += b.bytes;
    }
    const record: DaSubmission = { at: new Date().toISOString(), ok: false, height: null, error: null, blobs: perNamespace, bytes, txConfig, gasPrice: null };
    this.records.push(record);
    // A devnet submits every DA block for as long as it runs: only the latest are kept, not one record a block forever.
    if (this.records.length > SUBMISSIONS_KEPT) this.records.splice(0, this.records.length - SUBMISSIONS_KEPT);
    const fail = (message: string) => {
      record.error = message;
      return methodError(message);
    };
    if (bytes > this.opts.maxBlobSize) throw fail(`${DaErrorText.blobTooLarge}: ${bytes} bytes of blob data, the limit is ${this.opts.maxBlobSize}`);
    const fault = this.state.submitError;
    if (fault) {
      if (this.state.submitErrorCount > 0 && --this.state.submitErrorCount === 0) this.state.submitError = null;
      throw fail(SUBMIT_FAULT_TEXT[fault]);
    }
    try {
      record.gasPrice = submissionGasPrice(config, this.state.estimatedGasPrice ?? DEFAULT_ESTIMATED_GAS_PRICE, DEFAULT_MAX_GAS_PRICE);
    } catch (err) {
      throw fail((err as Error).message);
    }
    const blobs = withCommitments(decoded);
    try {
      this.log.add(blobs);
    } catch (err) {
      this.logger.error({ code: 'LOCAL_DA_WRITE_FAILED', err }, 'local DA: cannot write the block log; the submission was refused');
      throw fail(`local DA cannot write its block log: ${(err as Error).message}`);
    }
    record.ok = true;
    const included = new Promise<number>((resolve, reject) => this.pending.push({ blobs: blobs.length, record, resolve, reject }));
    if (this.state.dropSubmitAnswers > 0) {
      this.state.dropSubmitAnswers--;
      ctx.drop();
    }
    const height = await included;
    if (this.state.slowSubmitAnswersMs > 0) await sleep(this.state.slowSubmitAnswersMs, this.stop.signal);
    return height;
  }

  /** celestia-node nodebuilder/header/service.go, GetByHeight: a sealed block's header; a height past the head is from the future. */
  private headerAt(height: number): WireExtendedHeader {
    if (height === 0) throw methodError('header: height must be bigger than zero');
    if (height > this.head) throw methodError(`header: ${DaErrorText.heightFromFuture}: networkHeight: ${this.head}, requestedHeight: ${height}`);
    const sealedAt = this.times[height];
    return { header: { chain_id: CHAIN_ID, height: String(height), time: sealedAt === undefined ? this.headTime : new Date(sealedAt).toISOString() } };
  }

  /** celestia-node blob/service.go, GetAll: the blobs in the namespaces, or null (a nil slice) when there are none. */
  private async getAll(height: number, wanted: Set<string>): Promise<WireBlob[] | null> {
    if (height === 0) throw methodError('height must be bigger than zero');
    if (height > this.head) throw methodError(`header: ${DaErrorText.heightFromFuture}: networkHeight: ${this.head}, requestedHeight: ${height}`);
    const entry = this.index.get(height);
    if (!entry?.namespaces.some((ns) => wanted.has(ns))) return null;
    const block = await this.log.read(entry.span, height);
    const found: WireBlob[] = [];
    // `index` is the blob's position in its DA block, not celestia's share index in the data square.
    block.blobs.forEach((b, index) => {
      if (wanted.has(b.namespace)) found.push({ namespace: b.namespace, data: b.data, share_version: 0, commitment: b.commitment, index });
    });
    return found.length > 0 ? found : null;
  }

  // --- admin --------------------------------------------------------------

  private readonly handleAdmin = (req: Req, res: Res): void => {
    this.routeAdmin(req, res).catch((err: unknown) => send(res, 500, { error: (err as Error).message }));
  };

  private async routeAdmin(req: Req, res: Res): Promise<void> {
    // The switches can stop the DA and the submissions name what was posted: with a token, the admin listener wants it too.
    if (this.token && !this.bearerMatches(req.headers.authorization ?? '')) {
      return send(res, 401, { error: 'the admin listener requires "Authorization: Bearer <token>" with the token the DA server was started with (--token)' });
    }
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
