import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { Code, ConnectError } from '@connectrpc/connect';
import { compressionNegotiate } from '@connectrpc/connect/protocol';
import { headerTimeout, headerUnaryEncoding, parseTimeout } from '@connectrpc/connect/protocol-connect';
import type { ResponseCheckTx } from 'cosmjs-types/tendermint/abci/types';
import { CheckTxRejectedError, TxBackpressureError, TxRejectedError } from '../exec/index.js';
import type { Logger } from '../log/index.js';
import type { TxLocation } from '../store/index.js';
import { ConfigService, P2PService, StoreService, txHash } from '../types/index.js';
import { FORWARDED_HEADER, abciTypes, type HealthReport, type RpcBackend } from './backend.js';
import { BlockJsonCache } from './block-json-cache.js';
import { BROADCAST_TX_COMMIT_TIMEOUT_MS } from './status/tx-methods.js';
import { ACCEPT_COMPRESSION, connectAdapter } from './connect-adapter.js';
import type { GuardedServer } from './guard.js';
import { BodyTooLargeError, ClientGoneError, readBody } from './http.js';
import { p2pService } from './p2p-service.js';
import { connectErrorJson, writeSpecJson } from './json.js';
import { ServerReflection } from './reflection.js';
import { configService, storeService, unaryRoutes, type UnaryRoute } from './services.js';

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

/** Largest request body any route reads (a tx, or a JSON request). */
export const MAX_REQUEST_BYTES = 1024 * 1024;

/** Memory GetBlock's cached JSON answers may take (a full 1.9 MB block's JSON is about 2.6 MB). */
const BLOCK_JSON_CACHE_BYTES = 32 * 1024 * 1024;

const JSON_TYPE = /^application\/json\s*(;|$)/i;
const PROTO_TYPE = /^application\/proto\s*(;|$)/i;
/** gRPC, gRPC-Web and Connect streaming: connect-node's own codecs (as is Connect unary binary). */
const STREAM_TYPE = /^application\/(grpc|grpc-web|connect\+)/i;
const ACCEPTED_TYPES =
  'send POST with Content-Type application/json or application/proto (Connect unary), application/grpc[+proto] (gRPC) or application/grpc-web[+proto] (gRPC-Web)';

