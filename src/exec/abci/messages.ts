import * as abci from 'cosmjs-types/tendermint/abci/types';
import { Request, Response } from 'cosmjs-types/tendermint/abci/types';
import { BinaryWriter } from 'cosmjs-types/binary';
import type { DeepPartial } from 'cosmjs-types/helpers';

/**
 * ABCI 2.0 (CometBFT 0.38) messages: one `Request` or `Response` oneof per frame,
 * codecs from cosmjs-types. Each method's request and response share the oneof
 * field's name (`finalizeBlock`, `checkTx`, …); a response may also be `exception`.
 */
export type Method = keyof Request;
export type RequestOf<M extends Method> = NonNullable<Request[M]>;
export type ResponseOf<M extends Method> = NonNullable<Response[M & keyof Response]>;
type ResponseMethod = Method | 'exception';

/** The method names as CometBFT spells them, for messages. */
export const methodName = (method: ResponseMethod): string => method[0]!.toUpperCase() + method.slice(1);

/** The oneof field numbers of tendermint/abci/types.proto (CometBFT 0.38): Request.check_tx = 8, Response.check_tx = 9, … */
const REQUEST_FIELDS: Record<Method, number> = {
  echo: 1,
  flush: 2,
  info: 3,
  initChain: 5,
  query: 6,
  checkTx: 8,
  commit: 11,
  listSnapshots: 12,
  offerSnapshot: 13,
  loadSnapshotChunk: 14,
  applySnapshotChunk: 15,
  prepareProposal: 16,
  processProposal: 17,
  extendVote: 18,
  verifyVoteExtension: 19,
  finalizeBlock: 20,
};
const RESPONSE_FIELDS: Record<ResponseMethod, number> = {
  exception: 1,
  echo: 2,
  flush: 3,
  info: 4,
  initChain: 6,
  query: 7,
  checkTx: 9,
  commit: 12,
  listSnapshots: 13,
  offerSnapshot: 14,
  loadSnapshotChunk: 15,
  applySnapshotChunk: 16,
  prepareProposal: 17,
  processProposal: 18,
  extendVote: 19,
  verifyVoteExtension: 20,
  finalizeBlock: 21,
};

interface Codec {
  encode(message: unknown, writer: BinaryWriter): BinaryWriter;
  decode(input: Uint8Array): unknown;
  fromPartial(object: unknown): unknown;
}

/** Each oneof field's message codec (RequestCheckTx, ResponseCheckTx, …) and its length-delimited tag, by method and by field number. */
function table<M extends string>(kind: 'Request' | 'Response', fields: Record<M, number>) {
  const codecs = abci as unknown as Record<string, Codec>;
  const byMethod = new Map<M, { codec: Codec; tag: number }>();
  const byField = new Map<number, { method: M; codec: Codec }>();
  for (const [method, field] of Object.entries(fields) as Array<[M, number]>) {
    const codec = codecs[kind + methodName(method as ResponseMethod)];
    if (!codec) throw new Error(`cosmjs-types has no ${kind}${methodName(method as ResponseMethod)}`);
    byMethod.set(method, { codec, tag: (field << 3) | 2 });
    byField.set(field, { method, codec });
  }
  return { byMethod, byField };
}

const REQUESTS = table('Request', REQUEST_FIELDS);
const RESPONSES = table('Response', RESPONSE_FIELDS);

const varintLength = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);
const utf8 = (s: unknown): s is string => typeof s === 'string';
/** A DeepPartial field left at its proto3 default: absent, or the default itself. */
const unset = (v: unknown) =>
  v === undefined || v === null || v === 0 || v === 0n || v === '' || ((v instanceof Uint8Array || Array.isArray(v)) && v.length === 0);

/** cosmjs-types' writer's bytes, in a Buffer of their size (its own finish() takes an 8 KiB slab for every small message). */
function finish(writer: BinaryWriter): Buffer {
  const out = Buffer.allocUnsafe(writer.len);
  let pos = 0;
  for (let op = writer.head.next; op; op = op.next) {
    op.proceed(out, pos);
    pos += op.len;
  }
  return out;
}

