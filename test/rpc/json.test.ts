import { create, createFileRegistry, equals, fromJson, toJson, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import {
  EmptySchema,
  FieldDescriptorProto_Label as L,
  FieldDescriptorProto_Type as T,
  FileDescriptorProtoSchema,
  file_google_protobuf_timestamp,
  timestampFromMs,
} from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus } from '@connectrpc/connect/protocol-connect';
import { describe, expect, it } from 'vitest';
import { connectCodeName, connectErrorJson, getBlockSelector, parseSpecJsonRequest, writeSpecJson } from '../../src/rpc/json.js';
import { GetSignerInfoResponseSchema } from '../../src/types/gen/node/v1/config_pb.js';
import {
  GetBlockRequestSchema,
  GetBlockResponseSchema,
  GetMetadataRequestSchema,
  GetMetadataResponseSchema,
  GetStateResponseSchema,
} from '../../src/types/gen/node/v1/state_rpc_pb.js';

// --- helpers ---------------------------------------------------------------

/** Deterministic PRNG (mulberry32), so a failing fuzz case can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
const b64 = (u: Uint8Array) => Buffer.from(u).toString('base64');

function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** The error a call throws, asserted to be a ConnectError. */
function connectErrorOf(fn: () => unknown): ConnectError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConnectError);
    return e as ConnectError;
  }
  throw new Error('expected a ConnectError, nothing was thrown');
}

function expectInvalid(body: string | Uint8Array, message: string, schema: DescMessage = GetBlockRequestSchema): void {
  const err = connectErrorOf(() => {
    const req = parseSpecJsonRequest(schema, body);
    if (schema === GetBlockRequestSchema) getBlockSelector(req as never);
  });
  expect(err.code).toBe(Code.InvalidArgument);
  expect(err.rawMessage).toBe(message);
}

function selector(body: string | Uint8Array) {
  return getBlockSelector(parseSpecJsonRequest(GetBlockRequestSchema, body));
}

// --- a message with every kind of field, to test the writer generically ---

const allKindsFile = create(FileDescriptorProtoSchema, {
  name: 'test/v1/all.proto',
  package: 'test.v1',
  syntax: 'proto3',
  dependency: ['google/protobuf/timestamp.proto'],
  enumType: [
    {
      name: 'Color',
      value: [
        { name: 'COLOR_UNSPECIFIED', number: 0 },
        { name: 'COLOR_RED', number: 1 },
      ],
    },
  ],
  messageType: [
    {
      name: 'Sub',
      field: [
        { name: 'n', number: 1, type: T.INT64, label: L.OPTIONAL, jsonName: 'n' },
        { name: 's', number: 2, type: T.STRING, label: L.OPTIONAL, jsonName: 's' },
      ],
    },
    {
      name: 'AllKinds',
      field: [
        { name: 'i32', number: 1, type: T.INT32, label: L.OPTIONAL, jsonName: 'i32' },
        { name: 'i64', number: 2, type: T.INT64, label: L.OPTIONAL, jsonName: 'i64' },
        { name: 'u32', number: 3, type: T.UINT32, label: L.OPTIONAL, jsonName: 'u32' },
        { name: 'u64', number: 4, type: T.UINT64, label: L.OPTIONAL, jsonName: 'u64' },
        { name: 's64', number: 5, type: T.SINT64, label: L.OPTIONAL, jsonName: 's64' },
        { name: 'f64', number: 6, type: T.FIXED64, label: L.OPTIONAL, jsonName: 'f64' },
        { name: 'sf32', number: 7, type: T.SFIXED32, label: L.OPTIONAL, jsonName: 'sf32' },
        { name: 'dbl', number: 8, type: T.DOUBLE, label: L.OPTIONAL, jsonName: 'dbl' },
        { name: 'flt', number: 9, type: T.FLOAT, label: L.OPTIONAL, jsonName: 'flt' },
        { name: 'flag', number: 10, type: T.BOOL, label: L.OPTIONAL, jsonName: 'flag' },
        { name: 'snake_field', number: 11, type: T.STRING, label: L.OPTIONAL, jsonName: 'snakeField' },
        { name: 'raw', number: 12, type: T.BYTES, label: L.OPTIONAL, jsonName: 'raw' },
        { name: 'color', number: 13, type: T.ENUM, typeName: '.test.v1.Color', label: L.OPTIONAL, jsonName: 'color' },
        { name: 'ri64', number: 14, type: T.INT64, label: L.REPEATED, jsonName: 'ri64' },
        { name: 'rstr', number: 15, type: T.STRING, label: L.REPEATED, jsonName: 'rstr' },
        { name: 'rbytes', number: 16, type: T.BYTES, label: L.REPEATED, jsonName: 'rbytes' },
        { name: 'rcolor', number: 17, type: T.ENUM, typeName: '.test.v1.Color', label: L.REPEATED, jsonName: 'rcolor' },
        { name: 'mi64', number: 18, type: T.MESSAGE, typeName: '.test.v1.AllKinds.Mi64Entry', label: L.REPEATED, jsonName: 'mi64' },
        { name: 'msub', number: 19, type: T.MESSAGE, typeName: '.test.v1.AllKinds.MsubEntry', label: L.REPEATED, jsonName: 'msub' },
        { name: 'sub', number: 20, type: T.MESSAGE, typeName: '.test.v1.Sub', label: L.OPTIONAL, jsonName: 'sub' },
        { name: 'rsub', number: 21, type: T.MESSAGE, typeName: '.test.v1.Sub', label: L.REPEATED, jsonName: 'rsub' },
        { name: 'ts', number: 22, type: T.MESSAGE, typeName: '.google.protobuf.Timestamp', label: L.OPTIONAL, jsonName: 'ts' },
        { name: 'pick_a', number: 23, type: T.STRING, label: L.OPTIONAL, jsonName: 'pickA', oneofIndex: 0 },
        { name: 'pick_b', number: 24, type: T.MESSAGE, typeName: '.test.v1.Sub', label: L.OPTIONAL, jsonName: 'pickB', oneofIndex: 0 },
        { name: 'opt', number: 25, type: T.INT32, label: L.OPTIONAL, jsonName: 'opt', oneofIndex: 1, proto3Optional: true },
        { name: 'self', number: 26, type: T.MESSAGE, typeName: '.test.v1.AllKinds', label: L.OPTIONAL, jsonName: 'self' },
      ],
      oneofDecl: [{ name: 'choice' }, { name: '_opt' }],
      nestedType: [
        {
          name: 'Mi64Entry',
          options: { mapEntry: true },
          field: [
            { name: 'key', number: 1, type: T.STRING, label: L.OPTIONAL, jsonName: 'key' },
            { name: 'value', number: 2, type: T.INT64, label: L.OPTIONAL, jsonName: 'value' },
          ],
        },
        {
          name: 'MsubEntry',
          options: { mapEntry: true },
          field: [
            { name: 'key', number: 1, type: T.INT32, label: L.OPTIONAL, jsonName: 'key' },
            { name: 'value', number: 2, type: T.MESSAGE, typeName: '.test.v1.Sub', label: L.OPTIONAL, jsonName: 'value' },
          ],
        },
      ],
    },
  ],
});
const registry = createFileRegistry(allKindsFile, (name) => (name === 'google/protobuf/timestamp.proto' ? file_google_protobuf_timestamp : undefined));
const AllKindsSchema = registry.getMessage('test.v1.AllKinds')!;
const SubSchema = registry.getMessage('test.v1.Sub')!;

