/**
 * The spec's JSON for the Connect unary JSON path (DESIGN.md §7, SPEC.md §2.1, §4.1).
 *
 * Connect-ES's own JSON writer writes 64-bit integers as strings and omits empty
 * fields; the spec wants proto field names, 64-bit integers as JSON numbers with
 * their exact digits, bytes as standard base64 and every field always present.
 * `writeSpecJson` walks any message by its schema and writes exactly that —
 * output a standard proto3 JSON parser accepts.
 *
 * `parseSpecJsonRequest` reads a request body into a message (protobuf-es
 * `fromJson` underneath) and turns every problem into `invalid_argument` with a
 * message an operator understands; `getBlockSelector` reads GetBlock's oneof.
 * `connectErrorJson` writes the Connect protocol's error body and HTTP status.
 */
import {
  create,
  fromJson,
  enumToJson,
  toJson,
  ScalarType,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type Message,
  type MessageShape,
} from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus, codeToString, errorToJson } from '@connectrpc/connect/protocol-connect';
import { scanJson } from '../util/index.js';
import { GetBlockResponseSchema, type GetBlockRequest, type GetBlockResponse } from '../types/gen/node/v1/state_rpc_pb.js';

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

/** protobuf-es toJson with proto field names and every implicit field written. */
const TO_JSON = { useProtoFieldName: true, alwaysEmitImplicit: true } as const;

/**
 * Header fields ev-node reserves (proto/evnode/v1/evnode.proto: `reserved 5, 7,
 * 9`) that the spec's GetBlock JSON (SPEC.md §2.1) still lists: written as ""
 * at their place, which is also what their empty value would have been.
 */
const RESERVED_FIELDS_WRITTEN: Record<string, Array<{ number: number; name: string }>> = {
  'node.v1.Header': [
    { number: 5, name: 'last_commit_hash' },
    { number: 7, name: 'consensus_hash' },
    { number: 9, name: 'last_results_hash' },
  ],
};

/** Well-known types whose proto3 JSON is not an object of their fields: written as toJson has them. */
const WKT_CUSTOM = new Set([
  'google.protobuf.Any',
  'google.protobuf.Timestamp',
  'google.protobuf.Duration',
  'google.protobuf.FieldMask',
  'google.protobuf.Struct',
  'google.protobuf.Value',
  'google.protobuf.ListValue',
  'google.protobuf.DoubleValue',
  'google.protobuf.FloatValue',
  'google.protobuf.Int64Value',
  'google.protobuf.UInt64Value',
  'google.protobuf.Int32Value',
  'google.protobuf.UInt32Value',
  'google.protobuf.BoolValue',
  'google.protobuf.StringValue',
  'google.protobuf.BytesValue',
]);

const INT64_TYPES = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);
const INT_TEXT = /^-?[0-9]+$/;

/** A message's keys in field-number order (a oneof at its first member's place), with the reserved fields written. */
type Slot = { key: string; field: DescField } | { key: string; field: undefined };
const layouts = new WeakMap<DescMessage, Slot[]>();
function layout(schema: DescMessage): Slot[] {
  let slots = layouts.get(schema);
  if (!slots) {
    const numbered = schema.fields.map((f): { n: number; slot: Slot } => ({
      n: f.oneof ? f.oneof.fields[0]!.number : f.number,
      slot: { key: JSON.stringify(f.name) + ':', field: f },
    }));
    for (const r of RESERVED_FIELDS_WRITTEN[schema.typeName] ?? [])
      numbered.push({ n: r.number, slot: { key: JSON.stringify(r.name) + ':', field: undefined } });
    slots = numbered.sort((x, y) => x.n - y.n).map((e) => e.slot);
    layouts.set(schema, slots);
  }
  return slots;
}

/** JSON text of one toJson value of a field's element: 64-bit integers as bare digits, messages walked. */
function elementText(f: DescField, v: JsonValue): string {
  const { scalar, message } = f as { scalar?: ScalarType; message?: DescMessage };
  if (scalar !== undefined && INT64_TYPES.has(scalar) && typeof v === 'string' && INT_TEXT.test(v)) return v;
  if (message && !WKT_CUSTOM.has(message.typeName)) return messageText(message, v as JsonObject);
  return JSON.stringify(v);
}

/** Messages whose zero text is being written, so a message that contains itself ends in `{}`. */
const writingZero = new Set<DescMessage>();
const zeros = new WeakMap<DescMessage, string>();

