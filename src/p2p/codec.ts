import type { Stream } from '@libp2p/interface';
import { byteStream, UnexpectedEOFError, type ByteStream } from '@libp2p/utils';

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

/** A catch-up stream read in exact byte counts and written with backpressure, through @libp2p/utils' byteStream. */
export type FrameStream = ByteStream<Stream>;

/** `stream` as a FrameStream that buffers at most `maxBufferBytes` unread (it aborts the stream past that). */
export const frameStream = (stream: Stream, maxBufferBytes: number): FrameStream => byteStream(stream, { maxBufferSize: maxBufferBytes });

/** Exactly `n` bytes; a ProtocolError saying `ended` when the stream ends first. */
export async function readExactly(stream: FrameStream, n: number, ended: string, signal?: AbortSignal): Promise<Uint8Array> {
  try {
    return (await stream.read({ bytes: n, signal })).subarray();
  } catch (err) {
    if (err instanceof UnexpectedEOFError) throw new ProtocolError(ended);
    throw err;
  }
}

/** The next frame; a ProtocolError saying `ended` when the stream ends before one, or when it ends inside one. */
export async function readFrame(stream: FrameStream, maxPayload: number, ended: string, signal?: AbortSignal): Promise<{ kind: number; payload: Uint8Array }> {
  const header = await readExactly(stream, FRAME_HEADER_BYTES, ended, signal);
  const length = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(1);
  if (length > maxPayload) throw new ProtocolError(`frame of ${length} bytes exceeds the ${maxPayload}-byte limit`);
  const payload = await readExactly(stream, length, 'stream ended inside a frame', signal);
  return { kind: header[0]!, payload };
}
