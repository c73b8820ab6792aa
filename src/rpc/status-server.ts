import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Logger } from '../log/index.js';
import type { RpcBackend } from './backend.js';
import type { GuardedServer } from './guard.js';
import { readBody, BodyTooLargeError, ClientGoneError } from './http.js';
import { chainMethods } from './status/chain-methods.js';
import { ChainView, type StatusMethod } from './status/chain-view.js';
import { infoMethods } from './status/info-methods.js';
import { CallParams, RpcError, internalError, invalidRequest, methodNotFound, parseError, type ParamsForm } from './status/jsonrpc.js';
import { txMethods } from './status/tx-methods.js';

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

/** A JSON-RPC id as CometBFT takes one: a string or an integer (rpc/jsonrpc/types/types.go, idFromInterface). */
type RpcId = string | number;

/** The id of every answer to the URI form, which has none (http_uri_handler.go, dummyID). */
const URI_ID = -1;
const MAX_BODY_BYTES = 1024 * 1024;

/** The methods that change the node's state, each submitting a tx (CometBFT's rpc/core/routes.go adds broadcast_evidence, not served here). */
const STATE_CHANGING_METHODS = new Set(['broadcast_tx_async', 'broadcast_tx_sync', 'broadcast_tx_commit']);

/**
 * The CometBFT-compatible JSON-RPC server on the status listener (DESIGN.md §7):
 * `POST /` with a JSON-RPC 2.0 body (one request or a batch) and `GET
 * /<method>?<params>`, with CometBFT's method names, params, result layouts and
 * error objects, so Cosmos tools (CosmJS) read it.
 *
 * Every answer, errors included, is HTTP 200: CosmJS throws on any status
 * >= 400 and loses the JSON-RPC error. CometBFT itself sends 200 for method
 * errors on `POST /` and 500 for a body that is not JSON and for errors of the
 * URI form (http_json_handler.go, http_uri_handler.go); here those are 200 too.
 */
export class StatusServer implements GuardedServer {
  readonly maxBodyBytes = MAX_BODY_BYTES;

  /** By name, in a Map: a method name is never looked up among an object's inherited properties (`__proto__`, `toString`). */
  private readonly methods: Map<string, StatusMethod>;

  constructor(
    backend: RpcBackend,
    private readonly logger: Logger,
  ) {
    const view = new ChainView(backend);
    this.methods = new Map(Object.entries({ ...infoMethods(view), ...chainMethods(view), ...txMethods(view) }));
  }

  /** The route a path counts under in the metrics: `/` (JSON-RPC POST), `/<method>` of a known method, else "other". */
  readonly routeLabel = (path: string): string => (path === '/' || this.methods.has(path.slice(1)) ? path : 'other');

  readonly handler = (req: Req, res: Res): void => {
    this.handle(req, res).catch((err: unknown) => {
      // Nobody is left to answer, and nothing went wrong on this side: not an error of the node's.
      if (err instanceof ClientGoneError) return this.logger.debug({ code: 'RPC_CLIENT_GONE', url: req.url }, err.message);
      this.send(res, { jsonrpc: '2.0', error: internalError(err instanceof Error ? err.message : String(err)).toJSON() });
    });
  };

  /**
   * The URI form of a broadcast_tx_* method (whatever the HTTP method, as CometBFT serves it), and any
   * JSON-RPC request but a GET: its body may hold a broadcast_tx_* call, and it is not read here.
   */
  changesState(req: Req): boolean {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/') return req.method !== 'GET' && req.method !== 'HEAD';
    return STATE_CHANGING_METHODS.has(decodeURIComponentSafe(path.slice(1)));
  }

  /**
   * A JSON-RPC error with an HTTP error status: CometBFT too answers a body past its limit with a
   * non-200 status (400, http_server.go PreChecksHandler); an id is not known, so it is the URI form's.
   */
  refuse(_req: Req, res: Res, status: 403 | 413, message: string): void {
    const body = JSON.stringify({ jsonrpc: '2.0', id: URI_ID, error: invalidRequest(message).toJSON() });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  private async handle(req: Req, res: Res): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // Any path but the root is the URI form, whatever the HTTP method (CometBFT registers each method's path so).
    if (url.pathname !== '/') {
      return this.send(res, await this.call(URI_ID, decodeURIComponentSafe(url.pathname.slice(1)), Object.fromEntries(url.searchParams), 'uri'));
    }
    let text: string;
    try {
      text = (await readBody(req, MAX_BODY_BYTES)).toString('utf8');
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      return this.refuse(req, res, 413, `error reading request body: ${err.message}`);
    }
    // An empty body (a browser's GET /) lists the methods, as CometBFT's writeListOfEndpoints does.
    if (text.trim() === '') return this.sendMethodList(res);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return this.send(res, { jsonrpc: '2.0', error: parseError(`error unmarshaling request: ${(err as Error).message}`).toJSON() });
    }
    const requests = Array.isArray(body) ? body : [body];
    const invalid = requests.map(requestError).find((e) => e !== null);
    if (invalid) return this.send(res, { jsonrpc: '2.0', error: parseError(`error unmarshaling request: ${invalid}`).toJSON() });
    const responses = [];
    for (const r of requests as Array<{ id?: RpcId | null; method?: string; params?: unknown }>) {
      // A request without an id is a notification: CometBFT neither runs nor answers it.
      if (r.id === undefined || r.id === null) continue;
      const id = typeof r.id === 'number' ? Math.trunc(r.id) : r.id;
      responses.push(await this.call(id, r.method ?? '', r.params, 'json'));
    }
    if (responses.length === 0) {
      res.writeHead(200);
      res.end();
      return;
    }
    this.send(res, Array.isArray(body) ? responses : responses[0]!);
  }

  /** Runs one method; its failure becomes the JSON-RPC error CometBFT would answer. */
  private async call(id: RpcId, name: string, rawParams: unknown, form: ParamsForm): Promise<object> {
    const method = this.methods.get(name);
    if (!method) return { jsonrpc: '2.0', id, error: methodNotFound().toJSON() };
    try {
      const result = await method.call(new CallParams(rawParams, form, method.args));
      return { jsonrpc: '2.0', id, result };
    } catch (err) {
      const error = err instanceof RpcError ? err : internalError((err as Error).message ?? String(err));
      return { jsonrpc: '2.0', id, error: error.toJSON() };
    }
  }

  private send(res: Res, body: object): void {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private sendMethodList(res: Res): void {
    const links = [...this.methods].map(([name, m]) => {
      const query = m.args.map((a) => `${a}=_`).join('&');
      return `<a href="/${name}${query ? `?${query}` : ''}">/${name}${query ? `?${query}` : ''}</a></br>`;
    });
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><br>Available endpoints:<br>${links.join('')}</body></html>`);
  }
}

/**
 * Why a request object is not one CometBFT can read (types.go,
 * RPCRequest.UnmarshalJSON), or null: its id must be a string or a number,
 * its method a string.
 */
function requestError(r: unknown): string | null {
  if (typeof r !== 'object' || r === null || Array.isArray(r))
    return `a request must be a JSON object like {"jsonrpc":"2.0","id":1,"method":"status","params":{}}, got ${JSON.stringify(r)}`;
  const { id, method } = r as { id?: unknown; method?: unknown };
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number')
    return `json-rpc ID (${JSON.stringify(id)}) is of unknown type (${typeof id})`;
  if (method !== undefined && typeof method !== 'string') return `method must be a string, got ${JSON.stringify(method)}`;
  return null;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