/** JSON of a field that toJson left out (explicit presence, unset): its zero value, a message's recursively. */
function zeroText(f: DescField): string {
  if (f.fieldKind === 'message') {
    const m = f.message;
    let z = zeros.get(m);
    if (z !== undefined) return z;
    if (writingZero.has(m)) return '{}';
    writingZero.add(m);
    try {
      z = WKT_CUSTOM.has(m.typeName) ? wktZero(m) : messageText(m, toJson(m, create(m), TO_JSON) as JsonObject);
    } finally {
      writingZero.delete(m);
    }
    zeros.set(m, z);
    return z;
  }
  if (f.fieldKind === 'enum') return JSON.stringify(enumToJson(f.enum, 0));
  if (f.fieldKind === 'list') return '[]';
  if (f.fieldKind === 'map') return '{}';
  return f.scalar === ScalarType.BOOL ? 'false' : f.scalar === ScalarType.STRING || f.scalar === ScalarType.BYTES ? '""' : '0';
}

function wktZero(m: DescMessage): string {
  try {
    return JSON.stringify(toJson(m, create(m)));
  } catch {
    return 'null'; // google.protobuf.Value without a kind has no JSON form but null
  }
}

function messageText(schema: DescMessage, json: JsonObject): string {
  let s = '';
  for (const { key, field: f } of layout(schema)) {
    let part: string;
    if (f === undefined) {
      part = '""';
    } else {
      const v = json[f.name];
      if (v === undefined) {
        if (f.oneof) continue; // only the member that is set
        part = zeroText(f);
      } else if (f.fieldKind === 'list') {
        part = '[' + (v as JsonValue[]).map((e) => elementText(f, e)).join(',') + ']';
      } else if (f.fieldKind === 'map') {
        part =
          '{' +
          Object.entries(v as JsonObject)
            .map(([k, e]) => JSON.stringify(k) + ':' + elementText(f, e))
            .join(',') +
          '}';
      } else {
        part = elementText(f, v);
      }
    }
    s += (s === '' ? '' : ',') + key + part;
  }
  return '{' + s + '}';
}

/**
 * Writes `message` as the spec's JSON: protobuf-es toJson with proto field
 * names and implicit fields, then 64-bit integers as bare JSON numbers with
 * their exact digits, an unset message as its zero message (recursively) and
 * ev-node's reserved header fields in their place. Bytes are standard base64;
 * only the set member of a oneof is written. Standard proto3 JSON parsers
 * accept the output.
 */
export function writeSpecJson(schema: DescMessage, message: Message): string {
  if (message.$typeName !== schema.typeName) {
    throw new Error(`writeSpecJson: message ${message.$typeName} is not a ${schema.typeName}`);
  }
  const json = toJson(schema, message, TO_JSON);
  return WKT_CUSTOM.has(schema.typeName) ? JSON.stringify(json) : messageText(schema, json as JsonObject);
}

/**
 * Reads a GetBlock JSON answer (parsed exactly, 64-bit integers as bigints or
 * digit strings) into the message. The three header fields ev-node reserves are
 * in the JSON but not in the schema: they are skipped, as any unknown key.
 */
