import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { TopicValidatorResult, type GossipsubMessage, type Message } from '@libp2p/gossipsub';
import type { PeerId } from '@libp2p/interface';
import type { Logger } from '../log/index.js';
import type { GossipTopic, NodeMetrics } from '../metrics/index.js';
import {
  BlockSchema,
  DataSchema,
  GenesisMismatchError,
  InvalidBlockError,
  SignedHeaderSchema,
  headerHash,
  signedHeaderProblem,
  txsHash,
  type Block,
  type Data,
  type SignedHeader,
} from '../types/index.js';
import { dataTopic, headerTopic, type P2PHost } from './host.js';
import { blockHeight, type BlockSink } from './sink.js';
import type { BlockSource } from './sync.js';

/** Checks a gossiped header's signature and proposer; throws (or returns false) when they do not check out. */
export type HeaderValidator = (signed: SignedHeader) => void | boolean;

export interface BlockGossipOptions {
  sink: BlockSink;
  validateHeader: HeaderValidator;
  logger: Logger;
  /** This node's blocks: a message for a height already in the chain is forwarded only if it matches the stored block. */
  source?: BlockSource;
  /** Told when a peer shows it has `height` (it forwarded a valid header for it): feed BlockSync.noteHead. */
  onPeerHeight?: (peer: string, height: bigint) => void;
  /** Told when gossip arrives for a height past the next one: the node should catch up [from, to]. */
  onGap?: (from: bigint, to: bigint) => void;
  /** Heights past the chain's next one that are held for later (default 512); later ones are ignored. */
  maxAhead?: number;
  /** How long a header or data waits for its other half or for the chain to reach it (default 60 s). */
  pendingTtlMs?: number;
  metrics?: NodeMetrics | null;
}

interface Received<T> {
  value: T;
  msgId: string;
  /** Peer the message came from (not necessarily its author). */
  source: string;
  at: number;
}

interface PendingHeight {
  header?: Received<SignedHeader>;
  /** Data candidates by hex of txsHash (anyone can send data; the signed header picks the one). */
  data: Map<string, Received<Data>>;
}

const MAX_DATA_CANDIDATES = 4;
/** Metric labels of the two topics (the chain id stays out of labels). */
const HEADER = { topic: 'header' } as const;
const DATA = { topic: 'data' } as const;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The HeaderValidator for a chain: the header is the genesis proposer's and
 * signed by it, as ev-node checks (signedHeaderProblem, DESIGN.md §6).
 */
export function proposerHeaderValidator(proposerAddress: Uint8Array): HeaderValidator {
  return (signed) => {
    const problem = signedHeaderProblem(signed, proposerAddress);
    if (problem) throw new Error(problem);
  };
}

/**
 * Block gossip on `<chain_id>-header` (SignedHeader protobuf) and
 * `<chain_id>-data` (Data protobuf) — the bytes of ev-node's P2PSignedHeader
 * and P2PData without their optional DA height hint. Gossipsub runs with asyncValidation: the
 * topic validators reject at once what does not decode, belongs to another
 * chain or carries a header the proposer did not sign (the sender's score
 * falls, nothing is forwarded); everything else waits here until header and
 * data pair up (by height and data_hash) and the sink has applied the block,
 * and only then is it reported Accept and forwarded. A pair the chain rejects
 * is reported Reject; stale or unpaired messages are Ignored.
 */
export class BlockGossip {
  readonly headerTopic: string;
  readonly dataTopic: string;
  private readonly pending = new Map<bigint, PendingHeight>();
  private readonly logger: Logger;
  private readonly maxAhead: bigint;
  private readonly ttlMs: number;
  private started = false;
  private draining: Promise<void> | null = null;
  private drainAgain = false;
  private highestSeen = 0n;

  constructor(
    private readonly host: P2PHost,
    private readonly opts: BlockGossipOptions,
  ) {
    this.headerTopic = headerTopic(host.chainId);
    this.dataTopic = dataTopic(host.chainId);
    this.logger = opts.logger.child({ module: 'p2p-gossip' });
    this.maxAhead = BigInt(opts.maxAhead ?? 512);
    this.ttlMs = opts.pendingTtlMs ?? 60_000;
  }

  private get pubsub() {
    return this.host.node.services.pubsub;
  }

  private readonly onMessage = (evt: CustomEvent<GossipsubMessage>) => {
    const { msg, msgId, propagationSource } = evt.detail;
    try {
      this.receive(msg, msgId, propagationSource);
    } catch (err) {
      this.logger.error({ code: 'GOSSIP_HANDLING_FAILED', err: errorText(err) }, 'gossip message handling failed');
      this.report(msgId, propagationSource.toString(), TopicValidatorResult.Ignore);
    }
  };

