import type { Stream } from '@libp2p/interface';

/**
 * Wire framing of the node's request/response protocols. No .proto: the
 * messages are tiny and fixed, and blocks travel as their node.v1.Block
 * protobuf bytes.
 *
 * `/node/<chain_id>/blocks/1.0.0` — height ranges for catch-up
 *   request  (client → server, then the client closes its write side):
 *            0x01 ‖ from:u64be ‖ to:u64be                 (17 bytes; `to` inclusive)
 *   response (server → client), frames until the server closes:
 *            kind:u8 ‖ length:u32be ‖ payload
 *            kind 0x01 BLOCK  payload = Block protobuf, heights ascending from `from`, no gaps
 *            kind 0x02 END    payload empty; fewer blocks than asked means the
 *                             server has no more, or hit its caps (count, bytes)
 *            kind 0x03 ERROR  payload = UTF-8 message (bad request)
 *   A response that ends without END or ERROR was cut off.
 *
 * `/node/<chain_id>/head/1.0.0` — a peer's head
 *   request  nothing (the client closes its write side)
 *   response head:u64be (8 bytes; 0 = no blocks yet)
 */

export const REQUEST_RANGE = 0x01;
export const FRAME_BLOCK = 0x01;
export const FRAME_END = 0x02;
export const FRAME_ERROR = 0x03;
export const RANGE_REQUEST_BYTES = 17;
export const FRAME_HEADER_BYTES = 5;

export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export function encodeRangeRequest(from: bigint, to: bigint): Uint8Array {
  const out = new Uint8Array(RANGE_REQUEST_BYTES);
  const view = new DataView(out.buffer);
  out[0] = REQUEST_RANGE;
  view.setBigUint64(1, from);
  view.setBigUint64(9, to);
  return out;
}

export function decodeRangeRequest(bytes: Uint8Array): { from: bigint; to: bigint } {
  if (bytes.length !== RANGE_REQUEST_BYTES || bytes[0] !== REQUEST_RANGE) {
    throw new ProtocolError(`a range request is ${RANGE_REQUEST_BYTES} bytes starting with 0x01, got ${bytes.length} bytes`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { from: view.getBigUint64(1), to: view.getBigUint64(9) };
}

export function encodeFrame(kind: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  out[0] = kind;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

export function encodeU64(value: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value);
  return out;
}

export function decodeU64(bytes: Uint8Array): bigint {
  if (bytes.length !== 8) throw new ProtocolError(`expected 8 bytes, got ${bytes.length}`);
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0);
}

/** What a stream yields: Uint8Array or a Uint8ArrayList (which has subarray() too). */
type Chunk = { subarray(): Uint8Array };

/** Reads exact byte counts from a stream's async iterator. */
export class ByteReader {
  private readonly iterator: AsyncIterator<Chunk>;
  private buffered: Uint8Array[] = [];
  private bufferedBytes = 0;
  private done = false;

  constructor(source: AsyncIterable<Chunk>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** Fills the buffer to `n` bytes; false when the stream ended first. */
  private async fill(n: number): Promise<boolean> {
    while (this.bufferedBytes < n && !this.done) {
      const next = await this.iterator.next();
      if (next.done) {
        this.done = true;
        break;
      }
      const bytes = next.value.subarray();
      if (bytes.length === 0) continue;
      this.buffered.push(bytes);
      this.bufferedBytes += bytes.length;
    }
    return this.bufferedBytes >= n;
  }

  private take(n: number): Uint8Array {
    const joined = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const out = joined.slice(0, n);
    const rest = joined.subarray(n);
    this.buffered = rest.length ? [rest] : [];
    this.bufferedBytes = rest.length;
    return out;
  }

  /** Exactly `n` bytes, or null when the stream ended cleanly before any of them; throws when it ends midway. */
  async read(n: number): Promise<Uint8Array | null> {
    if (n === 0) return new Uint8Array(0);
    if (!(await this.fill(n))) {
      if (this.bufferedBytes === 0) return null;
      throw new ProtocolError(`stream ended after ${this.bufferedBytes} of ${n} bytes`);
    }
    return this.take(n);
  }

  /** Everything up to the end of the stream, at most `max` bytes. */
  async readAll(max: number): Promise<Uint8Array> {
    await this.fill(max + 1);
    if (this.bufferedBytes > max) throw new ProtocolError(`more than ${max} bytes`);
    return this.take(this.bufferedBytes);
  }

  /** The next frame, or null at a clean end of stream. */
  async readFrame(maxPayload: number): Promise<{ kind: number; payload: Uint8Array } | null> {
    const header = await this.read(FRAME_HEADER_BYTES);
    if (!header) return null;
    const length = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(1);
    if (length > maxPayload) throw new ProtocolError(`frame of ${length} bytes exceeds the ${maxPayload}-byte limit`);
    const payload = await this.read(length);
    if (!payload) throw new ProtocolError('stream ended inside a frame');
    return { kind: header[0]!, payload };
  }
}

/** Sends bytes, waiting for the stream to drain when its buffer is full. */
export async function send(stream: Stream, bytes: Uint8Array, signal?: AbortSignal): Promise<void> {
  if (!stream.send(bytes)) await stream.onDrain({ signal });
}
