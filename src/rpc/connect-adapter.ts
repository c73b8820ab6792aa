import type { IncomingMessage, ServerResponse } from 'node:http';
import { Code, ConnectError, createConnectRouter, type ConnectRouter, type ConnectRouterOptions } from '@connectrpc/connect';
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import { createAsyncIterable, readAllBytes, type UniversalServerResponse } from '@connectrpc/connect/protocol';
import { contentTypeUnaryJson, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import type { Logger } from '../log/index.js';

/** The trailer fields of a gRPC status (grpc/doc/PROTOCOL-HTTP2.md). */
const GRPC_STATUS = 'grpc-status';
const GRPC_MESSAGE = 'grpc-message';
/** connect-es's message for a request that does not decode (protocol/serialization.js). */
const MALFORMED = 'parse binary:';

/**
 * A request message that does not decode is the client's fault: ev-node's
 * server, connect-go, answers INVALID_ARGUMENT (envelope.go,
 * envelopeReader.Unmarshal: "unmarshal into %T"); connect-es reports it as INTERNAL
 * (protocol/serialization.js, createBinarySerialization). A unary method
 * decodes its one request before answering, so its trailer already says so.
 */
function malformedIsInvalidArgument(res: UniversalServerResponse): void {
  const trailer = res.trailer;
  if (trailer?.get(GRPC_STATUS) !== String(Code.Internal)) return;
  if (decodeURIComponent(trailer.get(GRPC_MESSAGE) ?? '').startsWith(MALFORMED)) trailer.set(GRPC_STATUS, String(Code.InvalidArgument));
}

/** The same for Connect unary: its error is the response body, `{"code":"internal","message":"parse binary: …"}` with status 500. */
async function malformedConnectIsInvalidArgument(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  if (res.status !== 500 || res.header?.get('content-type') !== contentTypeUnaryJson || res.header.has('content-encoding') || !res.body) return res;
  const bytes = await readAllBytes(res.body, Infinity);
  const err = JSON.parse(new TextDecoder().decode(bytes)) as { code?: string; message?: string };
  if (err.code !== 'internal' || !err.message?.startsWith(MALFORMED)) return { ...res, body: createAsyncIterable([bytes]) };
  const body = errorToJsonBytes(new ConnectError(err.message, Code.InvalidArgument), {});
  res.header.set('content-length', String(body.byteLength));
  return { ...res, status: 400, body: createAsyncIterable([body]) };
}

/** The request compressions taken, by connect-node and by the JSON path (rpc-server.ts). */
export const ACCEPT_COMPRESSION = [compressionGzip, compressionBrotli];

/**
 * connect-node's connectNodeAdapter (connect-node-adapter.js) with two changes:
 * a malformed request message is INVALID_ARGUMENT (gRPC, gRPC-Web and Connect), and a failed handler is
 * logged through the node's logger instead of console.error.
 */
export function connectAdapter(options: ConnectRouterOptions & { routes: (router: ConnectRouter) => void }, logger: Logger) {
  const router = createConnectRouter({ acceptCompression: ACCEPT_COMPRESSION, ...options });
  options.routes(router);
  const paths = new Map(router.handlers.map((h) => [h.requestPath, h]));
  return (req: IncomingMessage, res: ServerResponse): void => {
    const handler = paths.get((req.url ?? '').split('?', 2)[0]!);
    if (!handler) {
      res.writeHead(404);
      res.end();
      return;
    }
    handler(universalRequestFromNodeRequest(req, res, undefined, undefined))
      .then(async (uRes) => {
        malformedIsInvalidArgument(uRes);
        return universalResponseToNodeResponse(await malformedConnectIsInvalidArgument(uRes), res);
      })
      .catch((err: Error) => {
        // A client that went away mid-call is no failure of the node's.
        if (req.destroyed || res.destroyed) return logger.debug({ code: 'RPC_CLIENT_GONE', url: req.url }, `client went away during ${handler.method.name}`);
        logger.error({ code: 'RPC_REQUEST_FAILED', err, url: req.url }, `handler for ${handler.service.typeName}/${handler.method.name} failed`);
      });
  };
}