function sendJson(res: Res, status: number, body: string | Uint8Array): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendText(res: Res, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const errorJson = (message: string) => JSON.stringify({ error: message });

const pathOf = (req: Req) => (req.url ?? '/').split('?')[0]!;
/** The paths connect-node serves: the node's services and gRPC reflection. */
const isConnectPath = (path: string) => path.startsWith('/node.v1.') || path.startsWith('/grpc.reflection.');

/** The routes besides the Connect services' (see handle()). */
const FIXED_ROUTES = new Set(['/health/live', '/health/ready', '/genesis', '/tx', '/node_info']);

/**
 * The RPC listener (127.0.0.1:7331): the Connect services, health, `/node_info`
 * (as the status listener serves it, without the JSON-RPC envelope), and the kv
 * machine's `/tx` and `/kv/<key>`.
 *
 * Connect's unary JSON is answered here by a writer that follows the spec's
 * JSON to the letter (DESIGN.md §7); Connect binary, gRPC and gRPC-Web go to
 * connect-node (compression, connect-timeout-ms and grpc-timeout are its own).
 */
export class RpcServer implements GuardedServer {
  readonly maxBodyBytes = MAX_REQUEST_BYTES;
  private readonly routes: Map<string, UnaryRoute>;
  private readonly connect: ReturnType<typeof connectAdapter>;

  constructor(
    private readonly backend: RpcBackend,
    private readonly logger: Logger,
  ) {
    const blockJson = new BlockJsonCache(BLOCK_JSON_CACHE_BYTES);
    backend.store.onDaHeightsWritten((height) => blockJson.evict(height));
    this.routes = unaryRoutes(backend, blockJson);
    this.connect = connectAdapter(
      {
        readMaxBytes: MAX_REQUEST_BYTES,
        routes: (router) => {
          router.service(StoreService, storeService(backend));
          router.service(ConfigService, configService(backend));
          router.service(P2PService, p2pService(backend));
          new ServerReflection([StoreService, ConfigService, P2PService]).register(router);
        },
      },
      logger,
    );
  }

  /** The route a path counts under in the metrics: one of this listener's routes, else "other". */
  readonly routeLabel = (path: string): string => {
    if (this.routes.has(path) || FIXED_ROUTES.has(path)) return path;
    return path.startsWith('/kv/') ? '/kv/<key>' : 'other';
  };

  readonly handler = (req: Req, res: Res): void => {
    this.handle(req, res).catch((err) => {
      // Nobody is left to answer, and nothing went wrong on this side: not an error of the node's.
      if (err instanceof ClientGoneError) return this.logger.debug({ code: 'RPC_CLIENT_GONE', url: req.url }, err.message);
      this.logger.error({ code: 'RPC_REQUEST_FAILED', err, url: req.url }, 'RPC request failed');
      if (!res.headersSent) sendJson(res, 500, JSON.stringify({ code: 'internal', message: 'internal error' }));
      else res.end();
    });
  };

  /** Only `/tx` submits; the Connect services, health, genesis, node_info and kv only read. */
  changesState(req: Req): boolean {
    return pathOf(req) === '/tx';
  }

  /** A Connect route answers a Connect error (so its clients read the code); every other route `{"error": ...}`, as it does its own errors. */
  refuse(req: Req, res: Res, status: 403 | 413, message: string): void {
    const path = pathOf(req);
    if (this.routes.has(path) || isConnectPath(path)) {
      return sendJson(res, status, connectErrorJson(new ConnectError(message, status === 413 ? Code.ResourceExhausted : Code.PermissionDenied)).body);
    }
    sendJson(res, status, errorJson(message));
  }

  private async handle(req: Req, res: Res): Promise<void> {
    const path = pathOf(req);
    const route = this.routes.get(path);
    const contentType = String(req.headers['content-type'] ?? '');
    if (route && req.method === 'POST' && JSON_TYPE.test(contentType)) return this.unary(route, req, res);
    // connect-node answers these with a bare 415 or 405: say what we take instead.
    if (route && (req.method !== 'POST' || !(PROTO_TYPE.test(contentType) || STREAM_TYPE.test(contentType)))) {
      const wrong =
        req.method !== 'POST'
          ? { status: 405, message: `${path} takes POST, not ${req.method}` }
          : { status: 415, message: `unsupported content type ${JSON.stringify(contentType || '(none)')} for ${path}` };
      return sendJson(
        res,
        wrong.status,
        JSON.stringify({ code: req.method !== 'POST' ? 'unimplemented' : 'invalid_argument', message: `${wrong.message}; ${ACCEPTED_TYPES}` }),
      );
    }
    if (isConnectPath(path)) return this.connect(req as IncomingMessage, res as ServerResponse);
    if (path === '/health/live' || path === '/health/ready') return this.health(path, req, res);
    if (path === '/genesis') return this.genesis(req, res);
    if (path === '/tx') return this.tx(req, res);
    if (path === '/node_info') return this.nodeInfo(req, res);
    if (path.startsWith('/kv/')) return this.kv(path.slice('/kv/'.length), req, res);
    sendText(res, 404, `no route ${req.method} ${path}\n`);
  }

  /**
   * Connect unary over JSON. Answered here rather than by connect-node so JSON
   * follows the spec's shape (64-bit integers as numbers, every field written).
   * A gzip or br body is taken; connect-timeout-ms is checked but not enforced
   * (the handlers only read the store).
   */
  private async unary(route: UnaryRoute, req: Req, res: Res): Promise<void> {
    let body: Buffer;
    try {
      body = await readBody(req, MAX_REQUEST_BYTES);
    } catch (err) {
      // 413 as on every route, with Connect's resource_exhausted in the body (Connect itself would answer 429).
      if (err instanceof BodyTooLargeError) return this.refuse(req, res, 413, err.message);
      throw err;
    }
    try {
      // Connect's headers as connect-node reads them (protocol-connect/handler-factory.js): a compressed body, a deadline.
      const header = (name: string) => String(req.headers[name.toLowerCase()] ?? '') || null;
      const compression = compressionNegotiate(ACCEPT_COMPRESSION, header(headerUnaryEncoding), null, 'accept-encoding');
      const timeout = parseTimeout(header(headerTimeout), Number.MAX_SAFE_INTEGER);
      const refused = compression.error ?? timeout.error;
      if (refused) throw refused;
      if (compression.request) body = Buffer.from(await compression.request.decompress(body, MAX_REQUEST_BYTES));
      const input = route.parseJson.get(body);
      sendJson(res, 200, route.json ? await route.json(input as never) : writeSpecJson(route.output, (await route.call(input as never)) as never));
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      const { status, body } = connectErrorJson(err);
      sendJson(res, status, body);
    }
  }

  private health(path: string, req: Req, res: Res): void {
    const report: HealthReport = this.backend.health();
    const wantsJson = /application\/json/i.test(String(req.headers.accept ?? ''));
    const check = path === '/health/live' ? report.live : report.ready;
    const status = check.ok ? 200 : 503;
    if (wantsJson) {
      const checks = path === '/health/live' ? { live: report.live } : report.checks;
      const body = {
        status: check.ok ? 'pass' : 'fail',
        checks: Object.fromEntries(
          Object.entries(checks).map(([name, c]) => [name, { status: c.ok ? 'pass' : 'fail', ...(c.reason ? { reason: c.reason } : {}) }]),
        ),
      };
      return sendJson(res, status, JSON.stringify(body));
    }
    const word = path === '/health/live' ? (check.ok ? 'OK' : 'FAIL') : check.ok ? 'READY' : `UNREADY: ${check.reason}`;
    sendText(res, status, word);
  }

  /** The node's NodeInfo, so a client that reached this listener also learns the status listener's address and the node's identity. */
  private nodeInfo(req: Req, res: Res): void {
    if (req.method !== 'GET') return sendJson(res, 405, errorJson('use GET /node_info'));
    let info;
    try {
      info = this.backend.info();
    } catch (err) {
      // The listener binds a moment before the node exists.
      return sendJson(res, 503, errorJson((err as Error).message));
    }
    sendJson(res, 200, JSON.stringify(info));
  }

  /** config/genesis.json as is: a new node of this chain takes it (`noded init --join`). */
  private genesis(req: Req, res: Res): void {
    if (req.method !== 'GET') return sendJson(res, 405, errorJson('use GET /genesis'));
    sendJson(res, 200, this.backend.genesisJson);
  }

  /**
   * Answers 200 only once the tx is kept in the store (it survives a crash);
   * 503 with Retry-After while the node cannot take txs (production paused at
   * the pending cap, mempool full). With `?wait=commit` the answer waits for
   * the block holding the tx to be committed and names its height and index
   * (CometBFT's broadcast_tx_commit, with the same 10 s bound: 504 after it).
   */
  private async tx(req: Req, res: Res): Promise<void> {
    if (req.method !== 'POST') return sendJson(res, 405, errorJson('use POST /tx with the tx bytes (key=value) as the body'));
    const wait = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('wait');
    if (wait !== null && wait !== 'commit') {
      return sendJson(res, 400, errorJson(`wait=${wait} is not a choice: use POST /tx?wait=commit to answer once the tx's block is committed, or no wait`));
    }
    let tx: Buffer;
    try {
      tx = await readBody(req, MAX_REQUEST_BYTES);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return sendJson(res, 413, errorJson(err.message));
      throw err;
    }
    if (tx.length === 0) return sendJson(res, 400, errorJson('empty body: send the tx bytes (key=value) as the request body'));
    const bytes = new Uint8Array(tx);
    const digest = txHash(bytes);
    const hash = digest.toString('hex').toUpperCase();
    // Waiting starts before the submission, so a block committed in between is not missed.
    const committed = wait ? this.backend.txCommitted(digest, BROADCAST_TX_COMMIT_TIMEOUT_MS) : null;
    const forwardedBy = req.headers[FORWARDED_HEADER];
    const forwarded = typeof forwardedBy === 'string';
    let check: ResponseCheckTx | undefined;
    try {
      check = (await this.backend.submitTx(bytes, forwarded ? { forwardedBy } : {})) ?? undefined;
    } catch (err) {
      committed?.cancel();
      if (err instanceof TxBackpressureError) res.setHeader('retry-after', String(err.retryAfterSeconds));
      // A forwarding HA follower answers broadcast_tx_sync with the app's CheckTx answer: it goes back with the refusal.
      if (err instanceof CheckTxRejectedError && forwarded)
        return sendJson(res, err.httpStatus, JSON.stringify({ error: err.message, check_tx: (await abciTypes()).ResponseCheckTx.toJSON(err.response) }));
      if (err instanceof TxRejectedError) return sendJson(res, err.httpStatus, errorJson(err.message));
      throw err;
    }
    // ...and with the acknowledgement (src/ha/forward.ts reads it).
    if (!committed)
      return sendJson(
        res,
        200,
        JSON.stringify({ tx_hash: hash, ...(check && forwarded ? { check_tx: (await abciTypes()).ResponseCheckTx.toJSON(check) } : {}) }),
      );
    let at: TxLocation;
    try {
      at = await committed.landed;
    } catch (err) {
      return sendJson(
        res,
        504,
        JSON.stringify({ error: `${(err as Error).message}; the tx is kept: look it up later with /tx?hash=0x${hash} on the status listener`, tx_hash: hash }),
      );
    }
    sendJson(res, 200, JSON.stringify({ tx_hash: hash, height: Number(at.height), index: at.index }));
  }

  private async kv(rawKey: string, req: Req, res: Res): Promise<void> {
    if (req.method !== 'GET') return sendJson(res, 405, errorJson('use GET /kv/<key>'));
    if (!this.backend.kv) return sendJson(res, 404, errorJson('this node does not run the kv execution layer (execution.type is not kv)'));
    let key: string;
    try {
      key = decodeURIComponent(rawKey);
    } catch {
      return sendJson(res, 400, errorJson(`key ${JSON.stringify(rawKey)} is not valid percent-encoding`));
    }
    if (!key) return sendJson(res, 400, errorJson('give a key: GET /kv/<key>'));
    const value = await this.backend.kv.get(key);
    if (value === null) return sendJson(res, 404, errorJson(`no value for key ${JSON.stringify(key)}`));
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': value.length });
    res.end(Buffer.from(value));
  }
}
