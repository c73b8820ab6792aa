/**
 * The HTTP framing of filecoin-project/go-jsonrpc, the JSON-RPC server of
 * celestia-node's RPC port (api/rpc/server.go), so the built-in DA answers
 * what a client sees from a real DA node: status codes, error codes, message
 * texts and the bytes of the envelope.
 */

/** go-jsonrpc server.go: the standard codes it uses. */
export const RpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  /** handler.go, createError: a method's own error, when no error type is registered (celestia-node registers none). */
  methodError: 1,
  /** handler.go, handle: a method that panicked ("fatal error calling …"). */
  fatal: 0,
} as const;

/** One answer: HTTP status and body. */
export interface RpcAnswer {
  status: number;
  body: string;
}

/**
 * Go's encoding/json text of a value: JSON.stringify with '<', '>', '&',
 * U+2028 and U+2029 escaped as Go escapes them (encode.go, HTMLEscape is on by
 * default), and a trailing newline, as json.Encoder.Encode writes one.
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + '\n';
}

/**
 * response.go, MarshalJSON: the envelope is a Go map, so its keys come out
 * sorted: `error`/`id`/`jsonrpc` or `id`/`jsonrpc`/`result`. JSONRPCError's
 * fields keep struct order (`code`, `message`).
 */
export function rpcResult(id: unknown, result: unknown): RpcAnswer {
  return { status: 200, body: goJson({ id: id ?? null, jsonrpc: '2.0', result: result ?? null }) };
}

/**
 * A method's error (handler.go, createError): HTTP 200, code 1. Everything
 * before the call — a body that does not parse, an unknown method, params that
 * do not decode — goes through server.go's rpcError instead: HTTP 400 for an
 * invalid request, 500 for the rest.
 */
export function rpcError(id: unknown, code: number, message: string): RpcAnswer {
  const status = code === RpcCode.methodError ? 200 : code === RpcCode.invalidRequest ? 400 : 500;
  return { status, body: goJson({ error: { code, message }, id: id ?? null, jsonrpc: '2.0' }) };
}

/** A request that fails with a JSON-RPC error; `code` decides the HTTP status as go-jsonrpc does. */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** handler.go, handle: a param that does not decode into the method's Go type (`%T` of a pointer to it). */
export const paramError = (method: string, goType: string, why: string) =>
  new RpcFailure(RpcCode.parseError, `unmarshaling params for '${method}' (param: *${goType}): ${why}`);

/** Go's name of a JSON value's kind in an UnmarshalTypeError (encoding/json decode.go). */
export function goJsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'object' : typeof value === 'boolean' ? 'bool' : typeof value;
}

/**
 * encoding/json's UnmarshalTypeError text for a value that does not fit a Go
 * type: numbers carry their text (`number -1`), other kinds their name.
 */
export function goTypeError(value: unknown, goType: string, field?: { struct: string; name: string }): string {
  const what = typeof value === 'number' ? `number ${String(value)}` : goJsonKind(value);
  return field
    ? `json: cannot unmarshal ${what} into Go struct field ${field.struct}.${field.name} of type ${goType}`
    : `json: cannot unmarshal ${what} into Go value of type ${goType}`;
}

/** A uint64 as encoding/json decodes one: a whole JSON number >= 0 (a string is a type error). */
export function goUint64(value: unknown, onError: (why: string) => Error, field?: { struct: string; name: string }): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER) return value;
  throw onError(goTypeError(value, 'uint64', field));
}

/** websocket.go, normalizeID: a string, a number or null; any other id is refused. */
export function requestId(id: unknown): unknown {
  if (id === undefined || id === null || typeof id === 'string' || typeof id === 'number') return id ?? null;
  const goType = typeof id === 'boolean' ? 'bool' : Array.isArray(id) ? '[]interface {}' : 'map[string]interface {}';
  throw new RpcFailure(RpcCode.parseError, `failed to parse ID: invalid id type: ${goType}`);
}
