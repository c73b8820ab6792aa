import type { Logger } from '../log/index.js';
import { GenesisMismatchError, InvalidBlockError, type Block } from '../types/index.js';
import { blockHeight, type BlockSink } from './sink.js';
import type { BlockSync } from './sync.js';
import { onAbort } from '../util/index.js';

export interface CatchUpOptions {
  logger: Logger;
  /** Heights asked of one peer in one request (default 128; the server caps at 256). */
  chunkSize?: number;
  /** Requests in flight to one peer at once (default 2). */
  perPeerInFlight?: number;
  /** Errors (timeouts, protocol breaches) after which a peer is dropped for the rest of a run (default 2). */
  maxPeerErrors?: number;
}

export interface CatchUpResult {
  from: bigint;
  to: bigint;
  /** Last height now in the chain (from - 1 when nothing was applied). */
  appliedTo: bigint;
  blocksApplied: number;
  /** True when every height up to `to` is in the chain. */
  complete: boolean;
  /** When not complete: the heights no peer could serve, and why — the node falls back to DA for them. */
  missing?: {
    from: bigint;
    to: bigint;
    reason: string;
    /** The peers serve blocks of another genesis: the node reported that once (GenesisGuard); no line per attempt. */
    genesisMismatch: boolean;
  };
  /** Peers that served blocks that were applied. */
  peersUsed: string[];
}

interface Task {
  from: bigint;
  to: bigint;
  /** Peers that already failed this task or said they lack its first height. */
  excluded: Set<string>;
}

interface Fetched {
  blocks: Block[];
  to: bigint;
  peer: string;
}

interface PeerState {
  inFlight: number;
  errors: number;
  dropped: boolean;
  /** Lowest height the peer said it lacks. */
  lacksFrom: bigint | null;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Wakes one waiting loop whenever something changes. */
class Wake {
  private resolve: (() => void) | null = null;
  private pending = false;
  notify(): void {
    this.pending = true;
    this.resolve?.();
  }
  wait(signal?: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const forgetAbort = signal ? onAbort(signal, () => reject(signal.reason)) : () => undefined;
      this.resolve = () => {
        this.resolve = null;
        this.pending = false;
        forgetAbort();
        resolve();
      };
    });
  }
}

/**
 * Fetches a gap of heights from several peers in parallel (the range split in
 * chunks handed to whichever peer is free), and feeds the blocks to the sink
 * strictly in height order, so each is validated against the one before. A
 * peer that serves a block the chain rejects, breaks the protocol or times
 * out is dropped and its chunk goes to another. When no peer has a height the
 * run stops there and says so, for the node to fall back to DA.
 */
export class CatchUp {
  private readonly logger: Logger;
  private readonly chunkSize: bigint;
  private readonly perPeerInFlight: number;
  private readonly maxPeerErrors: number;

  constructor(
    private readonly sync: BlockSync,
    private readonly sink: BlockSink,
    opts: CatchUpOptions,
  ) {
    this.logger = opts.logger.child({ module: 'p2p-catchup' });
    this.chunkSize = BigInt(Math.max(1, Math.min(opts.chunkSize ?? 128, 256)));
    this.perPeerInFlight = Math.max(1, opts.perPeerInFlight ?? 2);
    this.maxPeerErrors = Math.max(1, opts.maxPeerErrors ?? 2);
  }

