import { Flags } from '@oclif/core';
import { NodedCommand } from '../cli/base.js';
import { clientFor, nodeFlag, watchClientFor } from '../cli/node-client.js';
import { fetchNodeStatus, NodeUnreachableError, type NodeStatusReport } from '../src/client/index.js';
import { DURATION_FORM, tryParseDuration } from '../src/config/duration.js';
import { isTerminal } from '../src/dashboard/tty.js';
import { loadDashboard } from '../cli/dashboard.js';
import { daStatusFields, describeDa } from '../src/node/notifier.js';

/** Shortest --interval: faster readings would cost the node more than they show. */
const MIN_INTERVAL_MS = 100;

export default class Status extends NodedCommand {
  static summary =
    "Show how the node on this home is doing: role, height, last block, sync, health, DA (an aggregator's pending blocks, or what a full node follows).";
  static description =
    "Asks this home's node, at rpc.address of its config/node.yml, and checks that the node answering is this home's (its chain id and the P2P peer id of config/node_key.json); or, with --node, the node at that address (its RPC or its status listener). Every figure comes from that one node. Exits 1 when no node of the home runs, or nothing answers.";
  static examples = [
    { description: 'The node in ~/.node', command: '<%= config.bin %> <%= command.id %>' },
    { description: 'The devnet, as JSON for a script', command: '<%= config.bin %> <%= command.id %> --home ~/.node-devnet --json' },
    { description: 'Another node, by its RPC or its status listener', command: '<%= config.bin %> <%= command.id %> --node http://10.0.0.5:26657' },
    { description: 'A live dashboard of the devnet (q quits, ? lists the keys)', command: '<%= config.bin %> <%= command.id %> --home ~/.node-devnet --watch' },
  ];
  static enableJsonFlag = true;
  static flags = {
    node: nodeFlag,
    watch: Flags.boolean({ description: 'Open a full-screen dashboard refreshed every --interval, until q; needs a terminal', default: false }),
    interval: Flags.string({ description: 'How often --watch reads the node, e.g. 500ms or 2s', default: '1s' }),
  };

  async run(): Promise<NodeStatusReport | void> {
    const { flags } = await this.parse(Status);
    if (flags.watch) {
      if (!isTerminal()) this.fail('--watch needs a terminal; use `noded status --json`', 'NOT_A_TERMINAL', 2);
      if (flags.json) this.fail('--watch draws a dashboard and prints no JSON; use `noded status --json` for one report', 'USAGE', 2);
      const intervalMs = tryParseDuration(flags.interval);
      if (intervalMs === undefined || intervalMs < MIN_INTERVAL_MS) {
        this.fail(`--interval: got ${JSON.stringify(flags.interval)}, expected ${DURATION_FORM}, at least ${MIN_INTERVAL_MS}ms`, 'INVALID_FLAG', 2);
      }
      const client = await watchClientFor(flags);
      return (await loadDashboard()).watchNode(client, intervalMs);
    }
    const client = await clientFor(flags);
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
    this.log(`DA           ${describeDa(daStatusFields(report.da))}`);
    if (report.da.last_error) this.log(`DA error     ${report.da.last_error.reason}: ${report.da.last_error.message}; ${report.da.last_error.remedy}`);
    if (report.ha) this.log(`HA           ${report.ha.role} (node ${report.ha.node_id}; leader ${report.ha.leader ?? 'none yet'})`);
    if (report.children.length > 0) {
      // Only a node with supervise: entries has children: the supervisor's process code (execa) is loaded for them alone.
      const { describeChild } = await import('../src/supervise/index.js');
      for (const child of report.children) this.log(`child        ${describeChild(child)}`);
    }
    return report;
  }
}
