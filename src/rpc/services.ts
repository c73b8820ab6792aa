import { create, type DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { decodeStoredBlock } from '../store/index.js';
import {
  ConfigService,
  GetBlockResponseSchema,
  GetGenesisDaHeightResponseSchema,
  GetMetadataResponseSchema,
  GetNamespaceResponseSchema,
  GetP2PStoreInfoResponseSchema,
  GetSignerInfoResponseSchema,
  GetStateResponseSchema,
  P2PService,
  P2PStoreEntrySchema,
  P2PStoreSnapshotSchema,
  StoreService,
  encodedDataHash,
  headerHash,
  splitEncodedBlock,
  timestampFromNanos,
  type GetBlockRequest,
  type GetBlockResponse,
  type P2PStoreEntry,
  type P2PStoreSnapshot,
} from '../types/index.js';
import type { BlockReads, RpcBackend } from './backend.js';
import { p2pService } from './p2p-service.js';
import type { BlockJsonCache } from './block-json-cache.js';
import { getBlockSelector, parseSpecJsonRequest, writeSpecJson } from './json.js';
import { ParsedRequests } from './parsed-requests.js';

const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** The height a GetBlock request names (0 = latest); not_found for an unknown hash. */
async function requestedHeight(store: BlockReads, req: GetBlockRequest): Promise<bigint> {
  const selector = getBlockSelector(req);
  if (selector.kind === 'height') return selector.height || store.height();
  const found = await store.getHeightByHash(selector.hash);
  if (found === null) throw new ConnectError(`no block with hash ${hexOf(selector.hash)}`, Code.NotFound);
  return found;
}

async function getBlockResponse(store: BlockReads, height: bigint): Promise<GetBlockResponse> {
  const stored = height > 0n ? await store.getBlock(height) : null;
  if (!stored) {
    const latest = store.height();
    throw new ConnectError(latest === 0n ? 'no blocks yet' : `no block at height ${height} (latest is ${latest})`, Code.NotFound);
  }
  return create(GetBlockResponseSchema, {
    block: decodeStoredBlock(stored),
    headerDaHeight: stored.headerDaHeight,
    dataDaHeight: stored.dataDaHeight,
  });
}

/** GetBlock's JSON answer: from the cache, or written once and kept. */
export async function getBlockJson(store: BlockReads, cache: BlockJsonCache, req: GetBlockRequest): Promise<Uint8Array> {
  const height = await requestedHeight(store, req);
  const cached = cache.get(height);
  if (cached) return cached;
  const readStamp = cache.readStamp();
  const json = Buffer.from(writeSpecJson(GetBlockResponseSchema, await getBlockResponse(store, height)));
  cache.set(height, json, readStamp);
  return json;
}

/**
 * GetP2PStoreInfo's snapshots. ev-node answers from the go-header stores its P2P
 * sync keeps (pkg/rpc/server/server.go, collectP2PStoreSnapshot): "Header Store"
 * and "Data Store", each with its height and its head and tail entries (height,
 * hash, time; none while empty). This node serves peers from its block store,
 * so both come from there: the head is the latest block, the tail the first
 * (initial height); the header store's hash is the header hash, the data
 * store's the data hash (ev-node's Data.Hash, types/hashing.go).
 */
async function p2pStoreSnapshots(b: RpcBackend): Promise<P2PStoreSnapshot[]> {
  const height = b.store.height();
  const initialHeight = b.state().initialHeight;
  const [head, tail] = height > 0n ? await Promise.all([b.store.getBlock(height), b.store.getBlock(initialHeight > 0n ? initialHeight : 1n)]) : [null, null];
  const entries = (stored: typeof head): { header?: P2PStoreEntry; data?: P2PStoreEntry } => {
    if (!stored) return {};
    const block = decodeStoredBlock(stored);
    const header = block.header!.header!;
    const time = timestampFromNanos(header.time);
    return {
      header: create(P2PStoreEntrySchema, { height: header.height, hash: headerHash(header), time }),
      data: create(P2PStoreEntrySchema, { height: header.height, hash: encodedDataHash(splitEncodedBlock(stored.bytes).data), time }),
    };
  };
  const [headEntries, tailEntries] = [entries(head), entries(tail)];
  return [
    create(P2PStoreSnapshotSchema, { label: 'Header Store', height, head: headEntries.header, tail: tailEntries.header }),
    create(P2PStoreSnapshotSchema, { label: 'Data Store', height, head: headEntries.data, tail: tailEntries.data }),
  ];
}

export function storeService(b: RpcBackend): ServiceImpl<typeof StoreService> {
  return {
    async getBlock(req: GetBlockRequest) {
      return getBlockResponse(b.store, await requestedHeight(b.store, req));
    },
    async getState() {
      return create(GetStateResponseSchema, { state: b.state() });
    },
    async getMetadata(req) {
      if (!req.key) throw new ConnectError('key is required', Code.InvalidArgument);
      const value = await b.store.getMetadata(req.key);
      if (!value) throw new ConnectError(`no metadata under key ${JSON.stringify(req.key)}`, Code.NotFound);
      return create(GetMetadataResponseSchema, { value });
    },
    async getGenesisDaHeight() {
      return create(GetGenesisDaHeightResponseSchema, { height: b.genesisDaHeight });
    },
    async getP2PStoreInfo() {
      return create(GetP2PStoreInfoResponseSchema, { stores: await p2pStoreSnapshots(b) });
    },
  };
}

export function configService(b: RpcBackend): ServiceImpl<typeof ConfigService> {
  return {
    async getNamespace() {
      // 0x-prefixed hex, as ev-node's Namespace.HexString writes them (pkg/da/types/namespace.go).
      return create(GetNamespaceResponseSchema, { headerNamespace: `0x${b.namespaces.header}`, dataNamespace: `0x${b.namespaces.data}` });
    },
    async getSignerInfo() {
      // ev-node answers the proposer address only (pkg/rpc/server/server.go, GetSignerInfo).
      return create(GetSignerInfoResponseSchema, { address: b.signer.address });
    },
  };
}

type Call<T> = (req: never) => Promise<T>;

export interface UnaryRoute {
  output: DescMessage;
  /** Reads a JSON request body (parseSpecJsonRequest), the same body's message shared: call() and json() only read their request. */
  parseJson: ParsedRequests<unknown>;
  call: Call<unknown>;
  /** The JSON answer's bytes, for a method with a quicker way to them than writing call()'s message. */
  json?: Call<Uint8Array>;
}

/** Unary methods of the served services by URL path (`/node.v1.StoreService/GetBlock`). */
export function unaryRoutes(b: RpcBackend, blockJson: BlockJsonCache): Map<string, UnaryRoute> {
  const routes = new Map<string, UnaryRoute>();
  const add = (
    service: typeof StoreService | typeof ConfigService | typeof P2PService,
    impl: Record<string, Call<unknown>>,
    jsonImpl: Record<string, Call<Uint8Array>> = {},
  ) => {
    for (const method of service.methods) {
      if (method.methodKind !== 'unary') continue;
      routes.set(`/${service.typeName}/${method.name}`, {
        output: method.output,
        parseJson: new ParsedRequests((body) => parseSpecJsonRequest(method.input, body)),
        call: impl[method.localName]!.bind(impl),
        json: jsonImpl[method.localName],
      });
    }
  };
  add(StoreService, storeService(b) as never, { getBlock: (req: GetBlockRequest) => getBlockJson(b.store, blockJson, req) });
  add(ConfigService, configService(b) as never);
  add(P2PService, p2pService(b) as never);
  return routes;
}
