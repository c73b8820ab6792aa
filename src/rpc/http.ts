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
    req.on('end', () => (size > limit ? reject(new BodyTooLargeError(limit)) : resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))));
    // Settled already when the body ended; otherwise the client is gone.
    req.on('error', () => reject(new ClientGoneError()));
    req.on('close', () => reject(new ClientGoneError()));
  });
}
