import type { Executor } from '../exec/index.js';
import type { ForcedInclusionQueue } from '../forced/index.js';
import type { Logger } from '../log/index.js';
import { runLoop } from '../util/index.js';
import type { Chain } from './chain.js';

/** A millisecond in Unix nanoseconds: the step between a based epoch's block times. */
const MS = 1_000_000n;

/**
 * A based node's block loop (node.based): blocks come from the forced-inclusion
 * namespace alone, epoch by epoch, as ev-node's based sequencer makes them
 * (pkg/sequencers/based/sequencer.go, GetNextBatch): each epoch's txs, in DA
 * order and through FilterTxs, fill as many blocks as their size needs; an
 * epoch without txs makes no block. A block is dated from DA, not a clock:
 * the epoch's last DA block time, less one ms per tx of the epoch, plus one ms
 * per tx consumed up to the block (the epoch's last block lands on its end
 * time). Blocks go unsigned, with the genesis proposer's address, so every
 * based node of the chain derives the same blocks, hash for hash.
 */
export class BasedProducer {
  private loop: Promise<void> | null = null;

  constructor(
    private readonly chain: Chain,
    private readonly executor: Executor,
    private readonly queue: ForcedInclusionQueue,
    private readonly opts: { proposerAddress: Uint8Array; maxBlockTxBytes: number },
    private readonly logger: Logger,
  ) {}

  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.loop = runLoop((s) => this.run(s), signal, onFatal);
  }

  async stopped(): Promise<void> {
    await this.loop;
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { proposerAddress, maxBlockTxBytes } = this.opts;
    this.logger.info({ from: this.queue.position.daHeight.toString() }, 'based mode: deriving blocks from the forced-inclusion namespace');
    while (!signal.aborted) {
      await this.queue.epochReady(signal);
      if (signal.aborted) break;
      const selection = await this.queue.select(this.executor, maxBlockTxBytes);
      const source = selection.source!;
      if (selection.txs.length === 0) {
        await this.queue.record(selection);
        continue;
      }
      const time = source.endTime! - BigInt(source.txs.length) * MS + BigInt(selection.txIndexAfter) * MS;
      const block = await this.chain.produce(selection.txs, time, { address: proposerAddress }, selection.ops);
      selection.commit();
      this.logger.info(
        {
          height: Number(block.header!.header!.height),
          txs: selection.txs.length,
          epoch: Number(source.epoch.number),
          daHeights: `${source.epoch.start}-${source.epoch.end}`,
        },
        'derived a based block',
      );
    }
  }
}
