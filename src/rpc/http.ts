import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

/** A request body larger than a route reads; `size` when the client announced it (Content-Length). */
export class BodyTooLargeError extends Error {
  constructor(limit: number, size?: number) {
    super(`request body ${size === undefined ? '' : `of ${size} bytes `}exceeds the limit of ${limit} bytes`);
  }
}

/** The client went away (closed or reset its connection or stream) before its request body was all sent. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected before sending its whole request');
  }
}

/**
 * Reads a request body up to `limit` bytes. Past the limit it keeps draining
 * (so the client sees the answer rather than a reset connection; request_timeout
 * bounds how long) and rejects.
 */
export function readBody(req: IncomingMessage | Http2ServerRequest, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    let ended = false;
    req.on('end', () => {
      ended = true;
      if (size > limit) reject(new BodyTooLargeError(limit));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    // Every request closes once answered: only one that closes before its body ended lost its client. The check
    // keeps an Error (and its stack trace) from being built for each request that went well.
    const gone = () => {
      if (!ended) reject(new ClientGoneError());
    };
    req.on('error', gone);
    req.on('close', gone);
  });
}
