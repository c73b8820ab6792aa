import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { resolveHome } from '../../src/config/index.js';
import { ResetError, resetCommand, terminalUi, type ResetResult } from '../../src/reset/index.js';

export default class ResetEvm extends NodedCommand {
  static summary = "Reset the EVM state: delete the execution client's database and the node's data/cache, then restart the execution client first.";
  static description = `The spec's reset of the EVM state. Empties the execution client's database directory (execution.db_path, relative paths under the home, or --execution-db DIR) and data/cache/, keeps the block store and config/, then prints the restart order: the execution client first, then the node. A database path that is a symlink is resolved: the plan shows, and the reset empties, the real directory.

Refuses a directory that is not a noded home and while this home's node runs (pid file or store lock); a database that is unset, a system directory (/, /etc, /usr, /var, /bin, /sbin, /lib*, /boot, /home, /opt, /srv, /proc, /sys, /dev) or one holding it, the home or one holding it, your home directory or one holding it, inside config/, or the node's own data/, store, cache or local-da. Unless --force, it also refuses while the execution client answers on execution.engine_url (stop it first), and a directory that does not look like an execution client's database (geth's geth/chaindata, reth's db/ and static_files/, EthereumJS's <network>/chain and state, Nethermind's blocks, headers and state). Never follows a symlink out of those two directories.

On a terminal it lists what it deletes and asks; without one it needs --yes. --dry-run lists and deletes nothing.`;
  static examples = [
    { description: 'See what would be deleted', command: '<%= config.bin %> <%= command.id %> --dry-run' },
    { description: 'With the database given here, without asking', command: '<%= config.bin %> <%= command.id %> --execution-db /var/lib/reth --yes' },
  ];
  static enableJsonFlag = true;
  static flags = {
    yes: Flags.boolean({ char: 'y', description: 'Do not ask for confirmation (required without a terminal)', default: false }),
    'dry-run': Flags.boolean({ description: 'List what would be deleted and delete nothing', default: false }),
    'execution-db': Flags.string({ description: "The execution client's database directory (default: execution.db_path)" }),
    force: Flags.boolean({
      description: "Go ahead although something answers on execution.engine_url, or the directory does not look like an execution client's database",
      default: false,
    }),
  };

  async run(): Promise<ResetResult> {
    const { flags } = await this.parse(ResetEvm);
    try {
      return await resetCommand(
        'evm',
        { home: resolveHome(flags.home), executionDb: flags['execution-db'], force: flags.force },
        terminalUi({ json: this.jsonEnabled(), yes: flags.yes, dryRun: flags['dry-run'] }, (line) => this.log(line)),
      );
    } catch (err) {
      if (err instanceof ResetError) this.fail(err.message, err.code, err.exit);
      throw err;
    }
  }
}
