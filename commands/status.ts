import { NodedCommand } from '../cli/base.js';
import { clientFor } from '../cli/node-client.js';
import { fetchNodeStatus, NodeUnreachableError, type NodeStatusReport } from '../src/client/index.js';

export default class Status extends NodedCommand {
  static summary = 'Show how the node on this home is doing: role, height, last block, sync, health, pending blocks.';
  static description = 'Reads the addresses from the home\'s config/node.yml and asks the running node. Exits 1 when no node answers.';
  static examples = [
    { description: 'The node in ~/.node', command: '<%= config.bin %> <%= command.id %>' },
    { description: 'The devnet, as JSON for a script', command: '<%= config.bin %> <%= command.id %> --home ~/.node-devnet --json' },
  ];
  static enableJsonFlag = true;

  async run(): Promise<NodeStatusReport> {
    const { flags } = await this.parse(Status);
    const client = clientFor(flags);
    let report: NodeStatusReport;
    try {
      report = await fetchNodeStatus(client);
    } catch (err) {
      if (err instanceof NodeUnreachableError) this.fail(err.message, err.code);
      throw err;
    }
    const { health } = report;
    this.log(`chain        ${report.chain_id} (${report.role})`);
    this.log(`height       ${report.height}`);
    this.log(`last block   ${report.last_block_time} (${report.last_block_age_seconds}s ago)`);
    this.log(`catching up  ${report.catching_up ? 'yes' : 'no'}`);
    this.log(`health       live: ${health.live.text}, ready: ${health.ready.text}`);
    this.log(`pending      ${report.pending_blocks} blocks not yet on DA`);
    return report;
  }
}
