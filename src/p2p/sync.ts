import { peerIdFromString } from '@libp2p/peer-id';
import type { PeerId, Stream } from '@libp2p/interface';
import type { Logger } from '../log/index.js';
import { decodeBlock, type Block } from '../types/index.js';
import {
  FRAME_BLOCK,
  FRAME_END,
  FRAME_ERROR,
  FRAME_HEADER_BYTES,
  ProtocolError,
  RANGE_REQUEST_BYTES,
  decodeRangeRequest,
  decodeU64,
  encodeFrame,
  encodeRangeRequest,
  encodeU64,
  frameStream,
  readExactly,
  readFrame,
} from './codec.js';
import { blocksProtocol, headProtocol, type P2PHost } from './host.js';

/** Blocks this node holds in [from, to], ascending and without gaps from `from`; fewer (or none) when it has fewer. */
export type BlockSource = (from: bigint, to: bigint) => Promise<Block[]>;

/** A block as this node stores it: its height and its protobuf (`Block`) bytes. */
export interface EncodedBlockAt {
  height: bigint;
  bytes: Uint8Array;
}

/**
 * The blocks this node holds in [from, to] as stored (protobuf bytes), ascending and
 * without gaps from `from`; fewer (or none) when it has fewer. Served as they are,
 * with no decode and re-encode.
 */
export type EncodedBlockSource = (from: bigint, to: bigint) => Promise<EncodedBlockAt[]>;

export interface BlockSyncOptions {
  source: EncodedBlockSource;
  /** This node's head height (0 = no blocks). */
  head: () => bigint;
  logger: Logger;
  /** Most blocks in one response (default 256). */
  maxBlocks?: number;
  /** Most block bytes in one response (default 4 MiB; a single larger block is still sent alone). */
  maxBytes?: number;
  /** Deadline of one request, either side (default 30 s). */
  requestTimeoutMs?: number;
  /** How often peers' heads are asked again (default 10 s; 0 = only on connect and from gossip). */
  headRefreshMs?: number;
}

export const MAX_BLOCKS_PER_RESPONSE = 256;
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Largest single block a client accepts in a response frame. */
export const MAX_BLOCK_FRAME_BYTES = 16 * 1024 * 1024;
const ERROR_MESSAGE_BYTES = 1024;
/** A range response is written in chunks of about this many bytes (a noise message holds at most 64 KiB). */
const SEND_BATCH_BYTES = 60 * 1024;
/** Most a client holds unread of one response: the largest block's frame beside a full response (the server's caps). */
const MAX_RESPONSE_BUFFER_BYTES = MAX_BLOCK_FRAME_BYTES + MAX_RESPONSE_BYTES + MAX_BLOCKS_PER_RESPONSE * FRAME_HEADER_BYTES;

type HeadListener = (peer: string, height: bigint) => void;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
const toPeerId = (peer: string | PeerId): PeerId => (typeof peer === 'string' ? peerIdFromString(peer) : peer);

/**
 * Catch-up protocols (codec.ts documents the framing): serves
 * `/node/<chain_id>/blocks/1.0.0` height ranges and `/node/<chain_id>/head/1.0.0`
 * from this node's store, fetches them from peers, and tracks the heads peers
 * report so the node knows the best height it has heard of.
 */
export class BlockSync {
  readonly blocksProtocol: string;
  readonly headProtocol: string;
  private readonly heads = new Map<string, bigint>();
  private readonly headListeners: HeadListener[] = [];
  private readonly maxBlocks: number;
  private readonly maxBytes: number;
  private readonly requestTimeoutMs: number;
  private readonly logger: Logger;
  private refreshTimer: NodeJS.Timeout | null = null;
  private started = false;

  constructor(
    private readonly host: P2PHost,
    private readonly opts: BlockSyncOptions,
  ) {
    this.blocksProtocol = blocksProtocol(host.chainId);
    this.headProtocol = headProtocol(host.chainId);
    this.maxBlocks = Math.max(1, Math.min(opts.maxBlocks ?? MAX_BLOCKS_PER_RESPONSE, MAX_BLOCKS_PER_RESPONSE));
    this.maxBytes = opts.maxBytes ?? MAX_RESPONSE_BYTES;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.logger = opts.logger.child({ module: 'p2p-sync' });
  }

  private readonly onIdentify = (evt: CustomEvent<{ peerId: PeerId; protocols: string[] }>) => {
    if (evt.detail.protocols.includes(this.headProtocol)) void this.refreshHead(evt.detail.peerId.toString());
  };

