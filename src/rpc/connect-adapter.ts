import type { IncomingMessage, ServerResponse } from 'node:http';
import { Code, createConnectRouter, type ConnectRouter, type ConnectRouterOptions } from '@connectrpc/connect';
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';
import type { Logger } from '../log/index.js';

/** The trailer fields of a gRPC status (grpc/doc/PROTOCOL-HTTP2.md). */
const GRPC_STATUS = 'grpc-status';
const GRPC_MESSAGE = 'grpc-message';

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
  if (decodeURIComponent(trailer.get(GRPC_MESSAGE) ?? '').startsWith('parse binary:')) trailer.set(GRPC_STATUS, String(Code.InvalidArgument));
}

/**
 * connect-node's connectNodeAdapter (connect-node-adapter.js) with two changes:
 * a malformed request message is INVALID_ARGUMENT, and a failed handler is
 * logged through the node's logger instead of console.error.
 */
export function connectAdapter(options: ConnectRouterOptions & { routes: (router: ConnectRouter) => void }, logger: Logger) {
  const router = createConnectRouter({ acceptCompression: [compressionGzip, compressionBrotli], ...options });
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
      .then((uRes) => {
        malformedIsInvalidArgument(uRes);
        return universalResponseToNodeResponse(uRes, res);
      })
      .catch((err: Error) => {
        // A client that went away mid-call is no failure of the node's.
        if (req.destroyed || res.destroyed) return logger.debug({ code: 'RPC_CLIENT_GONE', url: req.url }, `client went away during ${handler.method.name}`);
        logger.error({ code: 'RPC_REQUEST_FAILED', err, url: req.url }, `handler for ${handler.service.typeName}/${handler.method.name} failed`);
      });
  };
}
