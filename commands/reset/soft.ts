import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { resolveHome } from '../../src/config/index.js';
import { ResetError, resetCommand, terminalUi, type ResetResult } from '../../src/reset/index.js';

export default class ResetSoft extends NodedCommand {
  static summary = "Soft reset: delete the node's data in data/ and keep config/ (keys included); the next start resyncs.";
  static description = `The spec's soft reset, for a node that must resync from scratch with the same identity. Deletes what noded keeps in data/ (store, cache, local-da, evm, node.pid) and lists, but leaves alone, anything else there.

Refuses a directory that is not a noded home (config/node.yml, genesis.json, signer.json and node_key.json, each parseable), and while this home's node runs: data/node.pid names a live process, or another process holds the store's LevelDB lock (a node whose pid file is gone). A stale pid file is reported and ignored. An entry that is a symlink is removed, never what it points to, and a data/ that is itself a symlink out of the home is refused.

On a terminal it lists what it deletes and asks; without one it needs --yes. --dry-run lists and deletes nothing.`;
  static examples = [
    { description: 'See what would be deleted', command: '<%= config.bin %> <%= command.id %> --dry-run' },
    { description: 'Reset the devnet without asking', command: '<%= config.bin %> <%= command.id %> --home ~/.node-devnet --yes' },
  ];
  static enableJsonFlag = true;
  static flags = {
    yes: Flags.boolean({ char: 'y', description: 'Do not ask for confirmation (required without a terminal)', default: false }),
    'dry-run': Flags.boolean({ description: 'List what would be deleted and delete nothing', default: false }),
  };

  async run(): Promise<ResetResult> {
    const { flags } = await this.parse(ResetSoft);
    try {
      return await resetCommand(
        'soft',
        { home: resolveHome(flags.home) },
        terminalUi({ json: this.jsonEnabled(), yes: flags.yes, dryRun: flags['dry-run'] }, (line) => this.log(line)),
      );
    } catch (err) {
      if (err instanceof ResetError) this.fail(err.message, err.code, err.exit);
      throw err;
    }
  }
}