  start(): void {
    if (this.started) return;
    this.started = true;
    const pubsub = this.pubsub;
    pubsub.topicValidators.set(this.headerTopic, (peer, msg) => this.validateHeaderMessage(peer, msg));
    pubsub.topicValidators.set(this.dataTopic, (peer, msg) => this.validateDataMessage(peer, msg));
    pubsub.addEventListener('gossipsub:message', this.onMessage);
    pubsub.subscribe(this.headerTopic);
    pubsub.subscribe(this.dataTopic);
    this.host.onClose(() => this.stop());
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    const pubsub = this.pubsub;
    pubsub.removeEventListener('gossipsub:message', this.onMessage);
    try {
      pubsub.unsubscribe(this.headerTopic);
      pubsub.unsubscribe(this.dataTopic);
    } catch {
      // already stopping
    }
    pubsub.topicValidators.delete(this.headerTopic);
    pubsub.topicValidators.delete(this.dataTopic);
    this.pending.clear();
    await this.draining;
  }

  /** Publishes a committed block: its signed header, then its data. Resolves with how many peers each went to. */
  async publishBlock(block: Block): Promise<{ header: number; data: number }> {
    if (!block.header || !block.data) throw new Error('a block to publish needs header and data');
    // With no peer on a topic the message would be encoded and signed only to be dropped (a peer that
    // connects later catches up by range), and that signing is a tenth of a busy aggregator's time.
    const subscribed = (topic: string) => this.pubsub.getSubscribers(topic).length > 0;
    let header = 0;
    let data = 0;
    if (subscribed(this.headerTopic)) {
      header = (await this.pubsub.publish(this.headerTopic, toBinary(SignedHeaderSchema, block.header))).recipients.length;
      this.opts.metrics?.gossipPublished.inc(HEADER);
    }
    if (subscribed(this.dataTopic)) {
      data = (await this.pubsub.publish(this.dataTopic, toBinary(DataSchema, block.data))).recipients.length;
      this.opts.metrics?.gossipPublished.inc(DATA);
    }
    return { header, data };
  }

  /** Peers in this node's gossip mesh for the header topic. */
  meshPeers(): string[] {
    return this.pubsub.getMeshPeers(this.headerTopic);
  }

  /** Peers subscribed to the block topics. */
  subscribers(): string[] {
    return this.pubsub.getSubscribers(this.headerTopic).map((p) => p.toString());
  }

  /** A peer's gossipsub score (negative after it sent invalid messages). */
  peerScore(peer: string): number {
    return this.pubsub.getScore(peer);
  }

  /** Applies held blocks the chain can take now; call after the chain advanced by other means (catch-up, DA). */
  kick(): void {
    void this.drain();
  }

  // ---- topic validators (synchronous, stateless) ----

  private decodeHeader(data: Uint8Array): SignedHeader | string {
    let signed: SignedHeader;
    try {
      signed = fromBinary(SignedHeaderSchema, data);
    } catch (err) {
      return `does not decode as a SignedHeader: ${errorText(err)}`;
    }
    if (!signed.header || !signed.signer) return 'header or signer missing';
    if (signed.header.chainId !== this.host.chainId) return `chain id ${JSON.stringify(signed.header.chainId)}, expected ${JSON.stringify(this.host.chainId)}`;
    if (signed.header.height < 1n) return 'height 0';
    return signed;
  }

  private decodeData(bytes: Uint8Array): Data | string {
    let data: Data;
    try {
      data = fromBinary(DataSchema, bytes);
    } catch (err) {
      return `does not decode as Data: ${errorText(err)}`;
    }
    if (!data.metadata) return 'metadata missing';
    if (data.metadata.chainId !== this.host.chainId) return `chain id ${JSON.stringify(data.metadata.chainId)}, expected ${JSON.stringify(this.host.chainId)}`;
    if (data.metadata.height < 1n) return 'height 0';
    return data;
  }

  private validateHeaderMessage(peer: PeerId, msg: Message): TopicValidatorResult {
    this.opts.metrics?.gossipReceived.inc(HEADER);
    const signed = this.decodeHeader(msg.data);
    let problem = typeof signed === 'string' ? signed : null;
    // A header of another genesis is reported once for the node (GenesisGuard), not once per message.
    let reported = false;
    if (typeof signed !== 'string') {
      try {
        if (this.opts.validateHeader(signed) === false) problem = 'signature or proposer does not check out';
      } catch (err) {
        problem = errorText(err);
        reported = err instanceof GenesisMismatchError;
      }
    }
    if (problem) {
      const line = { peer: peer.toString(), topic: this.headerTopic, reason: problem };
      if (reported) this.logger.debug(line, 'rejected gossiped header');
      else this.logger.warn(line, 'rejected gossiped header');
      this.opts.metrics?.gossipRejected.inc(HEADER);
      return TopicValidatorResult.Reject;
    }
    return TopicValidatorResult.Accept;
  }

