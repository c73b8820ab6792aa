/**
 * CometBFT's JSON-RPC conventions (rpc/jsonrpc/types/types.go,
 * rpc/jsonrpc/server/http_json_handler.go and http_uri_handler.go): the error
 * objects, and how a method's params are read from a JSON body or a URL.
 */

import { strictBase64 } from '../../util/index.js';

/** A JSON-RPC error as CometBFT writes it: `data` is left out when empty (`json:"data,omitempty"`). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data = '',
  ) {
    super(message);
  }

  toJSON(): { code: number; message: string; data?: string } {
    return this.data ? { code: this.code, message: this.message, data: this.data } : { code: this.code, message: this.message };
  }
}

// The messages are CometBFT's own (types.go RPCParseError … RPCInternalError).
export const parseError = (data: string) => new RpcError(-32700, 'Parse error. Invalid JSON', data);
export const invalidRequest = (data: string) => new RpcError(-32600, 'Invalid Request', data);
export const methodNotFound = () => new RpcError(-32601, 'Method not found');
/** A method's own failure: CometBFT answers every error a method returns so (RPCInternalError). */
export const internalError = (data: string) => new RpcError(-32603, 'Internal error', data);
/** The server cannot serve the call now (types.go RPCServerError): here, a tx the node has no room or production for. */
export const serverError = (data: string) => new RpcError(-32000, 'Server error', data);

/** Where the params came from: CometBFT reads them differently in a JSON-RPC body and in a URL query. */
export type ParamsForm = 'json' | 'uri';

/** How a bytes param is written in a JSON body: `[]byte` is base64, `HexBytes` hex (libs/json, libs/bytes). */
export type BytesEncoding = 'base64' | 'hex';

/**
 * A method's params, by name. A positional (array) JSON-RPC params list is
 * matched to the method's argument names, which it must have all of, as
 * CometBFT's arrayParamsToArgs requires.
 */
export class CallParams {
  private readonly values: Record<string, unknown>;

  constructor(
    raw: unknown,
    readonly form: ParamsForm,
    argNames: readonly string[],
  ) {
    if (Array.isArray(raw)) {
      if (raw.length !== argNames.length) {
        throw this.invalid(`expected ${argNames.length} parameters (${argNames.join(', ') || 'none'}), got ${raw.length}`);
      }
      this.values = Object.fromEntries(argNames.map((name, i) => [name, raw[i]]));
    } else if (raw === undefined || raw === null) {
      this.values = {};
    } else if (typeof raw === 'object') {
      this.values = raw as Record<string, unknown>;
    } else {
      throw this.invalid(`params must be an object of named params or an array of them, got ${JSON.stringify(raw)}`);
    }
  }

  /** CometBFT's answer to a param it cannot convert, naming the param and the form it wants. */
  invalid(detail: string): RpcError {
    return new RpcError(-32602, 'Invalid params', `error converting ${this.form === 'json' ? 'json' : 'http'} params to arguments: ${detail}`);
  }

  /** The raw value, or undefined when absent (an empty URL value counts as absent, as in CometBFT's httpParamsToArgs). */
  private value(name: string): unknown {
    if (!Object.hasOwn(this.values, name)) return undefined;
    const v = this.values[name];
    return v === null || v === '' ? undefined : v;
  }

  /**
   * An integer param (CometBFT's int64 / *int). JSON carries it as a string of
   * digits (libs/json); a JSON number is taken too. A URL carries it bare or quoted.
   */
  int(name: string): bigint | undefined {
    const v = this.value(name);
    if (v === undefined) return undefined;
    const text = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : typeof v === 'string' ? unquote(v, this.form) : null;
    if (text === null || !/^-?\d{1,19}$/.test(text)) throw this.invalid(`${name} must be an integer written as a string, e.g. "5", got ${JSON.stringify(v)}`);
    return BigInt(text);
  }

  /** A boolean param: JSON true/false, or the words in a URL. */
  bool(name: string): boolean {
    const v = this.value(name);
    if (v === undefined) return false;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    throw this.invalid(`${name} must be true or false, got ${JSON.stringify(v)}`);
  }

  /** A string param; a URL writes it "quoted" (CometBFT's form), taken bare too. */
  string(name: string): string {
    const v = this.value(name);
    if (v === undefined) return '';
    if (typeof v !== 'string') throw this.invalid(`${name} must be a string, got ${JSON.stringify(v)}`);
    return unquote(v, this.form);
  }

  /**
   * A bytes param. In JSON: base64 or hex as the param's Go type has it. In a
   * URL (http_uri_handler.go, _nonJSONStringToArg): 0x-prefixed hex, or a
   * "quoted string" taken as its UTF-8 bytes, or else the JSON encoding bare.
   */
  bytes(name: string, encoding: BytesEncoding): Uint8Array | undefined {
    const v = this.value(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw this.invalid(`${name} must be a ${encoding} string, got ${JSON.stringify(v)}`);
    if (this.form === 'uri') {
      if (/^0x/i.test(v)) return decodeHex(this, name, v.slice(2), 'hex after 0x');
      if (/^".*"$/s.test(v)) return new TextEncoder().encode(v.slice(1, -1));
    }
    if (encoding === 'hex') return decodeHex(this, name, v, 'hex');
    const bytes = strictBase64(v);
    if (!bytes) {
      const url = this.form === 'uri' ? ' (in a URL: 0x-prefixed hex or a "quoted string")' : '';
      throw this.invalid(`${name} must be base64${url}, got ${JSON.stringify(v)}`);
    }
    return bytes;
  }
}

function decodeHex(params: CallParams, name: string, text: string, what: string): Uint8Array {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) throw params.invalid(`${name} must be ${what} (an even number of 0-9a-f digits), got ${JSON.stringify(text)}`);
  return Buffer.from(text, 'hex');
}

/** A URL value may come "quoted", as CometBFT's URI form writes strings. */
const unquote = (v: string, form: ParamsForm) => (form === 'uri' && /^".*"$/s.test(v) ? v.slice(1, -1) : v);