// --- fixtures --------------------------------------------------------------

function fullResponse() {
  return create(GetBlockResponseSchema, {
    headerDaHeight: 77n,
    dataDaHeight: 78n,
    block: {
      header: {
        header: {
          version: { block: 11n, app: 2n },
          height: 123n,
          time: 1_700_000_000_123_456_789n,
          lastHeaderHash: bytes(32, 1),
          dataHash: bytes(32, 3),
          appHash: bytes(32, 5),
          proposerAddress: bytes(32, 7),
          validatorHash: bytes(32, 8),
          chainId: 'test-chain "q" \\ é ✓',
        },
        signature: bytes(64, 9),
        signer: { address: bytes(32, 7), pubKey: bytes(32, 10) },
      },
      data: {
        metadata: { chainId: 'test-chain', height: 123n, time: 1_700_000_000_000_000_000n, lastDataHash: bytes(32, 11) },
        txs: [bytes(100, 0xfb), new Uint8Array([1]), new Uint8Array([1, 2]), new Uint8Array(0)],
      },
    },
  });
}

/** SPEC.md §2.1: every field of a GetBlock response, by path, with its JSON type. */
const SPEC_FIELDS: Record<string, string> = {
  block: 'object',
  header_da_height: 'number',
  data_da_height: 'number',
  'block.header': 'object',
  'block.data': 'object',
  'block.header.header': 'object',
  'block.header.signature': 'string',
  'block.header.signer': 'object',
  'block.header.header.version': 'object',
  'block.header.header.version.block': 'number',
  'block.header.header.version.app': 'number',
  'block.header.header.height': 'number',
  'block.header.header.time': 'number',
  'block.header.header.last_header_hash': 'string',
  'block.header.header.last_commit_hash': 'string',
  'block.header.header.data_hash': 'string',
  'block.header.header.consensus_hash': 'string',
  'block.header.header.app_hash': 'string',
  'block.header.header.last_results_hash': 'string',
  'block.header.header.proposer_address': 'string',
  'block.header.header.validator_hash': 'string',
  'block.header.header.chain_id': 'string',
  'block.header.signer.address': 'string',
  'block.header.signer.pub_key': 'string',
  'block.data.metadata': 'object',
  'block.data.txs': 'array',
  'block.data.metadata.chain_id': 'string',
  'block.data.metadata.height': 'number',
  'block.data.metadata.time': 'number',
  'block.data.metadata.last_data_hash': 'string',
};

