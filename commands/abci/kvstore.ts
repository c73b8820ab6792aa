import { join } from 'node:path';
import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { resolveHome } from '../../src/config/index.js';
import { AbciServer, KvStoreApp, parseAbciAddress } from '../../src/exec/abci/index.js';
import { createLogger } from '../../src/log/index.js';

export default class AbciKvstore extends NodedCommand {
  static hidden = true;
  static summary = 'Run the reference key/value ABCI app in the foreground, for a node with execution.type abci.';
  static description = `A small ABCI 2.0 application speaking the CometBFT 0.38 socket protocol, as a Cosmos-SDK app started standalone does: txs are key=value (CheckTx refuses anything else with code 1), Query with path /store and the key as data reads a value. Its state is kept in <home>/abci-kvstore (delete that directory to reset the app) and survives restarts.

Start it, then the node with --node.execution.type abci --node.execution.abci_address <the same address>. Once listening it logs "ABCI app listening" with the bound address. SIGINT or SIGTERM stops it.`;
  static examples = [
    { description: "The app on the default ABCI address, its state beside the node's in ~/.node/abci-kvstore", command: '<%= config.bin %> <%= command.id %>' },
    {
      description: 'On a unix socket, with a home of its own',
      command: '<%= config.bin %> <%= command.id %> --home ~/.kvstore --address unix:///tmp/kvstore.sock',
    },
  ];
  static flags = {
    address: Flags.string({ description: 'Where to listen: tcp://host:port (port 0 = any free port) or unix:///path', default: 'tcp://127.0.0.1:26659' }),
    'log-format': Flags.string({ description: 'Log line format', options: ['text', 'json'], default: 'text' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AbciKvstore);
    try {
      parseAbciAddress(flags.address);
    } catch (err) {
      this.fail(`--address: ${(err as Error).message}`, 'INVALID_FLAG', 2);
    }
    const logger = createLogger({ level: 'info', format: flags['log-format'] as 'text' | 'json' });
    const dir = join(resolveHome(flags.home), 'abci-kvstore');
    const app = new KvStoreApp(dir);
    let server: AbciServer;
    try {
      server = await AbciServer.listen(flags.address, app, logger);
    } catch (err) {
      this.fail(`cannot listen on ${flags.address}: ${(err as Error).message}; pick another --address`, 'LISTEN_FAILED');
    }
    logger.info({ address: server.address, dir, ...app.info() }, 'ABCI app listening');
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    logger.info({ signal }, 'ABCI app stopping');
    await server.close();
    process.exit(0);
  }
}