const BATCH_BYTES = 64 * 1024;

/**
 * Frames written one after another into one buffer, for one socket write: each
 * is the message's length as an unsigned varint, then the Request/Response with
 * that one oneof field set — the bytes `encodeFrame(encodeRequest(…))` gives.
 * CheckTx, thousands a second, is written straight into the buffer; the other
 * messages go through their cosmjs-types codec.
 */
export class FrameBatch {
  private buf = Buffer.allocUnsafe(BATCH_BYTES);
  private len = 0;
  /** Frames written since the last take. */
  count = 0;

  /** Room for `n` more bytes. */
  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(grown, 0, 0, this.len);
    this.buf = grown;
  }

  private varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.len++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.len++] = n;
  }

  private bytes(field: number, value: Uint8Array): void {
    this.buf[this.len++] = (field << 3) | 2;
    this.varint(value.length);
    this.buf.set(value, this.len);
    this.len += value.length;
  }

  private string(field: number, value: string): void {
    const length = Buffer.byteLength(value);
    this.buf[this.len++] = (field << 3) | 2;
    this.varint(length);
    this.len += this.buf.write(value, this.len, 'utf8');
  }

  /** Frame prefix and oneof tag for a field message of `inner` bytes. */
  private open(tag: number, inner: number): void {
    const message = varintLength(tag) + varintLength(inner) + inner;
    this.reserve(varintLength(message) + message);
    this.varint(message);
    this.varint(tag);
    this.varint(inner);
    this.count++;
  }

  /** The oneof field's message through its codec: a body the codec cannot encode throws and leaves the batch as it was. */
  private encoded(entry: { codec: Codec; tag: number }, body: unknown): void {
    const inner = finish(entry.codec.encode(entry.codec.fromPartial(body), new BinaryWriter()));
    this.open(entry.tag, inner.length);
    this.buf.set(inner, this.len);
    this.len += inner.length;
  }

  request<M extends Method>(method: M, body: DeepPartial<RequestOf<M>>): void {
    if (method === 'checkTx') {
      // RequestCheckTx: tx = 1, type = 2 (an enum: NEW 0, RECHECK 1).
      const { tx, type, ...rest } = body as DeepPartial<RequestOf<'checkTx'>>;
      const kind: number = type ?? 0;
      if (tx instanceof Uint8Array && typeof kind === 'number' && kind >= 0 && kind < 0x80 && Object.keys(rest).length === 0) {
        const inner = (tx.length ? 1 + varintLength(tx.length) + tx.length : 0) + (kind ? 2 : 0);
        this.open((REQUEST_FIELDS.checkTx << 3) | 2, inner);
        if (tx.length) this.bytes(1, tx);
        if (kind) {
          this.buf[this.len++] = (2 << 3) | 0;
          this.buf[this.len++] = kind;
        }
        return;
      }
    }
    this.encoded(REQUESTS.byMethod.get(method)!, body);
  }

  response<M extends ResponseMethod>(method: M, body: DeepPartial<NonNullable<Response[M]>>): void {
    if (method === 'checkTx') {
      // ResponseCheckTx with no more than code = 1, log = 3, codespace = 8 (what a CheckTx of a simple app says).
      const { code, log, codespace, data, info, gasWanted, gasUsed, events, ...rest } = body as DeepPartial<ResponseOf<'checkTx'>>;
      const c = code ?? 0;
      const l = log ?? '';
      const cs = codespace ?? '';
      if (
        typeof c === 'number' &&
        Number.isInteger(c) &&
        c >= 0 &&
        c <= 0xffffffff &&
        utf8(l) &&
        utf8(cs) &&
        unset(data) &&
        unset(info) &&
        unset(gasWanted) &&
        unset(gasUsed) &&
        unset(events) &&
        Object.keys(rest).length === 0
      ) {
        const logBytes = l ? Buffer.byteLength(l) : 0;
        const spaceBytes = cs ? Buffer.byteLength(cs) : 0;
        const inner = (c ? 1 + varintLength(c) : 0) + (l ? 1 + varintLength(logBytes) + logBytes : 0) + (cs ? 1 + varintLength(spaceBytes) + spaceBytes : 0);
        this.open((RESPONSE_FIELDS.checkTx << 3) | 2, inner);
        if (c) {
          this.buf[this.len++] = (1 << 3) | 0;
          this.varint(c);
        }
        if (l) this.string(3, l);
        if (cs) this.string(8, cs);
        return;
      }
    }
    this.encoded(RESPONSES.byMethod.get(method)!, body);
  }

  /** The frames written so far, in one buffer; the batch starts empty again. */
  take(): Buffer {
    let out: Buffer;
    if (this.len * 2 < this.buf.length) {
      // A small batch: copied out, the buffer kept for the next.
      out = Buffer.allocUnsafe(this.len);
      this.buf.copy(out, 0, 0, this.len);
    } else {
      out = this.buf.subarray(0, this.len);
      this.buf = Buffer.allocUnsafe(BATCH_BYTES);
    }
    this.len = 0;
    this.count = 0;
    return out;
  }
}

