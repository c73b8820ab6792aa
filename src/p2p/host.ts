import '../util/polyfill.js';
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify, type Identify } from '@libp2p/identify';
import { gossipsub, type GossipSub, type TopicValidatorResult } from '@libp2p/gossipsub';
import { createTopicScoreParams, type TopicScoreParams } from '@libp2p/gossipsub/score';
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';
import type { Connection, PeerId } from '@libp2p/interface';
import type { Logger } from '../log/index.js';
import { Backoff, sleep } from '../util/index.js';
import { moveAdvice, nodeListenerMove, parsePeerAddresses, portOf, type PeerAddress } from '../config/index.js';

/** The gossipsub methods this module uses beyond the package's public interface (all on its implementation class). */
export interface GossipSubService extends GossipSub {
  reportMessageValidationResult(msgId: string, propagationSource: string, acceptance: TopicValidatorResult): void;
  getMeshPeers(topic: string): string[];
  getScore(peerId: string): number;
}

export type P2PServices = {
  identify: Identify;
  pubsub: GossipSubService;
};

export type P2PNode = Libp2p<P2PServices>;

export interface RedialOptions {
  /** First wait after a failed dial or a dropped connection. */
  minMs: number;
  /** The wait doubles up to this. */
  maxMs: number;
  /** Give up on one dial attempt after this long. */
  dialTimeoutMs: number;
}

export interface P2PHostOptions {
  /** The node key's 32-byte ed25519 seed (config/node_key.json). */
  seed: Uint8Array;
  /** Multiaddr to listen on, e.g. /ip4/0.0.0.0/tcp/7676 (port 0: any free port). */
  listen: string;
  /** Full peer addresses (/ip4/<ip>/tcp/<port>/p2p/<peer_id>) to dial and keep dialing. */
  peers: readonly string[];
  chainId: string;
  logger: Logger;
  /** Aborting it closes the host. */
  signal?: AbortSignal;
  redial?: Partial<RedialOptions>;
}

export interface PeerInfo {
  id: string;
  address: string;
}

export interface NetInfo {
  id: string;
  listen_addresses: string[];
  connected_peers: PeerInfo[];
}

/** Largest gossip message (a block's data) a peer may send. */
export const MAX_GOSSIP_MESSAGE_BYTES = 8 * 1024 * 1024;

const DEFAULT_REDIAL: RedialOptions = { minMs: 500, maxMs: 30_000, dialTimeoutMs: 10_000 };
/** A connection that lasted less than this does not reset the redial backoff (a peer that accepts then drops us). */
const STABLE_CONNECTION_MS = 10_000;
/** Log a peer that stays unreachable once, then every this many attempts. */
const LOG_EVERY_ATTEMPTS = 10;

export const headerTopic = (chainId: string) => `${chainId}-header`;
export const dataTopic = (chainId: string) => `${chainId}-data`;
export const blocksProtocol = (chainId: string) => `/node/${chainId}/blocks/1.0.0`;
export const headProtocol = (chainId: string) => `/node/${chainId}/head/1.0.0`;

/**
 * Gossipsub scoring for the two block topics: only invalid messages cost a
 * peer (one forged block takes it to the gossip threshold, three to the
 * graylist); a quiet chain (lazy mode) costs nobody anything.
 */
