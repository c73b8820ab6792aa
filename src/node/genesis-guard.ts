import type { Genesis } from '../home/index.js';
import type { Logger } from '../log/index.js';
import { GenesisMismatchError, type Header } from '../types/index.js';

export type HeardFrom = 'p2p' | 'da';

/** The first block of another genesis this node heard: what differs and where it came from. */
export interface GenesisMismatch {
  differences: string;
  from: HeardFrom;
  /** Wall-clock ms it was heard. */
  at: number;
}

/** What to do about it; `noded init --join` makes a new home, so it names a directory of its own. */
export function genesisMismatchRemedy(genesisFile: string): string {
  return `copy the aggregator's config/genesis.json to ${genesisFile} and restart the node, or make a new home from the aggregator's RPC: \`noded init --join http://<aggregator host>:7331 --home <new dir>\``;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

/**
 * How a header differs from `genesis` as genesis.json writes it, or null when
 * it could be this genesis's chain. A header carries its chain id and
 * proposer; the initial height shows only as a height below it.
 */
export function genesisDifferences(genesis: Genesis, header: Header): string | null {
  const out: string[] = [];
  if (header.chainId !== genesis.chainId) out.push(`chain id: this home's genesis says ${JSON.stringify(genesis.chainId)}, the chain's blocks say ${JSON.stringify(header.chainId)}`);
  if (header.proposerAddress.length > 0 && Buffer.compare(header.proposerAddress, genesis.proposerAddress) !== 0) {
    out.push(`proposer address: this home's genesis says ${b64(genesis.proposerAddress)}, the chain's blocks are signed by ${b64(header.proposerAddress)}`);
  }
  if (header.height >= 1n && header.height < genesis.initialHeight) {
    out.push(`initial height: this home's genesis says ${genesis.initialHeight}, the chain has block ${header.height}`);
  }
  return out.length > 0 ? out.join('; ') : null;
}

/**
 * Compares every header heard from peers and DA with this home's genesis. A
 * node started with another chain's genesis (its own `noded init` rather than
 * the aggregator's genesis.json) would otherwise reject every block, one
 * warning each, forever: the guard logs the first mismatch once, with what
 * differs and the remedy, and readiness reports it.
 */
export class GenesisGuard {
  private first: GenesisMismatch | null = null;

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

  /** Throws GenesisMismatchError when `header` is not of this genesis's chain (logged the first time only). */
  check(header: Header, from: HeardFrom): void {
    const differences = genesisDifferences(this.genesis, header);
    if (!differences) return;
    if (!this.first) {
      this.first = { differences, from, at: Date.now() };
      this.logger.error(
        { code: 'GENESIS_MISMATCH', from, height: Number(header.height), differences, remedy: genesisMismatchRemedy(this.genesisFile) },
        `this home's genesis is not the chain's: ${differences}`,
      );
    }
    throw new GenesisMismatchError(header.height, differences);
  }
}
