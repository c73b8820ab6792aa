import type { Logger } from '../log/index.js';
import type { NodeMetrics } from '../metrics/index.js';
import { decodeBlock, type Block, type SignedHeader } from '../types/index.js';
import { sleep, runLoop } from '../util/index.js';
import { CatchUp } from './catchup.js';
import { BlockGossip, proposerHeaderValidator } from './gossip.js';
import { P2PHost, type NetInfo, type PeerInfo, type RedialOptions } from './host.js';
import type { BlockSink } from './sink.js';
import { BlockSync, type EncodedBlockSource } from './sync.js';

export interface P2PNetworkOptions {
  /** The node key's 32-byte ed25519 seed. */
  seed: Uint8Array;
  listen: string;
  peers: readonly string[];
  chainId: string;
  /** Genesis proposer address: gossip from anyone else's key is rejected. */
  proposerAddress: Uint8Array;
  /** Throws GenesisMismatchError for a gossiped header of another genesis, before the proposer check. */
  checkGenesis?: (signed: SignedHeader) => void;
  /** Where blocks from peers go (the chain). */
  sink: BlockSink;
  /** This node's blocks as stored, served to peers that catch up. */
  source: EncodedBlockSource;
  /** This node's head height (0 = no blocks). */
  head: () => bigint;
  /** False on the aggregator: it serves and publishes blocks but takes none from peers. */
  follow: boolean;
  logger: Logger;
  redial?: Partial<RedialOptions>;
  /** How often peers' heads are asked (they also come with every gossiped header). */
  headRefreshMs?: number;
  metrics?: NodeMetrics | null;
}

/** How long the catch-up loop waits when no peer can serve the gap, before it asks again. */
const RETRY_GAP_MS = 2000;
/**
 * A node one block behind is usually just receiving that block by gossip: it
 * fetches it only if it is still missing after this long.
 */
const GOSSIP_GRACE_MS = 500;

/**
 * The node's part in the P2P network (DESIGN.md §9): the libp2p host, block
 * gossip, the range-sync protocols, and on a full node a loop that catches up
 * from peers whenever one is ahead. Heights no peer can serve are left to DA
 * sync, which runs beside it.
 */
export class P2PNetwork {
  private loop: Promise<void> | null = null;
  private wakeLoop: (() => void) | null = null;
  private wakePending = false;

  private constructor(
    readonly host: P2PHost,
    private readonly sync: BlockSync,
    private readonly gossip: BlockGossip,
    private readonly catchUp: CatchUp,
    private readonly opts: P2PNetworkOptions,
    private readonly logger: Logger,
  ) {}

  /** Binds the listen address, starts gossip and the sync protocols, and starts dialing the peers. */
  static async create(opts: P2PNetworkOptions): Promise<P2PNetwork> {
    const logger = opts.logger.child({ module: 'p2p' });
    const host = await P2PHost.create({
      seed: opts.seed,
      listen: opts.listen,
      peers: opts.peers,
      chainId: opts.chainId,
      logger: opts.logger,
      ...(opts.redial ? { redial: opts.redial } : {}),
    });
    try {
      const sync = new BlockSync(host, {
        source: opts.source,
        head: opts.head,
        logger: opts.logger,
        ...(opts.headRefreshMs !== undefined ? { headRefreshMs: opts.headRefreshMs } : {}),
      });
      await sync.start();
      const network: { current?: P2PNetwork } = {};
      const proposerValidator = proposerHeaderValidator(opts.proposerAddress);
      const gossip = new BlockGossip(host, {
        sink: opts.sink,
        // Gossip compares stale messages with stored blocks (rare): it decodes them.
        source: async (from, to) => (await opts.source(from, to)).map((b) => decodeBlock(b.bytes)),
        validateHeader: (signed) => {
          opts.checkGenesis?.(signed);
          return proposerValidator(signed);
        },
        logger: opts.logger,
        onPeerHeight: (peer, height) => sync.noteHead(peer, height),
        onGap: () => network.current?.wake(),
        metrics: opts.metrics,
      });
      gossip.start();
      const catchUp = new CatchUp(sync, opts.sink, { logger: opts.logger });
      network.current = new P2PNetwork(host, sync, gossip, catchUp, opts, logger);
      sync.onHead(() => network.current?.wake());
      return network.current;
    } catch (err) {
      await host.close();
      throw err;
    }
  }

  /** On a full node, starts catching up from peers whenever one is ahead. */
  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    if (!this.opts.follow) return;
    this.loop = runLoop((s) => this.run(s), signal, onFatal);
  }

  async stopped(): Promise<void> {
    this.wake();
    await this.loop;
  }

  /** Publishes a block this node committed (the aggregator's, right after the commit). */
  publish(block: Block): void {
    this.gossip.publishBlock(block).catch((err) => {
      if (!this.host.closed)
        this.logger.warn({ height: Number(block.header?.header?.height ?? 0n), err: (err as Error).message }, 'publishing a block to peers failed');
    });
  }

  /** Tells gossip the chain moved on by other means (DA), so blocks it holds for later heights can go in. */
  chainAdvanced(): void {
    this.gossip.kick();
  }

  /** Highest head a connected peer reported (0 when none did). */
  bestKnownHeight(): bigint {
    return this.sync.bestKnownHeight();
  }

  /** True when at least one connected peer told its head. */
  knowsPeerHeads(): boolean {
    return this.sync.peerHeads().size > 0;
  }

  peerInfo(): PeerInfo[] {
    return this.host.peerInfo();
  }

  netInfo(): NetInfo {
    return this.host.netInfo();
  }

  /** How many p2p.peers entries this node dials. */
  get configuredPeers(): number {
    return this.host.peers.length;
  }

  close(): Promise<void> {
    return this.host.close();
  }

  private wake(): void {
    if (this.wakeLoop) this.wakeLoop();
    else this.wakePending = true;
  }

  /** Waits for a peer's head to change or gossip to show a gap, at most `ms`. */
  private async idle(ms: number, signal: AbortSignal): Promise<void> {
    if (this.wakePending) {
      this.wakePending = false;
      return;
    }
    const local = new AbortController();
    this.wakeLoop = () => local.abort();
    try {
      await sleep(ms, AbortSignal.any([signal, local.signal]));
    } catch (err) {
      if (signal.aborted) throw err;
    } finally {
      this.wakeLoop = null;
      this.wakePending = false;
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    let reported = '';
    let behindSince: number | null = null;
    while (!signal.aborted) {
      const best = this.sync.bestKnownHeight();
      const next = this.opts.sink.nextHeight;
      if (best < next) {
        behindSince = null;
        await this.idle(RETRY_GAP_MS * 5, signal);
        continue;
      }
      behindSince ??= Date.now();
      const waited = Date.now() - behindSince;
      if (best === next && waited < GOSSIP_GRACE_MS) {
        await sleep(GOSSIP_GRACE_MS - waited, signal);
        continue;
      }
      behindSince = null;
      const result = await this.catchUp.run(best, { signal });
      if (result.blocksApplied > 0) this.gossip.kick();
      if (result.complete) {
        reported = '';
        continue;
      }
      const { from, to, reason, genesisMismatch } = result.missing!;
      // Blocks of another genesis were reported once for the node; a line each time the gap grows would repeat it.
      if (`${from}-${to}` !== reported && !genesisMismatch) {
        this.logger.info({ from: Number(from), to: Number(to), reason }, 'no peer serves these heights; following DA for them');
        reported = `${from}-${to}`;
      }
      await this.idle(RETRY_GAP_MS, signal);
    }
  }
}
