import { Request, Response } from 'cosmjs-types/tendermint/abci/types';
import type { DeepPartial } from 'cosmjs-types/helpers';

/**
 * ABCI 2.0 (CometBFT 0.38) messages: one `Request` or `Response` oneof per frame,
 * codecs from cosmjs-types. Each method's request and response share the oneof
 * field's name (`finalizeBlock`, `checkTx`, …); a response may also be `exception`.
 */
export type Method = keyof Request;
export type RequestOf<M extends Method> = NonNullable<Request[M]>;
export type ResponseOf<M extends Method> = NonNullable<Response[M & keyof Response]>;

/** The method names as CometBFT spells them, for messages. */
export const methodName = (method: Method | 'exception'): string => method[0]!.toUpperCase() + method.slice(1);

export function encodeRequest<M extends Method>(method: M, body: DeepPartial<RequestOf<M>>): Uint8Array {
  return Request.encode(Request.fromPartial({ [method]: body } as DeepPartial<Request>)).finish();
}

export function decodeRequest(bytes: Uint8Array): Request {
  return Request.decode(bytes);
}

export function encodeResponse<M extends Method | 'exception'>(method: M, body: DeepPartial<NonNullable<Response[M]>>): Uint8Array {
  return Response.encode(Response.fromPartial({ [method]: body } as DeepPartial<Response>)).finish();
}

export function decodeResponse(bytes: Uint8Array): Response {
  return Response.decode(bytes);
}

/** The oneof field a message sets, or undefined when it sets none that this version knows. */
export function setField<T extends object>(message: T): keyof T | undefined {
  for (const key of Object.keys(message) as Array<keyof T>) if (message[key] !== undefined) return key;
  return undefined;
}

/** Unix nanoseconds → google.protobuf.Timestamp. */
export const timestampOf = (nanos: bigint) => ({ seconds: nanos / 1_000_000_000n, nanos: Number(nanos % 1_000_000_000n) });