function expectSpecShape(out: string): Record<string, unknown> {
  const json = JSON.parse(out) as Record<string, unknown>;
  for (const [path, type] of Object.entries(SPEC_FIELDS)) {
    expect(jsonType(at(json, path)), path).toBe(type);
  }
  // Exactly the spec's fields at every object, nothing more.
  const objects = [
    '',
    ...Object.entries(SPEC_FIELDS)
      .filter(([, t]) => t === 'object')
      .map(([p]) => p),
  ];
  for (const obj of objects) {
    const value = obj === '' ? json : at(json, obj);
    const prefix = obj === '' ? '' : obj + '.';
    const expected = Object.keys(SPEC_FIELDS)
      .filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('.'))
      .map((p) => p.slice(prefix.length))
      .sort();
    expect(Object.keys(value as object).sort(), obj || '(top)').toEqual(expected);
  }
  for (const tx of at(json, 'block.data.txs') as unknown[]) expect(typeof tx).toBe('string');
  return json;
}

// --- writer ----------------------------------------------------------------

describe('writeSpecJson', () => {
  it('writes a full GetBlock response with every SPEC.md §2.1 field at its path and type', () => {
    const msg = fullResponse();
    const out = writeSpecJson(GetBlockResponseSchema, msg);
    const json = expectSpecShape(out);
    expect(at(json, 'header_da_height')).toBe(77);
    expect(at(json, 'data_da_height')).toBe(78);
    expect(at(json, 'block.header.header.height')).toBe(123);
    expect(at(json, 'block.header.header.version.block')).toBe(11);
    expect(at(json, 'block.header.header.chain_id')).toBe('test-chain "q" \\ é ✓');
    expect(at(json, 'block.header.header.last_header_hash')).toBe(b64(bytes(32, 1)));
    // Reserved by ev-node (evnode.proto `reserved 5, 7, 9`), still written by the spec's JSON, at their place.
    for (const name of ['last_commit_hash', 'consensus_hash', 'last_results_hash']) expect(at(json, `block.header.header.${name}`)).toBe('');
    expect(Object.keys(at(json, 'block.header.header') as object)).toEqual([
      'version',
      'height',
      'time',
      'last_header_hash',
      'last_commit_hash',
      'data_hash',
      'consensus_hash',
      'app_hash',
      'last_results_hash',
      'proposer_address',
      'validator_hash',
      'chain_id',
    ]);
    expect(at(json, 'block.header.signature')).toBe(b64(bytes(64, 9)));
    expect(at(json, 'block.header.signer.pub_key')).toBe(b64(bytes(32, 10)));
    expect(at(json, 'block.data.txs')).toEqual([b64(bytes(100, 0xfb)), 'AQ==', 'AQI=', '']);
    // 64-bit integers are bare numbers with their exact digits.
    expect(out).toContain('"time":1700000000123456789');
    expect(out).toContain('"header_da_height":77');
    expect(out).not.toMatch(/"[a-z_]*height":"/);
    // No camelCase names anywhere.
    expect(out).not.toMatch(/"[a-z]+[A-Z][A-Za-z]*":/);
  });

  it('writes standard base64 with padding', () => {
    const msg = create(GetMetadataResponseSchema, { value: new Uint8Array([0xfb, 0xff]) });
    expect(writeSpecJson(GetMetadataResponseSchema, msg)).toBe('{"value":"+/8="}');
    const one = create(GetMetadataResponseSchema, { value: new Uint8Array([0xff]) });
    expect(writeSpecJson(GetMetadataResponseSchema, one)).toBe('{"value":"/w=="}');
    // A view into a bigger buffer writes only its own bytes.
    const big = new Uint8Array([9, 9, 0xfb, 0xff, 9]);
    const view = create(GetMetadataResponseSchema, { value: big.subarray(2, 4) });
    expect(writeSpecJson(GetMetadataResponseSchema, view)).toBe('{"value":"+/8="}');
  });

  it('writes an empty GetBlock response with every field present', () => {
    const out = writeSpecJson(GetBlockResponseSchema, create(GetBlockResponseSchema));
    const json = expectSpecShape(out);
    expect(at(json, 'block.header.header.height')).toBe(0);
    expect(at(json, 'block.header.header.version.app')).toBe(0);
    expect(at(json, 'block.header.header.app_hash')).toBe('');
    expect(at(json, 'block.header.signer.pub_key')).toBe('');
    expect(at(json, 'block.data.txs')).toEqual([]);
    expect(at(json, 'block.data.metadata.chain_id')).toBe('');
    expect(at(json, 'header_da_height')).toBe(0);
  });

  it('writes partly set messages with the missing parts as zero messages', () => {
    const msg = create(GetBlockResponseSchema, { block: { data: { txs: [bytes(3, 1)] } } });
    const json = expectSpecShape(writeSpecJson(GetBlockResponseSchema, msg));
    expect(at(json, 'block.header.signer.address')).toBe('');
    expect(at(json, 'block.data.metadata.height')).toBe(0);
    expect(at(json, 'block.data.txs')).toEqual(['AQEB']);
  });

  it('writes the largest uint64 with its exact digits', () => {
    const max = (1n << 64n) - 1n;
    const msg = fullResponse();
    msg.headerDaHeight = max;
    msg.block!.header!.header!.height = max;
    msg.block!.data!.metadata!.time = max - 1n;
    const out = writeSpecJson(GetBlockResponseSchema, msg);
    expect(out).toContain('"header_da_height":18446744073709551615');
    const m = /"header_da_height":(\d+)/.exec(out)!;
    expect(BigInt(m[1]!)).toBe(max);
    const h = /"header":\{"version":\{[^}]*\},"height":(\d+)/.exec(out)!;
    expect(BigInt(h[1]!)).toBe(max);
    expect(out).toContain('"time":18446744073709551614');
    // Still parseable JSON, and a proto3 parser that reads the text exactly gets it back.
    expect(() => JSON.parse(out)).not.toThrow();
  });

  it('round-trips through a standard proto3 JSON parser', () => {
    // JSON.parse reads numbers as doubles: keep every integer within 2^53 here. The three reserved
    // header fields are unknown to the schema: a parser reads the rest with unknown fields ignored.
    const full = fullResponse();
    full.block!.header!.header!.time = 2n ** 53n - 1n;
    full.block!.data!.metadata!.time = 1_700_000_000n;
    for (const msg of [full, create(GetBlockResponseSchema, { headerDaHeight: 2n ** 53n - 1n })]) {
      const out = writeSpecJson(GetBlockResponseSchema, msg);
      const back = fromJson(GetBlockResponseSchema, JSON.parse(out) as JsonValue, { ignoreUnknownFields: true });
      if (msg.block) expect(equals(GetBlockResponseSchema, back, msg)).toBe(true);
      expect(writeSpecJson(GetBlockResponseSchema, back)).toBe(out);
    }
    const empty = writeSpecJson(GetBlockResponseSchema, create(GetBlockResponseSchema));
    expect(writeSpecJson(GetBlockResponseSchema, fromJson(GetBlockResponseSchema, JSON.parse(empty) as JsonValue, { ignoreUnknownFields: true }))).toBe(empty);
  });

  it('writes the other responses of the services', () => {
    const state = create(GetStateResponseSchema, {
      state: { chainId: 'c', initialHeight: 1n, lastBlockHeight: 9n, daHeight: 3n, appHash: bytes(32, 1) },
    });
    const sj = JSON.parse(writeSpecJson(GetStateResponseSchema, state)) as Record<string, unknown>;
    expect(at(sj, 'state.version.block')).toBe(0);
    expect(at(sj, 'state.last_block_height')).toBe(9);
    expect(at(sj, 'state.last_header_hash')).toBe('');
    expect(at(sj, 'state.app_hash')).toBe(b64(bytes(32, 1)));
    expect(equals(GetStateResponseSchema, fromJson(GetStateResponseSchema, sj as JsonValue), state)).toBe(false); // version now set
    expect(JSON.parse(writeSpecJson(GetStateResponseSchema, create(GetStateResponseSchema)))).toHaveProperty('state.chain_id', '');

    const signer = create(GetSignerInfoResponseSchema, { address: bytes(32, 3) });
    expect(writeSpecJson(GetSignerInfoResponseSchema, signer)).toBe(`{"address":"${b64(bytes(32, 3))}"}`);
    expect(writeSpecJson(EmptySchema, create(EmptySchema))).toBe('{}');
  });

  it('writes only the set member of a oneof', () => {
    const h = create(GetBlockRequestSchema, { identifier: { case: 'height', value: 42n } });
    expect(writeSpecJson(GetBlockRequestSchema, h)).toBe('{"height":42}');
    const x = create(GetBlockRequestSchema, { identifier: { case: 'hash', value: bytes(2, 0xff) } });
    expect(writeSpecJson(GetBlockRequestSchema, x)).toBe('{"hash":"//8="}');
    expect(writeSpecJson(GetBlockRequestSchema, create(GetBlockRequestSchema))).toBe('{}');
  });

  it('refuses a message of another type than the schema', () => {
    expect(() => writeSpecJson(GetBlockResponseSchema, create(GetStateResponseSchema))).toThrow(/is not a node.v1.GetBlockResponse/);
  });

  it('walks every kind of field of any message', () => {
    const msg = create(AllKindsSchema, {
      i32: -5,
      i64: -(2n ** 63n),
      u32: 4294967295,
      u64: 2n ** 64n - 1n,
      s64: -7n,
      f64: 8n,
      sf32: -9,
      dbl: 1.5,
      flt: 0.25,
      flag: true,
      snakeField: 'a\u0000b\n"',
      raw: bytes(4, 0xff),
      color: 1,
      ri64: [1n, -2n, 2n ** 62n],
      rstr: ['x', ''],
      rbytes: [bytes(1, 1), new Uint8Array(0)],
      rcolor: [0, 1, 7],
      mi64: { a: 1n, 'b"': -2n },
      msub: { 3: create(SubSchema, { n: 4n, s: 's' }) },
      sub: { n: 12n },
      rsub: [{ n: 1n }, {}],
      ts: timestampFromMs(1000),
      choice: { case: 'pickA', value: 'picked' },
      opt: 0,
    });
    const out = writeSpecJson(AllKindsSchema, msg);
    expect(out).toContain('"i64":-9223372036854775808');
    expect(out).toContain('"u64":18446744073709551615');
    expect(out).toContain('"ri64":[1,-2,4611686018427387904]');
    const json = JSON.parse(out) as Record<string, unknown>;
    expect(json).toMatchObject({
      i32: -5,
      u32: 4294967295,
      s64: -7,
      f64: 8,
      sf32: -9,
      dbl: 1.5,
      flt: 0.25,
      flag: true,
      snake_field: 'a\u0000b\n"',
      raw: '/////w==',
      color: 'COLOR_RED',
      rstr: ['x', ''],
      rbytes: ['AQ==', ''],
      rcolor: ['COLOR_UNSPECIFIED', 'COLOR_RED', 7],
      mi64: { a: 1, 'b"': -2 },
      msub: { '3': { n: 4, s: 's' } },
      sub: { n: 12, s: '' },
      rsub: [
        { n: 1, s: '' },
        { n: 0, s: '' },
      ],
      ts: '1970-01-01T00:00:01Z',
      pick_a: 'picked',
      opt: 0,
    });
    expect(json).not.toHaveProperty('pick_b');
    // The recursive field is written as a zero message, its own recursion as {}.
    expect(at(json, 'self.i64')).toBe(0);
    expect(at(json, 'self.ts')).toBe('1970-01-01T00:00:00Z');
    expect(at(json, 'self.self')).toEqual({});

    // A standard proto3 parser reads it back (the values below 2^53 exactly).
    const small = create(AllKindsSchema, { ...(msg as object), i64: -3n, u64: 5n, ri64: [1n, 2n] });
    const back = fromJson(AllKindsSchema, JSON.parse(writeSpecJson(AllKindsSchema, small)) as JsonValue);
    const bj = toJson(AllKindsSchema, back) as Record<string, unknown>;
    const sj = toJson(AllKindsSchema, small) as Record<string, unknown>;
    delete bj['self'];
    expect(bj).toEqual(sj);
  });

  it('writes every scalar zero and special doubles', () => {
    const zero = JSON.parse(writeSpecJson(AllKindsSchema, create(AllKindsSchema))) as Record<string, unknown>;
    expect(zero).toMatchObject({
      i32: 0,
      i64: 0,
      u32: 0,
      u64: 0,
      dbl: 0,
      flag: false,
      snake_field: '',
      raw: '',
      color: 'COLOR_UNSPECIFIED',
      ri64: [],
      rstr: [],
      rbytes: [],
      mi64: {},
      msub: {},
      sub: { n: 0, s: '' },
      rsub: [],
      ts: '1970-01-01T00:00:00Z',
      opt: 0,
    });
    expect(zero).not.toHaveProperty('pick_a');
    expect(zero).not.toHaveProperty('pick_b');
    const special = create(AllKindsSchema, { dbl: Number.NaN, flt: Number.POSITIVE_INFINITY });
    const sj = JSON.parse(writeSpecJson(AllKindsSchema, special)) as Record<string, unknown>;
    expect(sj['dbl']).toBe('NaN');
    expect(sj['flt']).toBe('Infinity');
    expect(() => fromJson(AllKindsSchema, sj as JsonValue)).not.toThrow();
  });
});

// --- requests --------------------------------------------------------------

describe('parseSpecJsonRequest + getBlockSelector', () => {
  const hash = new Uint8Array(32).map((_, i) => i * 7);
  const hex = Buffer.from(hash).toString('hex');

  it('accepts the forms of the spec', () => {
    expect(selector('{"height": 42}')).toEqual({ kind: 'height', height: 42n });
    expect(selector('{"height": "42"}')).toEqual({ kind: 'height', height: 42n });
    expect(selector(new TextEncoder().encode('{"height":7}'))).toEqual({ kind: 'height', height: 7n });
    expect(selector(`{"hash": "${b64(hash)}"}`)).toEqual({ kind: 'hash', hash });
    expect(selector(`{"hash": "${hex}"}`)).toEqual({ kind: 'hash', hash });
    expect(selector(`{"hash": "${hex.toUpperCase()}"}`)).toEqual({ kind: 'hash', hash });
    expect(selector(`{"hash": "0x${hex}"}`)).toEqual({ kind: 'hash', hash });
    expect(selector(`{"hash": "${Buffer.from(hash).toString('base64url')}"}`)).toEqual({ kind: 'hash', hash });
    expect(selector('{}')).toEqual({ kind: 'height', height: 0n });
    expect(selector('')).toEqual({ kind: 'height', height: 0n });
    expect(selector(' \n')).toEqual({ kind: 'height', height: 0n });
    expect(selector('\ufeff{"height":3}')).toEqual({ kind: 'height', height: 3n });
    expect(selector('{"height": 0}')).toEqual({ kind: 'height', height: 0n });
    expect(selector('{"height": null}')).toEqual({ kind: 'height', height: 0n });
    expect(selector('{"height": 5, "hash": null}')).toEqual({ kind: 'height', height: 5n });
    expect(selector('{"height": 1e3}')).toEqual({ kind: 'height', height: 1000n });
    expect(selector('{"height": 42.0}')).toEqual({ kind: 'height', height: 42n });
  });

  it('reads 64-bit heights exactly, past 2^53', () => {
    expect(selector('{"height": 18446744073709551615}')).toEqual({ kind: 'height', height: 2n ** 64n - 1n });
    expect(selector('{"height": "18446744073709551615"}')).toEqual({ kind: 'height', height: 2n ** 64n - 1n });
    expect(selector('{"height": 9007199254740993}')).toEqual({ kind: 'height', height: 9007199254740993n });
    expect(selector('{"height": 1.8e19}')).toEqual({ kind: 'height', height: 18000000000000000000n });
  });

  it('rejects each malformed request with invalid_argument and a clear message', () => {
    expectInvalid('{"height": 1, "hash": "' + b64(hash) + '"}', 'give either height or hash, not both');
    expectInvalid('{"hash": "' + b64(hash) + '", "height": "1"}', 'give either height or hash, not both');
    expectInvalid('{"height": -1}', 'height must be a non-negative integer, got -1');
    expectInvalid('{"height": 1.5}', 'height must be a non-negative integer, got 1.5');
    expectInvalid('{"height": "abc"}', 'height must be a non-negative integer, got "abc"');
    expectInvalid('{"height": "-1"}', 'height must be a non-negative integer, got "-1"');
    expectInvalid('{"height": "0x10"}', 'height must be a non-negative integer, got "0x10"');
    expectInvalid('{"height": ""}', 'height must be a non-negative integer, got ""');
    expectInvalid('{"height": true}', 'height must be a non-negative integer, got true');
    expectInvalid('{"height": [1]}', 'height must be a non-negative integer, got an array');
    expectInvalid('{"height": 1e-400}', 'height must be a non-negative integer, got 1e-400');
    expectInvalid('{"height": 1e30}', 'height 1e30 is out of range');
    expectInvalid('{"height": 1e400}', 'height 1e400 is out of range');
    expectInvalid('{"height": 18446744073709551616}', 'height 18446744073709551616 is out of range');
    expectInvalid('{"height": "18446744073709551616"}', 'height 18446744073709551616 is out of range');
    expectInvalid(`{"height": "${'9'.repeat(100_000)}"}`, `height ${'9'.repeat(37)}... is out of range`);
    expectInvalid(`{"height": ${'9'.repeat(100_000)}}`, `height ${'9'.repeat(37)}... is out of range`);
    expect(selector(`{"height": "${'0'.repeat(100)}7"}`)).toEqual({ kind: 'height', height: 7n });
    expectInvalid('{"hash": "AAAA"}', 'hash must be 32 bytes, base64 or hex, got 3 bytes');
    expectInvalid('{"hash": ""}', 'hash must be 32 bytes, base64 or hex, got 0 bytes');
    expectInvalid(`{"hash": "${hex}00"}`, 'hash must be 32 bytes, base64 or hex, got 49 bytes');
    expectInvalid('{"hash": "zz!!"}', 'hash must be 32 bytes, base64 or hex, got "zz!!"');
    expectInvalid('{"hash": 12}', 'hash must be 32 bytes, base64 or hex, got 12');
    expectInvalid('{"heigth": 1}', 'unknown field "heigth" in node.v1.GetBlockRequest');
    expectInvalid('{"height": 1, "height": 2}', 'duplicate key "height" in request body');
    expectInvalid('[1]', 'request body must be a JSON object, got an array');
    expectInvalid('null', 'request body must be a JSON object, got null');
    expectInvalid('"x"', 'request body must be a JSON object, got "x"');
    expectInvalid(new Uint8Array([0x7b, 0xff, 0x7d]), 'request body is not valid JSON: it is not UTF-8 text');
    const notJson = connectErrorOf(() => parseSpecJsonRequest(GetBlockRequestSchema, '{"height": 1'));
    expect(notJson.code).toBe(Code.InvalidArgument);
    expect(notJson.rawMessage).toMatch(/^request body is not valid JSON: /);
  });

  it('rejects a hash of the wrong size from the binary path too', () => {
    const req = create(GetBlockRequestSchema, { identifier: { case: 'hash', value: bytes(31, 1) } });
    const err = connectErrorOf(() => getBlockSelector(req));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe('hash must be 32 bytes, base64 or hex, got 31 bytes');
    expect(getBlockSelector(create(GetBlockRequestSchema))).toEqual({ kind: 'height', height: 0n });
  });

  it('parses any request schema: proto and camelCase names, types, nesting', () => {
    expect(parseSpecJsonRequest(GetMetadataRequestSchema, '{"key":"k"}').key).toBe('k');
    expectInvalid('{"key": 5}', 'key must be a string, got 5', GetMetadataRequestSchema);
    expect(parseSpecJsonRequest(EmptySchema, '{}')).toBeDefined();
    expectInvalid('{"a":1}', 'unknown field "a" in google.protobuf.Empty', EmptySchema);

    const m = parseSpecJsonRequest(
      AllKindsSchema,
      '{"snakeField":"s","u64":18446744073709551615,"i64":"-9223372036854775808","ri64":[1,"2",9007199254740993],' +
        '"sub":{"n":"5"},"mi64":{"x":1234567890123456789},"color":"COLOR_RED","ts":"1970-01-01T00:00:01Z","pickB":{"s":"b"}}',
    ) as Record<string, unknown>;
    expect(m['snakeField']).toBe('s');
    expect(m['u64']).toBe(2n ** 64n - 1n);
    expect(m['i64']).toBe(-(2n ** 63n));
    expect(m['ri64']).toEqual([1n, 2n, 9007199254740993n]);
    expect((m['sub'] as Record<string, unknown>)['n']).toBe(5n);
    expect(m['mi64']).toEqual({ x: 1234567890123456789n });
    expect(m['color']).toBe(1);
    expect((m['choice'] as { case: string }).case).toBe('pickB');
    expect(parseSpecJsonRequest(AllKindsSchema, '{"snake_field":"p"}')).toHaveProperty('snakeField', 'p');

    expectInvalid(
      '{"snake_field":"a","snakeField":"b"}',
      'field snake_field given twice in test.v1.AllKinds (as "snake_field" and "snakeField")',
      AllKindsSchema,
    );
    expectInvalid('{"pick_a":"a","pickB":{}}', 'give either pick_a or pick_b, not both', AllKindsSchema);
    expectInvalid('{"sub":{"n":-1.5}}', 'sub.n must be an integer, got -1.5', AllKindsSchema);
    expectInvalid('{"sub":{"nn":1}}', 'unknown field "nn" in test.v1.Sub', AllKindsSchema);
    expectInvalid('{"sub":[]}', 'sub must be a JSON object, got an array', AllKindsSchema);
    expectInvalid('{"self":{"self":{"i32":2147483648}}}', 'self.self.i32 2147483648 is out of range', AllKindsSchema);
    expectInvalid('{"i64":9223372036854775808}', 'i64 9223372036854775808 is out of range', AllKindsSchema);
    expectInvalid('{"ri64":[1,null]}', 'ri64[1] must not be null', AllKindsSchema);
    expectInvalid('{"ri64":[1,{"a":1}]}', 'ri64[1] must be an integer, got an object', AllKindsSchema);
    expectInvalid('{"rsub":[{},{"n":1.25}]}', 'rsub[1].n must be an integer, got 1.25', AllKindsSchema);
    expectInvalid('{"mi64":{"k":"v"}}', 'mi64.k must be an integer, got "v"', AllKindsSchema);
    expectInvalid('{"ri64":3}', 'ri64 must be an array, got 3', AllKindsSchema);
    expectInvalid('{"flag":"true"}', 'flag must be true or false, got "true"', AllKindsSchema);
    expectInvalid('{"raw":"**"}', 'raw must be base64, got "**"', AllKindsSchema);
    expectInvalid('{"color":"BLUE"}', 'color must be one of COLOR_UNSPECIFIED, COLOR_RED, got "BLUE"', AllKindsSchema);
    expectInvalid('{"dbl":"x"}', 'dbl must be a number, got "x"', AllKindsSchema);
    const ts = connectErrorOf(() => parseSpecJsonRequest(AllKindsSchema, '{"ts":"yesterday"}'));
    expect(ts.code).toBe(Code.InvalidArgument);
    expect(ts.rawMessage).toMatch(/^invalid request: /);
    let deep = '{"i32":1}';
    for (let i = 0; i < 100; i++) deep = `{"self":${deep}}`;
    expectInvalid(deep, 'request nests deeper than 64 levels', AllKindsSchema);
  });

  it('answers 500 garbage bodies with nothing but invalid_argument', () => {
    const rnd = prng(20240601);
    const int = (n: number) => Math.floor(rnd() * n);
    const pick = <X>(xs: readonly X[]): X => xs[int(xs.length)]!;
    const keys = [
      'height',
      'hash',
      'heigth',
      'Height',
      '',
      '__proto__',
      'constructor',
      'toString',
      'key',
      'i64',
      'u64',
      'i32',
      'ri64',
      'snake_field',
      'snakeField',
      'sub',
      'rsub',
      'mi64',
      'msub',
      'ts',
      'pick_a',
      'pickB',
      'self',
      'color',
      'raw',
      'dbl',
      'flag',
      '\u0000',
      'é',
      '\ud800',
      'a"b',
      '1',
    ] as const;
    const numbers = [
      '0',
      '-0',
      '1',
      '-1',
      '42',
      '1.5',
      '1e3',
      '1E-3',
      '-1e30',
      '1e400',
      '18446744073709551615',
      '18446744073709551616',
      '9007199254740993',
      '-9223372036854775809',
      '2147483648',
      '0.0000001',
      '123456789012345678901234567890.5',
    ] as const;
    const strings = ['', 'abc', '42', '-1', 'AAAA', 'zz!!', 'NaN', 'Infinity', 'a'.repeat(64), 'ab'.repeat(32), '1970-01-01T00:00:00Z'];
    const value = (depth: number): string => {
      const r = int(depth > 4 ? 6 : 9);
      switch (r) {
        case 0:
          return 'null';
        case 1:
          return pick(['true', 'false']);
        case 2:
        case 3:
          return pick(numbers);
        case 4:
          return JSON.stringify(pick(strings));
        case 5:
          return JSON.stringify(String.fromCharCode(...Array.from({ length: int(12) }, () => int(0x10000))));
        case 6:
          return '[' + Array.from({ length: int(4) }, () => value(depth + 1)).join(',') + ']';
        default:
          return object(depth + 1);
      }
    };
    const object = (depth: number): string => '{' + Array.from({ length: int(4) }, () => JSON.stringify(pick(keys)) + ':' + value(depth)).join(',') + '}';
    const mutate = (s: string): string => {
      const a = s.split('');
      for (let k = int(4); k >= 0; k--) {
        const i = int(a.length + 1);
        const op = int(3);
        if (op === 0) a.splice(i, 1);
        else if (op === 1) a.splice(i, 0, pick(['{', '}', '[', ']', '"', ',', ':', '\\', '-', '9', 'e', ' ']));
        else a[i] = String.fromCharCode(int(128));
      }
      return a.join('');
    };

    const bodies: (string | Uint8Array)[] = [];
    for (let i = 0; i < 100; i++) bodies.push(new Uint8Array(Array.from({ length: int(64) }, () => int(256))));
    for (let i = 0; i < 100; i++) bodies.push(value(0));
    for (let i = 0; i < 200; i++) bodies.push(object(0));
    for (let i = 0; i < 100; i++) bodies.push(mutate(rnd() < 0.5 ? object(0) : `{"height":${pick(numbers)}}`));
    expect(bodies.length).toBe(500);

    const schemas: DescMessage[] = [GetBlockRequestSchema, GetMetadataRequestSchema, EmptySchema, AllKindsSchema];
    let accepted = 0;
    for (const body of bodies) {
      for (const schema of schemas) {
        try {
          const req = parseSpecJsonRequest(schema, body);
          if (schema === GetBlockRequestSchema) getBlockSelector(req as never);
          // Whatever was accepted can be written back out.
          writeSpecJson(schema, req);
          accepted++;
        } catch (e) {
          if (!(e instanceof ConnectError) || e.code !== Code.InvalidArgument) {
            throw new Error(`body ${JSON.stringify(typeof body === 'string' ? body : Array.from(body))} gave ${String(e)}`);
          }
          expect(e.rawMessage.length).toBeGreaterThan(0);
        }
      }
    }
    expect(accepted).toBeGreaterThan(0);
  });
});

// --- errors ----------------------------------------------------------------

describe('connectErrorJson', () => {
  it('maps every code to the HTTP status of the Connect spec', () => {
    const table: [Code, string, number][] = [
      [Code.Canceled, 'canceled', 499],
      [Code.Unknown, 'unknown', 500],
      [Code.InvalidArgument, 'invalid_argument', 400],
      [Code.DeadlineExceeded, 'deadline_exceeded', 504],
      [Code.NotFound, 'not_found', 404],
      [Code.AlreadyExists, 'already_exists', 409],
      [Code.PermissionDenied, 'permission_denied', 403],
      [Code.ResourceExhausted, 'resource_exhausted', 429],
      [Code.FailedPrecondition, 'failed_precondition', 400],
      [Code.Aborted, 'aborted', 409],
      [Code.OutOfRange, 'out_of_range', 400],
      [Code.Unimplemented, 'unimplemented', 501],
      [Code.Internal, 'internal', 500],
      [Code.Unavailable, 'unavailable', 503],
      [Code.DataLoss, 'data_loss', 500],
      [Code.Unauthenticated, 'unauthenticated', 401],
    ];
    for (const [code, name, status] of table) {
      const r = connectErrorJson(new ConnectError('m', code));
      expect(r.status, name).toBe(status);
      expect(r.status, name).toBe(codeToHttpStatus(code));
      expect(JSON.parse(r.body)).toEqual({ code: name, message: 'm' });
      expect(connectCodeName(code)).toBe(name);
    }
    expect(connectErrorJson(new ConnectError('odd', 99 as Code))).toEqual({ status: 500, body: '{"code":"unknown","message":"odd"}' });
  });

  it('writes the message without the [code] prefix, escaped', () => {
    const err = new ConnectError('no block at height 7 "x"', Code.NotFound);
    expect(err.message).toMatch(/^\[not_found\]/);
    const r = connectErrorJson(err);
    expect(r.status).toBe(404);
    expect(r.body).toBe('{"code":"not_found","message":"no block at height 7 \\"x\\""}');
    expect(JSON.parse(connectErrorJson(new ConnectError('', Code.Internal)).body)).toEqual({ code: 'internal', message: '' });
  });

  it('writes details as type and unpadded base64 value', () => {
    const err = new ConnectError('bad', Code.InvalidArgument, undefined, [{ desc: GetMetadataRequestSchema, value: { key: 'k' } }]);
    // As an error parsed from the wire carries it.
    err.details.push({ type: 'x.Y', value: new Uint8Array([1]), debug: { a: 1 } });
    const body = JSON.parse(connectErrorJson(err).body) as { details: unknown[] };
    expect(body.details).toEqual([
      { type: 'node.v1.GetMetadataRequest', value: 'CgFr' },
      { type: 'x.Y', value: 'AQ', debug: { a: 1 } },
    ]);
  });

  it('answers a parse failure as a 400 body', () => {
    const err = connectErrorOf(() => parseSpecJsonRequest(GetBlockRequestSchema, '{"height":-1}'));
    expect(connectErrorJson(err)).toEqual({
      status: 400,
      body: '{"code":"invalid_argument","message":"height must be a non-negative integer, got -1"}',
    });
  });
});