function topicScoreParams(): TopicScoreParams {
  return createTopicScoreParams({
    topicWeight: 1,
    timeInMeshWeight: 0.01,
    timeInMeshQuantum: 1000,
    timeInMeshCap: 100,
    firstMessageDeliveriesWeight: 0.5,
    firstMessageDeliveriesDecay: 0.9,
    firstMessageDeliveriesCap: 20,
    meshMessageDeliveriesWeight: 0,
    meshFailurePenaltyWeight: 0,
    invalidMessageDeliveriesWeight: -10,
    invalidMessageDeliveriesDecay: 0.5,
  });
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The node's libp2p host (DESIGN.md §9): TCP, noise, yamux, identify and
 * gossipsub with floodsub fallback; identity from the node key; listens on
 * p2p.listen_address; dials every configured peer and keeps redialing it with
 * capped exponential backoff whenever it is not connected. Gossip and catch-up
 * (gossip.ts, sync.ts) attach to it.
 */
export class P2PHost {
  readonly peerId: string;
  private readonly controller = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly disconnectWaiters = new Map<string, Set<() => void>>();
  private readonly closers: Array<() => Promise<void> | void> = [];
  private closing: Promise<void> | null = null;
  private readonly redial: RedialOptions;
  private readonly onAbort = () => void this.close();
  /** listenAddresses() until libp2p says this node's addresses changed: building them is libp2p's costliest read (GET /node_info asks for them). */
  private listening: string[] | null = null;

  private constructor(
    readonly node: P2PNode,
    readonly chainId: string,
    readonly peers: readonly PeerAddress[],
    private readonly logger: Logger,
    redial: Partial<RedialOptions> | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.peerId = node.peerId.toString();
    this.redial = { ...DEFAULT_REDIAL, ...redial };
  }

  /** Starts libp2p, binds the listen address and starts dialing the peers. Invalid peer addresses throw before anything binds. */
  static async create(opts: P2PHostOptions): Promise<P2PHost> {
    const peers = parsePeerAddresses(opts.peers);
    opts.signal?.throwIfAborted();
    try {
      multiaddr(opts.listen);
    } catch (err) {
      throw new Error(
        `p2p.listen_address ${JSON.stringify(opts.listen)} is not a multiaddr (${errorText(err)}); expected /ip4/<ip>/tcp/<port>, like /ip4/0.0.0.0/tcp/7676`,
      );
    }
    const logger = opts.logger.child({ module: 'p2p' });
    const privateKey = await generateKeyPairFromSeed('Ed25519', opts.seed);
    const topics = { [headerTopic(opts.chainId)]: topicScoreParams(), [dataTopic(opts.chainId)]: topicScoreParams() };
    let node: P2PNode;
    try {
      node = await createLibp2p({
        privateKey,
        addresses: { listen: [opts.listen] },
        transports: [tcp()],
        connectionEncrypters: [noise()],
        streamMuxers: [yamux()],
        services: {
          identify: identify(),
          pubsub: gossipsub({
            fallbackToFloodsub: true,
            // Full nodes forward a block only after the chain accepted it (gossip.ts reports each message).
            asyncValidation: true,
            // An aggregator with no peers yet publishes into the void rather than failing.
            allowPublishToZeroTopicPeers: true,
            emitSelf: false,
            maxInboundDataLength: MAX_GOSSIP_MESSAGE_BYTES,
            scoreParams: { topics },
          }) as unknown as (components: unknown) => GossipSubService,
        },
      });
    } catch (err) {
      const text = errorText(err);
      const port = portOf(opts.listen) ?? 0;
      const taken = /EADDRINUSE|address already in use/i.test(text);
      const reason = taken ? `port ${port} is already in use by another process` : text;
      const move = nodeListenerMove('p2p.listen_address', opts.listen);
      const host = /^\/ip[46]\/([^/]+)\//.exec(opts.listen)?.[1];
      const advice = taken && host ? await moveAdvice(move, host, port) : `choose another address with ${move.flag}`;
      throw new Error(`cannot listen for peers on ${opts.listen}: ${reason}; ${advice}`);
    }
    for (const method of ['reportMessageValidationResult', 'getMeshPeers', 'getScore'] as const) {
      if (typeof node.services.pubsub[method] !== 'function') {
        await node.stop();
        throw new Error(`@libp2p/gossipsub lacks ${method}(); install the version line DESIGN.md §2 names`);
      }
    }
    const host = new P2PHost(node, opts.chainId, peers, logger, opts.redial, opts.signal);
    host.start();
    return host;
  }

  private start(): void {
    const { node, logger } = this;
    node.addEventListener('peer:connect', (evt) => {
      logger.info({ peer: evt.detail.toString() }, 'peer connected');
    });
    // libp2p's address manager patches this node's peer record, which fires this, whenever its addresses change.
    node.addEventListener('self:peer:update', () => (this.listening = null));
    node.addEventListener('peer:disconnect', (evt) => {
      const id = evt.detail.toString();
      logger.info({ peer: id }, 'peer disconnected');
      const waiters = this.disconnectWaiters.get(id);
      if (waiters) for (const wake of [...waiters]) wake();
    });
    logger.info({ peerId: this.peerId, listen: this.listenAddresses() }, 'listening for peers');
    for (const peer of this.peers) {
      if (peer.peerId === this.peerId) {
        logger.warn({ peer: peer.multiaddr }, 'p2p.peers lists this node itself; skipping it');
        continue;
      }
      this.loops.push(this.keepConnected(peer));
    }
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (this.signal?.aborted) void this.close();
  }

  /** Resolves when `peerId` has no connection left (at once if it has none), or when the host closes. */
  private waitForDisconnect(peerId: string): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.disconnectWaiters.get(peerId) ?? new Set();
      this.disconnectWaiters.set(peerId, waiters);
      const done = () => {
        if (this.isConnected(peerId) && !this.controller.signal.aborted) return; // another connection remains
        waiters.delete(done);
        this.controller.signal.removeEventListener('abort', done);
        resolve();
      };
      waiters.add(done);
      this.controller.signal.addEventListener('abort', done, { once: true });
      done();
    });
  }

  private async keepConnected(peer: PeerAddress): Promise<void> {
    const signal = this.controller.signal;
    const target = multiaddr(peer.multiaddr);
    const backoff = new Backoff({ baseMs: this.redial.minMs, maxMs: this.redial.maxMs });
    let failures = 0;
    let everConnected = false;
    while (!signal.aborted) {
      if (this.isConnected(peer.peerId)) {
        const since = Date.now();
        await this.waitForDisconnect(peer.peerId);
        if (signal.aborted) return;
        if (Date.now() - since >= STABLE_CONNECTION_MS) backoff.reset();
        const delay = backoff.next();
        this.logger.info({ peer: peer.multiaddr, retryInMs: delay }, 'connection to peer dropped; redialing');
        if (!(await this.pause(delay))) return;
        continue;
      }
      try {
        await this.node.dial(target, { signal: AbortSignal.any([signal, AbortSignal.timeout(this.redial.dialTimeoutMs)]) });
        if (failures > 0 || everConnected) this.logger.info({ peer: peer.multiaddr, attempts: failures + 1 }, 'reconnected to peer');
        everConnected = true;
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        const delay = backoff.next();
        if (failures === 1 || failures % LOG_EVERY_ATTEMPTS === 0) {
          this.logger.warn(
            { peer: peer.multiaddr, attempt: failures, retryInMs: delay, err: errorText(err) },
            'cannot reach peer; check that it runs, that its address and peer id are right, and that its P2P port is open',
          );
        }
        if (!(await this.pause(delay))) return;
      }
    }
  }

  /** Sleeps unless the host closes first; false when it closed. */
  private async pause(ms: number): Promise<boolean> {
    try {
      await sleep(ms, this.controller.signal);
      return true;
    } catch {
      return false;
    }
  }

  isConnected(peerId: string): boolean {
    return this.node.getConnections().some((c) => c.remotePeer.toString() === peerId && c.status === 'open');
  }

  /** Bound listen multiaddrs, each ending in /p2p/<this peer id> (port 0 resolved to the real port). */
  listenAddresses(): string[] {
    this.listening ??= this.node.getMultiaddrs().map((ma) => ma.toString());
    return [...this.listening];
  }

  /** Connected peers, one entry per peer: its id and the address of its (first) open connection. */
  peerInfo(): PeerInfo[] {
    const byPeer = new Map<string, Connection>();
    for (const conn of this.node.getConnections()) {
      if (conn.status !== 'open') continue;
      const id = conn.remotePeer.toString();
      if (!byPeer.has(id)) byPeer.set(id, conn);
    }
    return [...byPeer.entries()].map(([id, conn]) => {
      const address = conn.remoteAddr.toString();
      return { id, address: address.endsWith(`/p2p/${id}`) ? address : `${address}/p2p/${id}` };
    });
  }

  netInfo(): NetInfo {
    return { id: this.peerId, listen_addresses: this.listenAddresses(), connected_peers: this.peerInfo() };
  }

  connectedPeerIds(): PeerId[] {
    return this.node.getPeers();
  }

  get connectionCount(): number {
    return this.node.getConnections().length;
  }

  get closed(): boolean {
    return this.closing !== null;
  }

  /** The host's lifetime signal: aborted when it starts closing. */
  get lifetime(): AbortSignal {
    return this.controller.signal;
  }

  /** Runs `closer` when the host closes, before libp2p stops (last registered, first run). */
  onClose(closer: () => Promise<void> | void): void {
    this.closers.push(closer);
  }

  /** Stops redialing, closes the attached protocols, every connection and the listener. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.controller.abort(new Error('p2p host closed'));
    for (const close of this.closers.reverse()) {
      try {
        await close();
      } catch (err) {
        this.logger.warn({ err: errorText(err) }, 'error while closing a p2p component');
      }
    }
    await this.node.stop();
    await Promise.allSettled(this.loops);
    this.logger.info('p2p host closed');
  }
}