export function encodeRequest<M extends Method>(method: M, body: DeepPartial<RequestOf<M>>): Uint8Array {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed: the computed key types as an index signature, which ts-proto's fromPartial refuses
  return Request.encode(Request.fromPartial({ [method]: body } as DeepPartial<Request>)).finish();
}

export function decodeRequest(bytes: Uint8Array): Request {
  return Request.decode(bytes);
}

export function encodeResponse<M extends ResponseMethod>(method: M, body: DeepPartial<NonNullable<Response[M]>>): Uint8Array {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed: the computed key types as an index signature, which ts-proto's fromPartial refuses
  return Response.encode(Response.fromPartial({ [method]: body } as DeepPartial<Response>)).finish();
}

export function decodeResponse(bytes: Uint8Array): Response {
  return Response.decode(bytes);
}

/** The oneof field a message sets, or undefined when it sets none that this version knows. */
export function setField<T extends object>(message: T): keyof T | undefined {
  for (const key of Object.keys(message) as Array<keyof T>) if (message[key] !== undefined) return key;
  return undefined;
}

/** A uvarint below 2^28 at `at` (a tag or a length): [value, next offset], or null when it is longer or cut short. */
function varint28(bytes: Uint8Array, at: number): [number, number] | null {
  let value = 0;
  for (let i = 0; i < 4 && at + i < bytes.length; i++) {
    const byte = bytes[at + i]!;
    value |= (byte & 0x7f) << (7 * i);
    if (byte < 0x80) return [value, at + i + 1];
  }
  return null;
}

/** A copy of bytes [start, end), a plain Uint8Array as cosmjs-types gives (a Buffer's slice() would share the frame's memory). */
function copyOf(bytes: Uint8Array, start: number, end: number): Uint8Array {
  const out = new Uint8Array(end - start);
  out.set(bytes.subarray(start, end));
  return out;
}

/** A length-delimited field's value at `at`: [start, end], or null when cut short. */
function delimited(bytes: Uint8Array, at: number): [number, number] | null {
  const length = varint28(bytes, at);
  if (!length || length[1] + length[0] > bytes.length) return null;
  return [length[1], length[1] + length[0]];
}

/**
 * RequestCheckTx (tx = 1, type = 2) from `at` to the end, as cosmjs-types
 * decodes it; null for anything it would not read the same way (left to it).
 * The tx is copied out of the frame, so a kept tx does not keep the socket's chunk.
 */
