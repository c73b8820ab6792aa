import { genesisMismatchRemedy, type Genesis } from '../home/index.js';
import type { Logger } from '../log/index.js';
import { GenesisMismatchError, headerHash, signedHeaderProblem, type Header, type SignedHeader } from '../types/index.js';

export type HeardFrom = 'p2p' | 'da';

/** The first block of another genesis this node heard: what differs and where it came from. */
export interface GenesisMismatch {
  differences: string;
  from: HeardFrom;
  /** Wall-clock ms it was heard. */
  at: number;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

/**
 * How a header differs from `genesis` as genesis.json writes it, or null when
 * it could be this genesis's chain. A header carries its chain id and
 * proposer; the initial height shows only as a height below it.
 */
export function genesisDifferences(genesis: Genesis, header: Header): string | null {
  const out: string[] = [];
  if (header.chainId !== genesis.chainId)
    out.push(`chain id: this home's genesis says ${JSON.stringify(genesis.chainId)}, the chain's blocks say ${JSON.stringify(header.chainId)}`);
  if (header.proposerAddress.length > 0 && Buffer.compare(header.proposerAddress, genesis.proposerAddress) !== 0) {
    out.push(`proposer address: this home's genesis says ${b64(genesis.proposerAddress)}, the chain's blocks are signed by ${b64(header.proposerAddress)}`);
  }
  if (header.height >= 1n && header.height < genesis.initialHeight) {
    out.push(`initial height: this home's genesis says ${genesis.initialHeight}, the chain has block ${header.height}`);
  }
  return out.length > 0 ? out.join('; ') : null;
}

/** Foreign headers remembered to find two that link (enough for a few block times of gossip, DA and catch-up). */
const REMEMBERED_HEADERS = 256;

/**
 * Compares every header heard from peers and DA with this home's genesis. A
 * node started with another chain's genesis (its own `noded init` rather than
 * the aggregator's genesis.json) would otherwise reject every block, one
 * warning each, forever: the guard logs the mismatch once, with what differs
 * and the remedy, and readiness reports it.
 *
 * One block of another proposer is no proof: anyone can sign one, and it must
 * stay a rejected forgery, logged as such. A chain is: two consecutive
 * headers, each validly signed by that proposer, the second linking to the
 * first (last_header_hash). From then on such headers are rejected without a
 * line of their own.
 */
export class GenesisGuard {
  private first: GenesisMismatch | null = null;
  /** Hex header hash of validly signed foreign headers, by `<proposer hex>/<height>`. */
  private readonly foreign = new Map<string, string>();

  constructor(
    private readonly genesis: Genesis,
    /** config/genesis.json of this home, for the remedy. */
    private readonly genesisFile: string,
    private readonly logger: Logger,
  ) {}

  /** The first mismatch heard, or null. */
  get mismatch(): GenesisMismatch | null {
    return this.first;
  }

  /**
   * Throws GenesisMismatchError when `signed` belongs to a chain of another
   * genesis (logged the first time only); returns when it may be this
   * chain's, or a forgery the caller's own checks reject and log.
   */
  check(signed: SignedHeader, from: HeardFrom): void {
    const header = signed.header;
    if (!header) return;
    const differences = genesisDifferences(this.genesis, header);
    if (!differences) return;
    if (!this.first) {
      if (!this.linksToForeignChain(signed)) return;
      this.first = { differences, from, at: Date.now() };
      this.logger.error(
        { code: 'GENESIS_MISMATCH', from, height: Number(header.height), differences, remedy: genesisMismatchRemedy(this.genesisFile) },
        `this home's genesis is not the chain's: ${differences}`,
      );
    }
    throw new GenesisMismatchError(header.height, differences);
  }

  /** Remembers a validly signed foreign header; true when the one before it, by the same proposer, is its last_header_hash. */
  private linksToForeignChain(signed: SignedHeader): boolean {
    const header = signed.header!;
    if (signedHeaderProblem(signed, header.proposerAddress)) return false;
    const proposer = Buffer.from(header.proposerAddress).toString('hex');
    const key = (height: bigint) => `${proposer}/${height}`;
    this.foreign.set(key(header.height), Buffer.from(headerHash(header)).toString('hex'));
    if (this.foreign.size > REMEMBERED_HEADERS) this.foreign.delete(this.foreign.keys().next().value!);
    return this.foreign.get(key(header.height - 1n)) === Buffer.from(header.lastHeaderHash).toString('hex');
  }
}
