import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { resolveHome } from '../../src/config/index.js';
import { ResetError, resetCommand, terminalUi, type ResetResult } from '../../src/reset/index.js';

export default class ResetSoft extends NodedCommand {
  static summary = 'Soft reset: delete the contents of data/ and keep config/ (keys included); the next start resyncs.';
  static description = `The spec's soft reset, for a node that must resync from scratch with the same identity. Refuses while this home's node runs (data/node.pid names a live process); a stale pid file is reported and ignored. Deletes only inside the home: an entry that is a symlink is removed, never what it points to, and a data/ that is itself a symlink is refused.

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
