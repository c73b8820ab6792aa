import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/**
 * Reads a request body up to `limit` bytes. Past the limit it keeps draining
 * (so the client sees the answer rather than a reset connection) and rejects.
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
    req.on('error', reject);
  });
}
