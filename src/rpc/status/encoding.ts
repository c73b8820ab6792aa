import type { Event, ExecTxResult } from 'cosmjs-types/tendermint/abci/types';
import { commitHash, type Block, type Header } from '../../types/index.js';

/**
 * CometBFT's JSON encodings (libs/json): 64-bit integers as strings, HexBytes
 * upper-case hex, []byte base64, times RFC 3339 with nanoseconds in UTC.
 */
export const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
export const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

/** Unix nanoseconds → RFC 3339 with nanoseconds, as CometBFT writes times. */
export function rfc3339Nano(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString();
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${iso.slice(0, 19)}.${frac}Z`;
}

/** A block as the status server serves it: decoded, with its header hash. */
export interface HashedBlock {
  block: Block;
  hash: Uint8Array;
}

/**
 * A BlockID (types/block.go). A rollup block is not cut into parts: the part
 * set header says one part, hashed as the block, so clients that want a
 * non-empty one (CosmJS) read it.
 */
export const blockId = (hash: Uint8Array) => ({ hash: hex(hash), parts: { total: 1, hash: hex(hash) } });
/** The BlockID CometBFT writes where there is none (before the first block). */
export const NO_BLOCK_ID = { hash: '', parts: { total: 0, hash: '' } };

/** sha256 of nothing: CometBFT's evidence_hash of a block without evidence (merkle.HashFromByteSlices of an empty list). */
const EMPTY_EVIDENCE_HASH = 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855';

/**
 * A header in CometBFT's layout (types/block.go, Header). `previous` is the
 * block before it, whose signature is this one's last commit. consensus_hash
 * and last_results_hash are empty: ev-node headers no longer carry them
 * (evnode.proto reserves those fields).
 */
export function headerJson(header: Header, previous: HashedBlock | null) {
  return {
    version: { block: (header.version?.block ?? 0n).toString(), app: (header.version?.app ?? 0n).toString() },
    chain_id: header.chainId,
    height: header.height.toString(),
    time: rfc3339Nano(header.time),
    last_block_id: header.lastHeaderHash.length > 0 ? blockId(header.lastHeaderHash) : NO_BLOCK_ID,
    last_commit_hash: previous ? hex(commitHash(previous.block.header!.signature)) : '',
    data_hash: hex(header.dataHash),
    // One validator set, the proposer, at every height: the next one is the same.
    validators_hash: hex(header.validatorHash),
    next_validators_hash: hex(header.validatorHash),
    consensus_hash: '',
    app_hash: hex(header.appHash),
    last_results_hash: '',
    evidence_hash: EMPTY_EVIDENCE_HASH,
    proposer_address: hex(header.proposerAddress),
  };
}

/** BlockIDFlagCommit (types/block.go): the validator signed this block. */
const BLOCK_ID_FLAG_COMMIT = 2;

/**
 * The commit of a block (types/block.go, Commit): the rollup's one signature,
 * the aggregator's over the header's bytes (not over a CometBFT vote), timed
 * at the block's time, in round 0.
 */
export function commitJson({ block, hash }: HashedBlock) {
  const signed = block.header!;
  const header = signed.header!;
  return {
    height: header.height.toString(),
    round: 0,
    block_id: blockId(hash),
    signatures: [
      {
        block_id_flag: BLOCK_ID_FLAG_COMMIT,
        validator_address: hex(header.proposerAddress),
        timestamp: rfc3339Nano(header.time),
        signature: b64(signed.signature),
      },
    ],
  };
}

/** The last_commit CometBFT writes in a chain's first block: none. */
export const NO_COMMIT = { height: '0', round: 0, block_id: NO_BLOCK_ID, signatures: [] };

const isZero = (v: unknown) =>
  v === undefined || v === null || v === 0 || v === 0n || v === '' || v === false || ((Array.isArray(v) || v instanceof Uint8Array) && v.length === 0);

/**
 * An ABCI message as CometBFT writes it: fields at their zero value left out
 * (gogoproto's `json:",omitempty"` tags, libs/json encodeReflectStruct), then
 * 64-bit integers (bigint) as strings and bytes as base64.
 */
export function omitEmpty(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, v]) => !isZero(v))
      .map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? b64(v) : v]),
  );
}

export function eventsJson(events: Event[]) {
  return events.map((e) => omitEmpty({ type: e.type, attributes: e.attributes.map((a) => omitEmpty({ key: a.key, value: a.value, index: a.index })) }));
}

/**
 * An ExecTxResult or ResponseCheckTx (the same first eight fields) as
 * CometBFT writes it: zero fields left out, gas as strings, data base64.
 */
export function txResultJson(r: Pick<ExecTxResult, 'code' | 'data' | 'log' | 'info' | 'gasWanted' | 'gasUsed' | 'events' | 'codespace'>) {
  return omitEmpty({
    code: r.code,
    data: r.data,
    log: r.log,
    info: r.info,
    gas_wanted: r.gasWanted,
    gas_used: r.gasUsed,
    events: eventsJson(r.events),
    codespace: r.codespace,
  });
}
