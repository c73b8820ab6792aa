import { nodeInfo, type Node } from '../node/index.js';
import { decodeStoredBlock } from '../store/index.js';
import { blockDetail, RecentBlocks, summarizeBlock, type BlockDetail, type DashboardSource, type NodeSnapshot } from './source.js';

/** The node in this process, read directly (no HTTP), for `start --dashboard`. */
export class NodeSource implements DashboardSource {
  readonly target = 'this process';
  private readonly recent: RecentBlocks;

  constructor(private readonly node: Node) {
    this.recent = new RecentBlocks(async (height) => {
      const stored = await node.store.getBlock(BigInt(height));
      return stored ? summarizeBlock(decodeStoredBlock(stored)) : null;
    });
  }

  async snapshot(): Promise<NodeSnapshot> {
    const info = nodeInfo(this.node);
    return { info, blocks: await this.recent.upTo(info.height) };
  }

  async block(height: number): Promise<BlockDetail> {
    const stored = await this.node.store.getBlock(BigInt(height));
    if (!stored) throw new Error(`no block at height ${height}`);
    return blockDetail(decodeStoredBlock(stored), stored.headerDaHeight, stored.dataDaHeight);
  }
}
