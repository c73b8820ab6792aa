import type { NodeInfo } from '../rpc/index.js';
import { headerHash, type Block } from '../types/index.js';

/** One row of the dashboard's block list. */
export interface BlockSummary {
  height: number;
  /** Header time, Unix ms. */
  time: number;
  txs: number;
  /** Header hash, upper-case hex (as the status endpoint writes hashes). */
  hash: string;
}

/** What `enter` shows of a block. */
export interface BlockDetail extends BlockSummary {
  /** Header fields in the spec's order, as [name, value] pairs. */
  header: Array<[string, string]>;
  signer: string;
  header_da_height: number;
  data_da_height: number;
  /** Each tx as text when it is printable, else as hex. */
  txList: string[];
}

/** One reading of the node: NodeInfo and the latest blocks, newest first. */
export interface NodeSnapshot {
  info: NodeInfo;
  blocks: BlockSummary[];
}

/**
 * Where the dashboard's data comes from: a node over HTTP (`status --watch`)
 * or the node in this process (`start --dashboard`). Both give the same shapes,
 * so one view model and one set of components serve both.
 */
export interface DashboardSource {
  /** What the dashboard reads, in the operator's words: `127.0.0.1:7331`, `this process`. */
  readonly target: string;
  snapshot(): Promise<NodeSnapshot>;
  block(height: number): Promise<BlockDetail>;
}

const NANOS_PER_MS = 1_000_000n;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const PRINTABLE = /^[\x20-\x7e]*$/;

export function summarizeBlock(block: Block): BlockSummary {
  const h = block.header!.header!;
  return { height: Number(h.height), time: Number(h.time / NANOS_PER_MS), txs: block.data?.txs.length ?? 0, hash: hex(headerHash(h)) };
}

export function blockDetail(block: Block, headerDaHeight: bigint, dataDaHeight: bigint): BlockDetail {
  const signed = block.header!;
  const h = signed.header!;
  const text = new TextDecoder();
  return {
    ...summarizeBlock(block),
    header: [
      ['version', `block ${h.version?.block ?? 0n}, app ${h.version?.app ?? 0n}`],
      ['chain_id', h.chainId],
      ['time', `${new Date(Number(h.time / NANOS_PER_MS)).toISOString()} (${h.time} ns)`],
      ['last_header_hash', hex(h.lastHeaderHash)],
      ['data_hash', hex(h.dataHash)],
      ['app_hash', hex(h.appHash)],
      ['proposer_address', hex(h.proposerAddress)],
      ['validator_hash', hex(h.validatorHash)],
    ],
    signer: hex(signed.signer?.address ?? new Uint8Array()),
    header_da_height: Number(headerDaHeight),
    data_da_height: Number(dataDaHeight),
    txList: (block.data?.txs ?? []).map((tx) => {
      const asText = text.decode(tx);
      return PRINTABLE.test(asText) ? asText : `0x${Buffer.from(tx).toString('hex')}`;
    }),
  };
}

/** How many of the latest blocks the dashboard keeps (more than any screen lists). */
export const RECENT_BLOCKS = 60;

/**
 * The latest blocks, kept between readings so each reading fetches only the
 * blocks that are new since the last one.
 */
export class RecentBlocks {
  private blocks: BlockSummary[] = [];

  constructor(private readonly fetch: (height: number) => Promise<BlockSummary | null>) {}

  /** The blocks up to `height`, newest first; fetches the ones not yet held. */
  async upTo(height: number): Promise<BlockSummary[]> {
    // A chain that went backwards (a reset node) invalidates what is held.
    const held = this.blocks.filter((b) => b.height <= height);
    const from = Math.max(held[0]?.height ?? 0, height - RECENT_BLOCKS) + 1;
    const heights: number[] = [];
    for (let h = height; h >= from; h--) heights.push(h);
    const fetched = (await Promise.all(heights.map((h) => this.fetch(h)))).filter((b): b is BlockSummary => b !== null);
    this.blocks = [...fetched, ...held].slice(0, RECENT_BLOCKS);
    return this.blocks;
  }
}