  /**
   * Brings the chain to `to` (inclusive) from peers, starting at the sink's
   * next height. `peers` defaults to the connected peers whose head (if known)
   * reaches the next height. Errors of the sink other than InvalidBlockError
   * (store, executor) are thrown.
   */
  async run(to: bigint, options: { signal?: AbortSignal; peers?: string[] } = {}): Promise<CatchUpResult> {
    const { signal } = options;
    const from = this.sink.nextHeight;
    let next = from;
    let blocksApplied = 0;
    const peersUsed = new Set<string>();
    const result = (complete: boolean, missing?: CatchUpResult['missing']): CatchUpResult => ({
      from,
      to,
      appliedTo: this.sink.nextHeight - 1n,
      blocksApplied,
      complete,
      ...(missing ? { missing } : {}),
      peersUsed: [...peersUsed],
    });
    if (from > to) return result(true);

    const noPeerHas = (height: bigint) => {
      const heads = [...this.sync.peerHeads().values()];
      const best = heads.length ? heads.reduce((x, y) => (y > x ? y : x)) : null;
      return `no connected peer has height ${height}` + (best === null ? '' : ` (highest peer head: ${best})`);
    };
    const peerIds = options.peers ?? this.sync.peersFor(from);
    if (peerIds.length === 0) {
      this.logger.info({ from: Number(from), to: Number(to), reason: noPeerHas(from) }, 'no peer can serve the gap; DA sync has to fill it');
      return result(false, { from, to, reason: noPeerHas(from), genesisMismatch: false });
    }
    const peers = new Map<string, PeerState>(peerIds.map((p) => [p, { inFlight: 0, errors: 0, dropped: false, lacksFrom: null }]));
    const queue: Task[] = [];
    for (let start = from; start <= to; start += this.chunkSize) {
      const end = start + this.chunkSize - 1n;
      queue.push({ from: start, to: end < to ? end : to, excluded: new Set() });
    }
    const fetched = new Map<bigint, Fetched>();
    const wake = new Wake();
    const controller = new AbortController();
    const fetchSignal = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
    let inFlight = 0;
    let lastProblem = '';
    let genesisMismatch = false;
    // Only fetch this far ahead of the apply point, so memory stays bounded.
    const window = () => this.chunkSize * BigInt(Math.max(2, peers.size * this.perPeerInFlight * 2));

    const requeue = (task: Task) => {
      const i = queue.findIndex((t) => t.from > task.from);
      queue.splice(i < 0 ? queue.length : i, 0, task);
    };

    const eligible = (peer: string, state: PeerState, task: Task) =>
      !state.dropped &&
      state.inFlight < this.perPeerInFlight &&
      !task.excluded.has(peer) &&
      (state.lacksFrom === null || task.from < state.lacksFrom) &&
      (this.sync.peerHeads().get(peer) ?? task.from) >= task.from;

    const launch = (peer: string, state: PeerState, task: Task) => {
      state.inFlight++;
      inFlight++;
      this.sync
        .fetchRange(peer, task.from, task.to, { signal: fetchSignal })
        .then(
          (blocks) => {
            if (blocks.length === 0) {
              state.lacksFrom = state.lacksFrom === null || task.from < state.lacksFrom ? task.from : state.lacksFrom;
              task.excluded.add(peer);
              lastProblem = `peer ${peer} does not have height ${task.from}`;
              requeue(task);
              return;
            }
            const end = task.from + BigInt(blocks.length) - 1n;
            fetched.set(task.from, { blocks, to: end, peer });
            if (end < task.to) requeue({ from: end + 1n, to: task.to, excluded: new Set() });
          },
          (err) => {
            if (fetchSignal.aborted) return;
            state.errors++;
            task.excluded.add(peer);
            lastProblem = `peer ${peer}: ${errorText(err)}`;
            if (state.errors >= this.maxPeerErrors) state.dropped = true;
            this.logger.warn(
              { peer, from: Number(task.from), to: Number(task.to), err: errorText(err), dropped: state.dropped },
              'catch-up request failed; asking another peer',
            );
            requeue(task);
          },
        )
        .finally(() => {
          state.inFlight--;
          inFlight--;
          wake.notify();
        });
    };

    const schedule = () => {
      for (const [peer, state] of peers) {
        while (state.inFlight < this.perPeerInFlight) {
          const i = queue.findIndex((task) => task.from < next + window() && eligible(peer, state, task));
          if (i < 0) break;
          launch(peer, state, queue.splice(i, 1)[0]!);
        }
      }
    };

    /** Applies every fetched chunk that continues the chain. */
    const applyReady = async () => {
      for (;;) {
        if (this.sink.nextHeight > next) {
          // Something else (gossip, DA) moved the chain on: skip what it covered.
          next = this.sink.nextHeight;
          for (const start of [...fetched.keys()]) if (fetched.get(start)!.to < next) fetched.delete(start);
          for (let i = queue.length - 1; i >= 0; i--) if (queue[i]!.to < next) queue.splice(i, 1);
        }
        const entry = [...fetched.entries()].find(([start, f]) => start <= next && f.to >= next);
        if (!entry) return;
        const [start, chunk] = entry;
        fetched.delete(start);
        for (const block of chunk.blocks) {
          const height = blockHeight(block);
          if (height < next) continue;
          if (height > to) break;
          try {
            await this.sink.apply(block);
          } catch (err) {
            if (!(err instanceof InvalidBlockError)) throw err;
            if (this.sink.nextHeight > height) continue; // lost a race with another source: not the peer's fault
            const state = peers.get(chunk.peer)!;
            state.dropped = true;
            lastProblem = `peer ${chunk.peer} served an invalid block: ${err.message}`;
            // A block of another genesis is reported once for the node (GenesisGuard), not once per catch-up.
            const line = { peer: chunk.peer, height: Number(height), err: err.message };
            genesisMismatch = err instanceof GenesisMismatchError;
            if (genesisMismatch) this.logger.debug(line, 'peer served a block of another genesis; dropping it for this catch-up');
            else this.logger.warn(line, 'peer served an invalid block; dropping it for this catch-up');
            requeue({ from: height, to: chunk.to, excluded: new Set([chunk.peer]) });
            break;
          }
          blocksApplied++;
          peersUsed.add(chunk.peer);
          next = height + 1n;
        }
        // The window moved on: ask for the chunks it now admits while the next ones apply,
        // so fetching overlaps applying instead of waiting for every ready chunk to go in.
        schedule();
      }
    };

    try {
      for (;;) {
        signal?.throwIfAborted();
        await applyReady();
        if (next > to) break;
        schedule();
        if (inFlight === 0) {
          const reason = lastProblem || noPeerHas(next);
          const line = { from: Number(next), to: Number(to), reason };
          if (genesisMismatch) this.logger.debug(line, 'no peer can serve the rest of the gap; DA sync has to fill it');
          else this.logger.info(line, 'no peer can serve the rest of the gap; DA sync has to fill it');
          return result(false, { from: next, to, reason, genesisMismatch });
        }
        await wake.wait(signal);
      }
    } finally {
      controller.abort(new Error('catch-up finished'));
    }
    this.logger.info({ from: Number(from), to: Number(to), blocks: blocksApplied, peers: peersUsed.size }, 'caught up from peers');
    return result(true);
  }
}