function decodeRequestCheckTx(bytes: Uint8Array, at: number): RequestOf<'checkTx'> | null {
  let tx: Uint8Array = new Uint8Array(0);
  let type = 0;
  while (at < bytes.length) {
    const key = bytes[at++]!;
    if (key === ((1 << 3) | 2)) {
      const span = delimited(bytes, at);
      if (!span) return null;
      tx = copyOf(bytes, span[0], span[1]);
      at = span[1];
    } else if (key === ((2 << 3) | 0) && at < bytes.length && bytes[at]! < 0x80) {
      type = bytes[at++]!;
    } else {
      return null;
    }
  }
  return { tx, type };
}

const EMPTY = new Uint8Array(0);

/**
 * ResponseCheckTx with no more than code = 1, data = 2, log = 3, info = 4 and
 * codespace = 8, from `at` to the end, as cosmjs-types decodes it; null for
 * anything else (gas, events: left to it).
 */
function decodeResponseCheckTx(bytes: Uint8Array, at: number): ResponseOf<'checkTx'> | null {
  const response: ResponseOf<'checkTx'> = { code: 0, data: EMPTY, log: '', info: '', gasWanted: 0n, gasUsed: 0n, events: [], codespace: '' };
  while (at < bytes.length) {
    const key = bytes[at++]!;
    if (key === ((1 << 3) | 0)) {
      const code = varint28(bytes, at);
      if (!code) return null;
      response.code = code[0];
      at = code[1];
      continue;
    }
    if ((key & 7) !== 2) return null;
    const field = key >>> 3;
    if (field !== 2 && field !== 3 && field !== 4 && field !== 8) return null;
    const span = delimited(bytes, at);
    if (!span) return null;
    at = span[1];
    if (field === 2) {
      response.data = copyOf(bytes, span[0], span[1]);
      continue;
    }
    const text = Buffer.from(bytes.buffer, bytes.byteOffset + span[0], span[1] - span[0]).toString('utf8');
    if (field === 3) response.log = text;
    else if (field === 4) response.info = text;
    else response.codespace = text;
  }
  return response;
}

/**
 * The oneof of one Request/Response: the method it sets and that field's
 * message. The usual frame — one length-delimited field and nothing after it —
 * is decoded straight into the field's codec; anything else goes through the
 * whole-message codec, which keeps protobuf's rules (the last oneof field
 * wins, unknown fields are skipped) and its errors.
 */
function decodeOneof<M extends string>(
  bytes: Uint8Array,
  fields: Map<number, { method: M; codec: Codec }>,
  whole: (bytes: Uint8Array) => object,
  fast: Partial<Record<M, (bytes: Uint8Array, at: number) => unknown>>,
): { method: M | undefined; body: unknown } {
  const tag = varint28(bytes, 0);
  if (tag && (tag[0] & 7) === 2) {
    const entry = fields.get(tag[0] >>> 3);
    const length = entry && varint28(bytes, tag[1]);
    if (entry && length && length[1] + length[0] === bytes.length) {
      const body = fast[entry.method]?.(bytes, length[1]);
      return { method: entry.method, body: body ?? entry.codec.decode(bytes.subarray(length[1])) };
    }
  }
  const message = whole(bytes) as Record<string, unknown>;
  const method = setField(message) as M | undefined;
  return { method, body: method === undefined ? undefined : message[method] };
}

/** A Response frame's method (undefined: none this version knows) and body; throws on bytes that are not a Response. */
export function decodeResponseOneof(bytes: Uint8Array): { method: ResponseMethod | undefined; body: unknown } {
  return decodeOneof(bytes, RESPONSES.byField, (b) => Response.decode(b), { checkTx: decodeResponseCheckTx });
}

/** A Request frame's method (undefined: none this version knows) and body; throws on bytes that are not a Request. */
export function decodeRequestOneof(bytes: Uint8Array): { method: Method | undefined; body: unknown } {
  return decodeOneof(bytes, REQUESTS.byField, (b) => Request.decode(b), { checkTx: decodeRequestCheckTx });
}

/** Unix nanoseconds → google.protobuf.Timestamp. */
export const timestampOf = (nanos: bigint) => ({ seconds: nanos / 1_000_000_000n, nanos: Number(nanos % 1_000_000_000n) });