  private readonly onDisconnect = (evt: CustomEvent<PeerId>) => {
    this.heads.delete(evt.detail.toString());
  };

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const node = this.host.node;
    await node.handle(this.blocksProtocol, (stream) => this.serveRange(stream), { maxInboundStreams: 16 });
    await node.handle(this.headProtocol, (stream) => this.serveHead(stream), { maxInboundStreams: 16 });
    node.addEventListener('peer:identify', this.onIdentify);
    node.addEventListener('peer:disconnect', this.onDisconnect);
    const every = this.opts.headRefreshMs ?? 10_000;
    if (every > 0) {
      this.refreshTimer = setInterval(() => void this.refreshHeads(), every);
      this.refreshTimer.unref();
    }
    this.host.onClose(() => this.stop());
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
    const node = this.host.node;
    node.removeEventListener('peer:identify', this.onIdentify);
    node.removeEventListener('peer:disconnect', this.onDisconnect);
    await node.unhandle([this.blocksProtocol, this.headProtocol]).catch(() => undefined);
  }

  // ---- server side ----

  private async serveRange(stream: Stream): Promise<void> {
    const signal = AbortSignal.timeout(this.requestTimeoutMs);
    const onAbort = () => stream.abort(new Error('range request timed out'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const frames = frameStream(stream, RANGE_REQUEST_BYTES);
      const { from, to } = decodeRangeRequest(await readExactly(frames, RANGE_REQUEST_BYTES, 'no request', signal));
      if (from < 1n || to < from) {
        await frames.write(encodeFrame(FRAME_ERROR, new TextEncoder().encode(`bad range ${from}-${to}: need 1 <= from <= to`)), { signal });
      } else {
        const last = to - from + 1n > BigInt(this.maxBlocks) ? from + BigInt(this.maxBlocks) - 1n : to;
        const blocks = await this.opts.source(from, last);
        let bytes = 0;
        // Frames go out in writes of about SEND_BATCH_BYTES, not one per block: each write
        // costs a yamux frame and a noise message, which for small blocks cost more than the block.
        let batch: Uint8Array[] = [];
        let batchBytes = 0;
        for (const [i, block] of blocks.entries()) {
          if (i >= this.maxBlocks || block.height !== from + BigInt(i)) break;
          const encoded = block.bytes;
          if (i > 0 && bytes + encoded.length > this.maxBytes) break;
          bytes += encoded.length;
          const frame = encodeFrame(FRAME_BLOCK, encoded);
          batch.push(frame);
          batchBytes += frame.length;
          if (batchBytes >= SEND_BATCH_BYTES) {
            await frames.write(Buffer.concat(batch), { signal });
            batch = [];
            batchBytes = 0;
          }
        }
        batch.push(encodeFrame(FRAME_END));
        await frames.write(Buffer.concat(batch), { signal });
      }
      await stream.close({ signal });
    } catch (err) {
      this.logger.debug({ err: errorText(err) }, 'range request failed');
      stream.abort(err instanceof Error ? err : new Error(String(err)));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async serveHead(stream: Stream): Promise<void> {
    try {
      await frameStream(stream, 0).write(encodeU64(this.opts.head()));
      await stream.close({ signal: AbortSignal.timeout(this.requestTimeoutMs) });
    } catch (err) {
      stream.abort(err instanceof Error ? err : new Error(String(err)));
    }
  }

  // ---- client side ----

  private async open(peer: string | PeerId, protocol: string, signal?: AbortSignal): Promise<{ stream: Stream; signal: AbortSignal; done: () => void }> {
    const deadline = AbortSignal.any([AbortSignal.timeout(this.requestTimeoutMs), this.host.lifetime, ...(signal ? [signal] : [])]);
    const stream = await this.host.node.dialProtocol(toPeerId(peer), protocol, { signal: deadline });
    const onAbort = () => stream.abort(deadline.reason instanceof Error ? deadline.reason : new Error('request aborted'));
    deadline.addEventListener('abort', onAbort, { once: true });
    return { stream, signal: deadline, done: () => deadline.removeEventListener('abort', onAbort) };
  }

  /**
   * Blocks [from, to] from `peer`, at most one response's worth (count and
   * bytes capped by the server): ascending from `from`, no gaps. An empty
   * array means the peer does not have `from`. Throws when the peer answers
   * with an error or breaks the protocol.
   */
  async fetchRange(peer: string | PeerId, from: bigint, to: bigint, options: { signal?: AbortSignal } = {}): Promise<Block[]> {
    if (from < 1n || to < from) throw new RangeError(`bad range ${from}-${to}: need 1 <= from <= to`);
    const peerText = peer.toString();
    const { stream, signal, done } = await this.open(peer, this.blocksProtocol, options.signal);
    try {
      const frames = frameStream(stream, MAX_RESPONSE_BUFFER_BYTES);
      await frames.write(encodeRangeRequest(from, to), { signal });
      await stream.close({ signal });
      const blocks: Block[] = [];
      const limit = to - from + 1n;
      for (;;) {
        const frame = await readFrame(frames, MAX_BLOCK_FRAME_BYTES, `peer ${peerText} cut its response off after ${blocks.length} blocks`, signal);
        if (frame.kind === FRAME_END) break;
        if (frame.kind === FRAME_ERROR) {
          throw new ProtocolError(`peer ${peerText} refused range ${from}-${to}: ${new TextDecoder().decode(frame.payload.subarray(0, ERROR_MESSAGE_BYTES))}`);
        }
        if (frame.kind !== FRAME_BLOCK) throw new ProtocolError(`peer ${peerText} sent an unknown frame kind ${frame.kind}`);
        if (BigInt(blocks.length) >= limit || blocks.length >= MAX_BLOCKS_PER_RESPONSE) {
          throw new ProtocolError(`peer ${peerText} sent more blocks than asked for`);
        }
        let block: Block;
        try {
          block = decodeBlock(frame.payload);
        } catch (err) {
          throw new ProtocolError(`peer ${peerText} sent a block that does not decode: ${errorText(err)}`);
        }
        const expected = from + BigInt(blocks.length);
        const height = block.header?.header?.height;
        if (height !== expected) throw new ProtocolError(`peer ${peerText} sent height ${height ?? 'none'} where ${expected} belongs`);
        blocks.push(block);
      }
      if (blocks.length > 0) this.noteHead(peerText, from + BigInt(blocks.length) - 1n);
      return blocks;
    } catch (err) {
      stream.abort(err instanceof Error ? err : new Error(String(err)));
      throw err;
    } finally {
      done();
    }
  }

  /** The head height `peer` reports (0 = it has no blocks). */
  async fetchHead(peer: string | PeerId, options: { signal?: AbortSignal } = {}): Promise<bigint> {
    const { stream, signal, done } = await this.open(peer, this.headProtocol, options.signal);
    try {
      await stream.close({ signal });
      const head = decodeU64(await readExactly(frameStream(stream, 8), 8, `peer ${peer.toString()} closed the head stream without an answer`, signal));
      this.setHead(peer.toString(), head);
      return head;
    } catch (err) {
      stream.abort(err instanceof Error ? err : new Error(String(err)));
      throw err;
    } finally {
      done();
    }
  }

  private async refreshHead(peer: string): Promise<void> {
    try {
      await this.fetchHead(peer);
    } catch (err) {
      if (!this.host.closed) this.logger.debug({ peer, err: errorText(err) }, 'could not read peer head');
    }
  }

  /** Asks every connected peer for its head again. */
  async refreshHeads(): Promise<void> {
    await Promise.all(this.host.connectedPeerIds().map((p) => this.refreshHead(p.toString())));
  }

  /** Records that `peer` has at least `height` (from gossip it forwarded, or blocks it served). */
  noteHead(peer: string, height: bigint): void {
    if (height > (this.heads.get(peer) ?? -1n)) this.setHead(peer, height);
  }

  private setHead(peer: string, height: bigint): void {
    if (!this.host.isConnected(peer)) return;
    const before = this.heads.get(peer);
    this.heads.set(peer, height);
    if (before !== height) for (const l of this.headListeners) l(peer, height);
  }

  /** Heads of connected peers, as last reported or seen. */
  peerHeads(): ReadonlyMap<string, bigint> {
    return this.heads;
  }

  /** Highest head any connected peer reported (0 when none did). */
  bestKnownHeight(): bigint {
    let best = 0n;
    for (const h of this.heads.values()) if (h > best) best = h;
    return best;
  }

  /** Called whenever a peer's head changes; returns an unsubscribe function. */
  onHead(listener: HeadListener): () => void {
    this.headListeners.push(listener);
    return () => {
      const i = this.headListeners.indexOf(listener);
      if (i >= 0) this.headListeners.splice(i, 1);
    };
  }

  /** Connected peers that may serve `height`: those whose head is at least that, or not known yet. */
  peersFor(height: bigint): string[] {
    return this.host
      .connectedPeerIds()
      .map((p) => p.toString())
      .filter((p) => {
        const head = this.heads.get(p);
        return head === undefined || head >= height;
      });
  }
}
