/**
 * ABCI socket framing, as CometBFT 0.38 writes it (libs/protoio): each message
 * is its protobuf bytes after their length as an unsigned varint (not the signed
 * zigzag varint of Tendermint 0.33 and before).
 */

/** Largest message either side accepts, as CometBFT's reader (100 MB). */
export const MAX_FRAME_BYTES = 104_857_600;
/** A uvarint of a 64-bit value takes at most 10 bytes. */
const MAX_VARINT_BYTES = 10;

/** The stream is not ABCI framing: the connection cannot go on after it. */
export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FrameError';
  }
}

/** `body` after its length as an unsigned varint. */
export function encodeFrame(body: Uint8Array): Buffer {
  const prefix: number[] = [];
  let n = body.length;
  while (n >= 0x80) {
    prefix.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  prefix.push(n);
  const out = Buffer.allocUnsafe(prefix.length + body.length);
  out.set(prefix, 0);
  out.set(body, prefix.length);
  return out;
}

/** Splits a byte stream into message bodies; chunks may cut frames anywhere. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Adds a chunk and returns the bodies it completes; throws FrameError on a bad length prefix. */
  push(chunk: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const bodies: Buffer[] = [];
    let at = 0;
    for (;;) {
      const prefix = this.readLength(at);
      if (!prefix) break;
      const start = at + prefix.bytes;
      if (this.buffered.length < start + prefix.length) break;
      bodies.push(this.buffered.subarray(start, start + prefix.length));
      at = start + prefix.length;
    }
    this.buffered = this.buffered.subarray(at);
    return bodies;
  }

  /** The length prefix at `at`, or null while it is incomplete. */
  private readLength(at: number): { length: number; bytes: number } | null {
    let length = 0;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      if (at + i >= this.buffered.length) return null;
      const byte = this.buffered[at + i]!;
      length += (byte & 0x7f) * 2 ** (7 * i);
      if (byte < 0x80) {
        if (length > this.maxFrameBytes) {
          throw new FrameError(`bad length prefix: a message of ${length} bytes, above the ${this.maxFrameBytes}-byte limit`);
        }
        return { length, bytes: i + 1 };
      }
    }
    throw new FrameError(`bad length prefix: a varint longer than ${MAX_VARINT_BYTES} bytes`);
  }
}
