import { NodeRequestError, type NodeClient } from '../client/index.js';
import { blockDetail, RecentBlocks, summarizeBlock, type BlockDetail, type DashboardSource, type NodeSnapshot } from './source.js';

/** A running node read over its RPC (7331) and status (26657) listeners, for `status --watch`. */
export class HttpSource implements DashboardSource {
  readonly target: string;
  private readonly recent: RecentBlocks;

  /** `client` bounds each request by its timeout, so a slow node cannot stall the dashboard. */
  constructor(private readonly client: NodeClient) {
    this.target = new URL(client.rpcUrl).host;
    this.recent = new RecentBlocks(async (height) => {
      try {
        return summarizeBlock((await client.getBlock({ height: BigInt(height) })).response.block!);
      } catch (err) {
        if (err instanceof NodeRequestError && err.connectCode === 'not_found') return null;
        throw err;
      }
    });
  }

  async snapshot(): Promise<NodeSnapshot> {
    // The RPC listener first, so a node that is not running is named by its RPC address.
    await this.client.health('live');
    const info = await this.client.nodeInfo();
    return { info, blocks: await this.recent.upTo(info.height) };
  }

  async block(height: number): Promise<BlockDetail> {
    const { response } = await this.client.getBlock({ height: BigInt(height) });
    return blockDetail(response.block!, response.headerDaHeight, response.dataDaHeight);
  }
}
