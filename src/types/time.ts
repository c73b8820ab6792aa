import { create } from '@bufbuild/protobuf';
import { TimestampSchema, type Timestamp } from '@bufbuild/protobuf/wkt';

const NANOS_PER_SECOND = 1_000_000_000n;

/**
 * A google.protobuf.Timestamp of Unix nanoseconds: ev-node's State keeps
 * last_block_time as one (proto/evnode/v1/state.proto), its headers as uint64 nanoseconds.
 */
export function timestampFromNanos(nanos: bigint): Timestamp {
  return create(TimestampSchema, { seconds: nanos / NANOS_PER_SECOND, nanos: Number(nanos % NANOS_PER_SECOND) });
}

/** Unix nanoseconds of a Timestamp (0 when unset). */
export function nanosOfTimestamp(ts: Timestamp | undefined): bigint {
  return ts ? ts.seconds * NANOS_PER_SECOND + BigInt(ts.nanos) : 0n;
}
