import { create, type DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { decodeStoredBlock } from '../store/index.js';
import {
  ConfigService,
  GetBlockResponseSchema,
  GetGenesisDaHeightResponseSchema,
  GetMetadataResponseSchema,
  GetNamespaceResponseSchema,
  GetSignerInfoResponseSchema,
  GetStateResponseSchema,
  P2PService,
  StoreService,
  type GetBlockRequest,
} from '../types/index.js';
import type { RpcBackend } from './backend.js';
import { p2pService } from './p2p-service.js';
import { getBlockSelector } from './json.js';

const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');

export function storeService(b: RpcBackend): ServiceImpl<typeof StoreService> {
  return {
    async getBlock(req: GetBlockRequest) {
      const latest = b.store.height();
      const selector = getBlockSelector(req);
      let height: bigint;
      if (selector.kind === 'hash') {
        const found = await b.store.getHeightByHash(selector.hash);
        if (found === null) throw new ConnectError(`no block with hash ${hexOf(selector.hash)}`, Code.NotFound);
        height = found;
      } else {
        height = selector.height || latest;
      }
      const stored = height > 0n ? await b.store.getBlock(height) : null;
      if (!stored) {
        throw new ConnectError(latest === 0n ? 'no blocks yet' : `no block at height ${height} (latest is ${latest})`, Code.NotFound);
      }
      return create(GetBlockResponseSchema, {
        block: decodeStoredBlock(stored),
        headerDaHeight: stored.headerDaHeight,
        dataDaHeight: stored.dataDaHeight,
      });
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
  };
}

export function configService(b: RpcBackend): ServiceImpl<typeof ConfigService> {
  return {
    async getNamespace() {
      return create(GetNamespaceResponseSchema, { headerNamespace: b.namespaces.header, dataNamespace: b.namespaces.data });
    },
    async getSignerInfo() {
      return create(GetSignerInfoResponseSchema, { publicKey: b.signer.publicKey, address: b.signer.address });
    },
  };
}

export interface UnaryRoute {
  input: DescMessage;
  output: DescMessage;
  call: (req: never) => Promise<unknown>;
}

/** Unary methods of the served services by URL path (`/node.v1.StoreService/GetBlock`). */
export function unaryRoutes(b: RpcBackend): Map<string, UnaryRoute> {
  const routes = new Map<string, UnaryRoute>();
  const add = (service: typeof StoreService | typeof ConfigService | typeof P2PService, impl: Record<string, (req: never) => Promise<unknown>>) => {
    for (const method of service.methods) {
      if (method.methodKind !== 'unary') continue;
      routes.set(`/${service.typeName}/${method.name}`, {
        input: method.input,
        output: method.output,
        call: impl[method.localName]!.bind(impl),
      });
    }
  };
  add(StoreService, storeService(b) as never);
  add(ConfigService, configService(b) as never);
  add(P2PService, p2pService(b) as never);
  return routes;
}