export function readGetBlockJson(json: JsonValue): GetBlockResponse {
  return fromJson(GetBlockResponseSchema, json, { ignoreUnknownFields: true });
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** Short text of a JSON value for an error message (`raw`: the number as written). */
function fmt(v: JsonValue, raw?: string): string {
  if (raw !== undefined) return raw.length > 40 ? raw.slice(0, 37) + '...' : raw;
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? v.slice(0, 77) + '...' : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return String(v);
}

/**
 * Bytes fields that hold a 32-byte hash: besides base64 they accept 64 hex
 * digits (optionally 0x-prefixed), and must decode to exactly 32 bytes.
 */
const HASH32_FIELDS = new Set(['node.v1.GetBlockRequest.hash']);

const HEX64 = /^(?:0[xX])?[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decodes standard or URL-safe base64 (padding optional); undefined if it is not base64. */
function decodeBase64(s: string): Uint8Array | undefined {
  if (!BASE64.test(s)) return undefined;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  if (pad > 0 && s.length % 4 !== 0) return undefined;
  if ((s.length - pad) % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(s, 'base64'));
}

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;
const U32_MAX = 4294967295n;
const I32_MIN = -2147483648n;
const I32_MAX = 2147483647n;
/** Magnitudes beyond this are out of range of every integer type. */
const HUGE = 10n ** 40n;

const NUMBER_TEXT = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * Exact integer value of a JSON number token, without going through a double.
 * Null when the value is not an integer; magnitudes beyond 10^40 come back as
 * ±10^40 (out of range of every integer type).
 */
function exactInteger(text: string): bigint | null {
  const m = NUMBER_TEXT.exec(text);
  if (!m) return null;
  const neg = m[1] === '-';
  const frac = m[3] ?? '';
  let digits = (m[2]! + frac).replace(/^0+/, '');
  if (digits === '') return 0n;
  let exp = (m[4] === undefined ? 0 : Number(m[4])) - frac.length;
  if (exp < 0) {
    const cut = digits.length + exp; // count of digits before the decimal point
    const tail = cut > 0 ? digits.slice(cut) : digits;
    if (!/^0*$/.test(tail)) return null;
    digits = cut > 0 ? digits.slice(0, cut) : '0';
    exp = 0;
  }
  if (digits.length + exp > 40) return neg ? -HUGE : HUGE;
  const v = BigInt(digits + '0'.repeat(exp));
  return neg ? -v : v;
}

/** Per-request validation state. */
interface Ctx {
  /** The request text. */
  text: string;
  /** Whether `text` has been scanned (done on first need, and always before fromJson). */
  scanned: boolean;
  /** Raw text of the number tokens JSON.parse may have altered, by JSON path. */
  raws: Map<string, string> | undefined;
  /** Current JSON path (object keys and array indexes). */
  path: (string | number)[];
}

/**
 * Scans the request text (once, on first need): rejects duplicate object keys
 * and records the raw text of number tokens whose double may differ from what
 * was written (fractions, exponents, magnitudes ≥ 2^53), by JSON path.
 */
function scan(ctx: Ctx): void {
  if (ctx.scanned) return;
  ctx.scanned = true;
  scanJson(ctx.text, {
    duplicateKey: (key) => {
      throw invalid(`duplicate key ${fmt(key)} in request body`);
    },
    number: (start, end, path) => {
      const token = ctx.text.slice(start, end);
      if (INT_TEXT.test(token) && Number.isSafeInteger(Number(token))) return;
      (ctx.raws ??= new Map()).set(JSON.stringify(path()), token);
    },
  });
}

function rawAt(ctx: Ctx): string | undefined {
  scan(ctx);
  return ctx.raws?.get(JSON.stringify(ctx.path));
}

const fieldsByJsonKey = new WeakMap<DescMessage, Map<string, DescField>>();
function fieldByKey(desc: DescMessage, key: string): DescField | undefined {
  let m = fieldsByJsonKey.get(desc);
  if (!m) {
    m = new Map();
    for (const f of desc.fields) m.set(f.name, f).set(f.jsonName, f);
    fieldsByJsonKey.set(desc, m);
  }
  return m.get(key);
}

/** `height`, `block.header.height`, `txs[3]` */
function label(ctx: Ctx): string {
  let s = '';
  for (const p of ctx.path) s += typeof p === 'number' ? `[${p}]` : s === '' ? p : '.' + p;
  return s;
}

const MAX_DEPTH = 64;

/**
 * Canonical decimal text of an integer JSON value in [min, max], or throws
 * invalid_argument. Accepts a JSON number with an integral value (exact digits,
 * even above 2^53) or a string of decimal digits.
 */
function integerText(v: JsonValue, ctx: Ctx, min: bigint, max: bigint): string {
  const name = label(ctx);
  const what = min === 0n ? 'a non-negative integer' : 'an integer';
  let exact: bigint | null;
  let shown: string;
  if (typeof v === 'number') {
    const raw = rawAt(ctx);
    shown = raw === undefined ? String(v) : raw.length > 40 ? raw.slice(0, 37) + '...' : raw;
    exact = raw !== undefined ? exactInteger(raw) : Number.isInteger(v) ? BigInt(v) : null;
  } else if (typeof v === 'string' && INT_TEXT.test(v)) {
    shown = v.length > 40 ? v.slice(0, 37) + '...' : v;
    const digits = v.replace(/^-?0*/, '');
    // Past 40 digits it is out of range of every integer type: no BigInt of a megabyte of digits.
    exact = digits.length > 40 ? (v.startsWith('-') ? -HUGE : HUGE) : BigInt(v);
  } else {
    throw invalid(`${name} must be ${what}, got ${fmt(v)}`);
  }
  if (exact === null || (min === 0n && exact < 0n)) {
    throw invalid(`${name} must be ${what}, got ${typeof v === 'string' ? fmt(v) : shown}`);
  }
  if (exact < min || exact > max) throw invalid(`${name} ${shown} is out of range`);
  return exact.toString();
}

/** Checks one value of a field; returns it, canonicalized where needed. */
function checkValue(f: DescField, v: JsonValue, ctx: Ctx, depth: number): JsonValue {
  if (f.message) {
    if (WKT_CUSTOM.has(f.message.typeName)) return v; // custom JSON form: protobuf-es checks it
    checkMessage(f.message, v, ctx, depth + 1);
    return v;
  }
  if (f.enum) {
    if (typeof v === 'string' && f.enum.values.some((e) => e.name === v)) return v;
    if (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2147483647) return v;
    const names = f.enum.values.map((e) => e.name).join(', ');
    throw invalid(`${label(ctx)} must be one of ${names}, got ${fmt(v, typeof v === 'number' ? rawAt(ctx) : undefined)}`);
  }
  switch (f.scalar) {
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return integerText(v, ctx, 0n, U64_MAX);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return integerText(v, ctx, I64_MIN, I64_MAX);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return Number(integerText(v, ctx, 0n, U32_MAX));
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return Number(integerText(v, ctx, I32_MIN, I32_MAX));
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (typeof v === 'number') return v;
      if (typeof v === 'string') {
        if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return v;
        if (v !== '' && v.trim() === v && Number.isFinite(Number(v))) return v;
      }
      throw invalid(`${label(ctx)} must be a number, got ${fmt(v)}`);
    case ScalarType.BOOL:
      if (typeof v === 'boolean') return v;
      throw invalid(`${label(ctx)} must be true or false, got ${fmt(v, typeof v === 'number' ? rawAt(ctx) : undefined)}`);
    case ScalarType.STRING:
      if (typeof v === 'string') return v;
      throw invalid(`${label(ctx)} must be a string, got ${fmt(v, typeof v === 'number' ? rawAt(ctx) : undefined)}`);
    case ScalarType.BYTES: {
      if (HASH32_FIELDS.has(`${f.parent.typeName}.${f.name}`)) {
        let bytes: Uint8Array | undefined;
        if (typeof v === 'string') {
          bytes = HEX64.test(v) ? new Uint8Array(Buffer.from(v.replace(/^0[xX]/, ''), 'hex')) : decodeBase64(v);
        }
        if (bytes === undefined) {
          throw invalid(`${label(ctx)} must be 32 bytes, base64 or hex, got ${fmt(v, typeof v === 'number' ? rawAt(ctx) : undefined)}`);
        }
        if (bytes.length !== 32) {
          throw invalid(`${label(ctx)} must be 32 bytes, base64 or hex, got ${bytes.length} bytes`);
        }
        return Buffer.from(bytes).toString('base64');
      }
      if (typeof v === 'string' && decodeBase64(v) !== undefined) return v;
      throw invalid(`${label(ctx)} must be base64, got ${fmt(v, typeof v === 'number' ? rawAt(ctx) : undefined)}`);
    }
  }
}

function checkMessage(desc: DescMessage, json: JsonValue, ctx: Ctx, depth: number): void {
  if (depth > MAX_DEPTH) throw invalid(`request nests deeper than ${MAX_DEPTH} levels`);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    const where = ctx.path.length === 0 ? 'request body' : label(ctx);
    throw invalid(`${where} must be a JSON object, got ${fmt(json, typeof json === 'number' ? rawAt(ctx) : undefined)}`);
  }
  const obj = json;
  const seen = new Map<DescField, string>();
  for (const key of Object.keys(obj)) {
    const f = fieldByKey(desc, key);
    if (f === undefined) throw invalid(`unknown field ${fmt(key)} in ${desc.typeName}`);
    const before = seen.get(f);
    if (before !== undefined) {
      throw invalid(`field ${f.name} given twice in ${desc.typeName} (as ${fmt(before)} and ${fmt(key)})`);
    }
    seen.set(f, key);
  }
  // A oneof silently takes the last member given: refuse more than one.
  for (const o of desc.oneofs) {
    const given = o.fields.filter((f) => {
      const key = seen.get(f);
      return key !== undefined && obj[key] !== null;
    });
    if (given.length > 1) {
      const names = given.map((f) => f.name);
      const where = ctx.path.length === 0 ? '' : ` in ${label(ctx)}`;
      throw invalid(names.length === 2 ? `give either ${names[0]} or ${names[1]}, not both${where}` : `give only one of ${names.join(', ')}${where}`);
    }
  }
  for (const [f, key] of seen) {
    const v = obj[key]!;
    if (v === null) continue; // proto3 JSON: null leaves the field at its default
    ctx.path.push(key);
    if (f.fieldKind === 'list') {
      if (!Array.isArray(v)) {
        throw invalid(`${label(ctx)} must be an array, got ${fmt(v, typeof v === 'number' ? rawAt(ctx) : undefined)}`);
      }
      for (let i = 0; i < v.length; i++) {
        ctx.path.push(i);
        if (v[i] === null) throw invalid(`${label(ctx)} must not be null`);
        v[i] = checkValue(f, v[i]!, ctx, depth);
        ctx.path.pop();
      }
    } else if (f.fieldKind === 'map') {
      if (typeof v !== 'object' || Array.isArray(v)) {
        throw invalid(`${label(ctx)} must be a JSON object, got ${fmt(v, typeof v === 'number' ? rawAt(ctx) : undefined)}`);
      }
      for (const k of Object.keys(v)) {
        ctx.path.push(k);
        if (v[k] === null) throw invalid(`${label(ctx)} must not be null`);
        v[k] = checkValue(f, v[k]!, ctx, depth);
        ctx.path.pop();
      }
    } else {
      obj[key] = checkValue(f, v, ctx, depth);
    }
    ctx.path.pop();
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseInner<Desc extends DescMessage>(schema: Desc, body: Uint8Array | string): MessageShape<Desc> {
  let text: string;
  if (typeof body === 'string') {
    text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  } else {
    try {
      text = utf8.decode(body); // drops a leading BOM
    } catch {
      throw invalid('request body is not valid JSON: it is not UTF-8 text');
    }
  }
  // An empty body asks with every field at its default (GetBlock: the latest block).
  if (text.trim() === '') text = '{}';
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch (e) {
    throw invalid(`request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw invalid(`request body must be a JSON object, got ${fmt(json)}`);
  }
  // Shape first (garbage fails fast), then the scan for duplicate keys if no number needed it.
  const ctx: Ctx = { text, scanned: false, raws: undefined, path: [] };
  checkMessage(schema, json, ctx, 1);
  scan(ctx);
  try {
    return fromJson(schema, json);
  } catch (e) {
    throw invalid(`invalid request: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Parses a Connect-JSON request body into a message of `schema`. Accepts proto
 * names and camelCase JSON names, 64-bit integers as JSON numbers (exact, even
 * above 2^53) or decimal strings, bytes as base64 (GetBlock's hash also as 64
 * hex digits). An empty body counts as `{}`. Anything wrong throws a
 * ConnectError with Code.InvalidArgument saying what and where; nothing else
 * is ever thrown.
 */
export function parseSpecJsonRequest<Desc extends DescMessage>(schema: Desc, body: Uint8Array | string): MessageShape<Desc> {
  try {
    return parseInner(schema, body);
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.InvalidArgument) throw e;
    // Anything unforeseen in a request is still the request's fault, never a 500.
    throw invalid(`invalid request: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** What a GetBlock request asks for. Height 0 means the latest block. */
export type BlockSelector = { kind: 'height'; height: bigint } | { kind: 'hash'; hash: Uint8Array };

/**
 * Reads GetBlock's identifier (from the JSON path or connect-node's binary,
 * gRPC and gRPC-Web paths): none is height 0 (latest); a hash must be 32 bytes.
 */
export function getBlockSelector(req: GetBlockRequest): BlockSelector {
  const id = req.identifier;
  switch (id.case) {
    case 'hash':
      if (id.value.length !== 32) {
        throw invalid(`hash must be 32 bytes, base64 or hex, got ${id.value.length} bytes`);
      }
      return { kind: 'hash', hash: id.value };
    case 'height':
      return { kind: 'height', height: id.value };
    default:
      return { kind: 'height', height: 0n };
  }
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/** Connect's snake_case name of a code ("not_found"); a code Connect does not know is "unknown". */
export function connectCodeName(code: Code): string {
  return codeToString(Code[code] === undefined ? Code.Unknown : code);
}

/**
 * The Connect protocol's unary error: the HTTP status for the code and the body
 * `{"code":"not_found","message":"…"}` — Connect's own errorToJson and
 * codeToHttpStatus (@connectrpc/connect/protocol-connect), except that the
 * message is always present and a detail the server made carries no `debug`.
 */
export function connectErrorJson(err: ConnectError): { status: number; body: string } {
  const code = Code[err.code] === undefined ? Code.Unknown : err.code;
  const { details } = errorToJson(err, undefined) as { details?: JsonObject[] };
  const body: JsonObject = { code: codeToString(code), message: err.rawMessage };
  if (details) body.details = details.map((d, i) => ('desc' in err.details[i]! ? { type: d.type!, value: d.value! } : d));
  return { status: codeToHttpStatus(code), body: JSON.stringify(body) };
}