  private validateDataMessage(peer: PeerId, msg: Message): TopicValidatorResult {
    this.opts.metrics?.gossipReceived.inc(DATA);
    const data = this.decodeData(msg.data);
    if (typeof data === 'string') {
      this.logger.warn({ peer: peer.toString(), topic: this.dataTopic, reason: data }, 'rejected gossiped data');
      this.opts.metrics?.gossipRejected.inc(DATA);
      return TopicValidatorResult.Reject;
    }
    return TopicValidatorResult.Accept;
  }

  // ---- pairing and applying ----

  private report(msgId: string, source: string, result: TopicValidatorResult): void {
    try {
      this.pubsub.reportMessageValidationResult(msgId, source, result);
    } catch (err) {
      this.logger.debug({ err: errorText(err) }, 'could not report a gossip validation result');
    }
  }

  private receive(msg: Message, msgId: string, from: PeerId): void {
    const source = from.toString();
    const now = Date.now();
    if (msg.topic === this.headerTopic) {
      const signed = this.decodeHeader(msg.data) as SignedHeader; // the topic validator accepted it
      const height = signed.header!.height;
      this.opts.onPeerHeight?.(source, height);
      if (!this.hold(height, msgId, source)) return;
      const slot = this.slot(height);
      if (slot.header) {
        // One header per height; a second, different one signed by the proposer is equivocation: keep the first.
        if (hex(headerHash(slot.header.value.header!)) !== hex(headerHash(signed.header!))) {
          this.logger.warn({ height: Number(height), peer: source }, 'a second, different signed header for this height; ignoring it');
        }
        this.report(msgId, source, TopicValidatorResult.Ignore);
        return;
      }
      slot.header = { value: signed, msgId, source, at: now };
      // Data candidates that do not match the signed header are bogus.
      for (const [key, d] of slot.data) {
        if (key !== hex(signed.header!.dataHash)) {
          slot.data.delete(key);
          this.reject(DATA, d);
        }
      }
      this.noteHeight(height);
    } else if (msg.topic === this.dataTopic) {
      const data = this.decodeData(msg.data) as Data;
      const height = data.metadata!.height;
      if (!this.hold(height, msgId, source)) return;
      const slot = this.slot(height);
      const key = hex(txsHash(data.txs));
      if (slot.header && hex(slot.header.value.header!.dataHash) !== key) {
        this.reject(DATA, { msgId, source });
        return;
      }
      if (slot.data.has(key) || slot.data.size >= MAX_DATA_CANDIDATES) {
        this.report(msgId, source, TopicValidatorResult.Ignore);
        return;
      }
      slot.data.set(key, { value: data, msgId, source, at: now });
    } else {
      this.report(msgId, source, TopicValidatorResult.Ignore);
      return;
    }
    void this.drain();
  }

  private slot(height: bigint): PendingHeight {
    let slot = this.pending.get(height);
    if (!slot) {
      slot = { data: new Map() };
      this.pending.set(height, slot);
    }
    return slot;
  }

  /** False (and the message already reported) when the height is too far ahead to hold. Stale heights are held: drain() settles them. */
  private hold(height: bigint, msgId: string, source: string): boolean {
    if (height >= this.opts.sink.nextHeight + this.maxAhead) {
      this.report(msgId, source, TopicValidatorResult.Ignore);
      return false;
    }
    return true;
  }

  private noteHeight(height: bigint): void {
    const next = this.opts.sink.nextHeight;
    if (height > next && height > this.highestSeen) {
      const from = this.highestSeen >= next ? this.highestSeen + 1n : next;
      this.opts.onGap?.(from, height - 1n);
    }
    if (height > this.highestSeen) this.highestSeen = height;
  }

  /** Runs one drain at a time; a call while one runs makes it go round again. */
  private drain(): Promise<void> {
    if (this.draining) {
      this.drainAgain = true;
      return this.draining;
    }
    this.draining = (async () => {
      try {
        do {
          this.drainAgain = false;
          await this.drainOnce();
        } while (this.drainAgain && this.started);
      } catch (err) {
        this.logger.error({ code: 'GOSSIP_APPLY_FAILED', err: errorText(err) }, 'applying a gossiped block failed');
      } finally {
        this.draining = null;
      }
    })();
    return this.draining;
  }

