import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { resolveHome } from '../../src/config/index.js';
import { ResetError, resetCommand, terminalUi, type ResetResult } from '../../src/reset/index.js';

export default class ResetHard extends NodedCommand {
  static summary = 'Hard reset: delete everything noded made in the home, then init it again with the previous chain id and role.';
  static description = `The spec's hard reset. Deletes what noded made in the home (config/: node.yml, genesis.json, the keys, jwt.hex, el-genesis.json; data/: store, cache, local-da, evm, node.pid; logs/), lists but leaves alone every other entry, then runs init with the chain id from the old genesis.json and the role from the old node.yml (override with --chain-id and --aggregator / --no-aggregator).

The keys are regenerated: the node gets a new identity (signing key and P2P peer id), and node.yml goes back to the defaults. A full node needs the chain's genesis.json copied in again before it starts.

Refuses while this home's node runs (pid file or store lock), a directory that is not a noded home (config/node.yml, genesis.json, signer.json and node_key.json, each parseable), and / or a directory holding your home directory. On a terminal it lists what it deletes and asks; without one it needs --yes. --dry-run lists and deletes nothing.`;
  static examples = [
    { description: 'See what would happen', command: '<%= config.bin %> <%= command.id %> --dry-run' },
    { description: 'Start the devnet over as a new chain id', command: '<%= config.bin %> <%= command.id %> --home ~/.node-devnet --chain-id devnet-2 --yes' },
  ];
  static enableJsonFlag = true;
  static flags = {
    yes: Flags.boolean({ char: 'y', description: 'Do not ask for confirmation (required without a terminal)', default: false }),
    'dry-run': Flags.boolean({ description: 'List what would be deleted and delete nothing', default: false }),
    'chain-id': Flags.string({ description: 'Chain id for the new home (default: chain_id of the old genesis.json)' }),
    aggregator: Flags.boolean({ description: 'Role of the new home (default: node.aggregator of the old node.yml)', allowNo: true }),
  };

  async run(): Promise<ResetResult> {
    const { flags } = await this.parse(ResetHard);
    const chainId = flags['chain-id'];
    if (chainId !== undefined && !/^[A-Za-z0-9._-]{1,50}$/.test(chainId)) {
      this.fail(`--chain-id: got ${JSON.stringify(chainId)}, expected 1 to 50 letters, digits, ".", "_" or "-"`, 'INVALID_FLAG', 2);
    }
    try {
      return await resetCommand(
        'hard',
        { home: resolveHome(flags.home), chainId, aggregator: flags.aggregator },
        terminalUi({ json: this.jsonEnabled(), yes: flags.yes, dryRun: flags['dry-run'] }, (line) => this.log(line)),
      );
    } catch (err) {
      if (err instanceof ResetError) this.fail(err.message, err.code, err.exit);
      throw err;
    }
  }
}
