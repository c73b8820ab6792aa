import { Agent, request } from 'undici';
import { engineJwt, readJwtSecret } from './jwt.js';

/** The Engine API could not be used; `code` says how, the message what to do. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly code: 'ENGINE_UNREACHABLE' | 'ENGINE_AUTH' | 'ENGINE_RPC' | 'ENGINE_BAD_ANSWER',
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

/** Nothing answered (refused, reset, timed out): the execution client may be starting or restarting. */
export class EngineUnreachableError extends EngineError {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`execution client unreachable at ${url}: ${reason}`, 'ENGINE_UNREACHABLE');
  }
}

/** A JSON-RPC 2.0 error answer. */
export class EngineRpcError extends EngineError {
  constructor(
    readonly method: string,
    readonly rpcCode: number,
    readonly rpcMessage: string,
  ) {
    super(`${method} failed: ${rpcMessage} (JSON-RPC error ${rpcCode})`, 'ENGINE_RPC');
  }
}

export interface EngineClientOptions {
  url: string;
  /** jwt.hex, read once here; a fresh token is signed from it for every call. */
  jwtFile: string;
  timeoutMs: number;
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** JSON-RPC 2.0 over HTTP to an execution client's Engine API, each call with a fresh HS256 JWT (`iat` now). */
export class EngineClient {
  private readonly secret: Uint8Array;
  private readonly dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  private nextId = 1;

  constructor(private readonly opts: EngineClientOptions) {
    this.secret = readJwtSecret(opts.jwtFile);
  }

  get url(): string {
    return this.opts.url;
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    const { url, timeoutMs, jwtFile } = this.opts;
    const token = await engineJwt(this.secret);
    let status: number;
    let text: string;
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.dispatcher,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code && UNREACHABLE_CODES.has(e.code)) throw new EngineUnreachableError(url, e.code);
      throw new EngineUnreachableError(url, e.message ?? String(err));
    }
    if (status === 401 || status === 403) {
      throw new EngineError(
        `the execution client at ${url} rejected the node's JWT (HTTP ${status}: ${text.trim().slice(0, 120)}): it must use the same secret as ${jwtFile} (execution.jwt_secret_file), and both clocks must agree within 60 s`,
        'ENGINE_AUTH',
      );
    }
    let answer: { result?: T; error?: { code?: number; message?: string } };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new EngineError(
        `${method} on ${url} answered HTTP ${status}, not JSON-RPC: ${text.slice(0, 120)}; is execution.engine_url the Engine API port?`,
        'ENGINE_BAD_ANSWER',
      );
    }
    if (answer.error) throw new EngineRpcError(method, answer.error.code ?? 0, answer.error.message ?? JSON.stringify(answer.error));
    if (!('result' in answer)) throw new EngineError(`${method} on ${url} answered without a result: ${text.slice(0, 120)}`, 'ENGINE_BAD_ANSWER');
    return answer.result as T;
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