  /** Reports a held message Reject (its sender's score falls), counted in the metrics. */
  private reject(topic: { topic: GossipTopic }, message: { msgId: string; source: string }): void {
    this.opts.metrics?.gossipRejected.inc(topic);
    this.report(message.msgId, message.source, TopicValidatorResult.Reject);
  }

  private settle(slot: PendingHeight, result: TopicValidatorResult): void {
    const settle = (topic: { topic: GossipTopic }, m: { msgId: string; source: string }) =>
      result === TopicValidatorResult.Reject ? this.reject(topic, m) : this.report(m.msgId, m.source, result);
    if (slot.header) settle(HEADER, slot.header);
    for (const d of slot.data.values()) settle(DATA, d);
  }

  private async drainOnce(): Promise<void> {
    await this.settleStale();
    this.expire();
    for (;;) {
      if (!this.started) return;
      const height = this.opts.sink.nextHeight;
      const slot = this.pending.get(height);
      const header = slot?.header;
      const data = header ? slot.data.get(hex(header.value.header!.dataHash)) : undefined;
      if (!slot || !header || !data) return;
      this.pending.delete(height);
      const block = create(BlockSchema, { header: header.value, data: data.value });
      try {
        await this.opts.sink.apply(block);
      } catch (err) {
        if (!(err instanceof InvalidBlockError)) {
          // The node's own trouble (store, executor): not the peers' fault.
          this.settle(slot, TopicValidatorResult.Ignore);
          throw err;
        }
        if (this.opts.sink.nextHeight > height) {
          // Another source applied this height meanwhile: settle against the stored block.
          this.pending.set(height, slot);
          await this.settleStale();
          continue;
        }
        this.logger.warn({ height: Number(height), peer: header.source, err: err.message }, 'rejected gossiped block');
        this.settle(slot, TopicValidatorResult.Reject);
        continue;
      }
      this.logger.debug({ height: Number(height), peer: header.source }, 'applied gossiped block');
      this.report(header.msgId, header.source, TopicValidatorResult.Accept);
      this.report(data.msgId, data.source, TopicValidatorResult.Accept);
      for (const d of slot.data.values()) if (d !== data) this.reject(DATA, d);
    }
  }

  /**
   * Settles messages for heights the chain already has: forwarded when they
   * match the stored block (so a node that got a block by other means still
   * relays it), ignored otherwise.
   */
  private async settleStale(): Promise<void> {
    const next = this.opts.sink.nextHeight;
    const stale = [...this.pending.keys()].filter((h) => h < next).sort((a, b) => (a < b ? -1 : 1));
    if (stale.length === 0) return;
    let stored = new Map<bigint, Block>();
    if (this.opts.source) {
      try {
        const blocks = await this.opts.source(stale[0]!, stale[stale.length - 1]!);
        stored = new Map(blocks.map((b) => [blockHeight(b), b]));
      } catch (err) {
        this.logger.debug({ err: errorText(err) }, 'could not read stored blocks to settle stale gossip');
      }
    }
    for (const height of stale) {
      const slot = this.pending.get(height);
      if (!slot) continue;
      this.pending.delete(height);
      const mine = stored.get(height)?.header;
      if (slot.header) {
        const same = mine?.header && hex(headerHash(mine.header)) === hex(headerHash(slot.header.value.header!));
        this.report(slot.header.msgId, slot.header.source, same ? TopicValidatorResult.Accept : TopicValidatorResult.Ignore);
      }
      for (const [key, d] of slot.data) {
        const same = mine?.header && hex(mine.header.dataHash) === key;
        this.report(d.msgId, d.source, same ? TopicValidatorResult.Accept : TopicValidatorResult.Ignore);
      }
    }
  }

  /** Drops held messages older than the TTL (reported Ignore). */
  private expire(): void {
    const cutoff = Date.now() - this.ttlMs;
    for (const [height, slot] of this.pending) {
      if (slot.header && slot.header.at < cutoff) {
        this.report(slot.header.msgId, slot.header.source, TopicValidatorResult.Ignore);
        slot.header = undefined;
      }
      for (const [key, d] of slot.data) {
        if (d.at < cutoff) {
          this.report(d.msgId, d.source, TopicValidatorResult.Ignore);
          slot.data.delete(key);
        }
      }
      if (!slot.header && slot.data.size === 0) this.pending.delete(height);
    }
  }

  /** Heights held, waiting for their other half or for the chain to reach them. */
  pendingHeights(): bigint[] {
    return [...this.pending.keys()].sort((a, b) => (a < b ? -1 : 1));
  }
}
