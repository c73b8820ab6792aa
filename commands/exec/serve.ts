import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { homePaths, hostPortFlagMove, parseHostPort, resolveHome } from '../../src/config/index.js';
import { parseAbciAddress } from '../../src/exec/abci/index.js';
import { ExecutorServer, LedgerMachine } from '../../src/exec/grpc/index.js';
import { createLogger } from '../../src/log/index.js';
import { ListenError } from '../../src/rpc/listen.js';
import { StoreLockedError } from '../../src/store/index.js';

export default class ExecServe extends NodedCommand {
  static summary = "Serve the built-in kv machine (or an ABCI app) as an ExecutorService (ev-node's execution API), for a node with execution.type grpc.";
  static description = `Serves node.v1.ExecutorService (ev-node's InitChain, GetTxs, ExecuteTxs, SetFinal, GetExecutionInfo, FilterTxs; proto/node/v1/execution.proto) over gRPC, Connect and gRPC-Web, HTTP/2 and HTTP/1.1 on one port, with gRPC reflection. A node runs its execution in this process (or on another machine) with --node.execution.type grpc --node.execution.grpc_address http://<listen>; \`noded init --execution grpc\` writes a supervise: entry that runs it beside the node.

With --type kv its state and a ledger of the blocks it executed are kept in <home>/data/exec-kv (a soft reset deletes them; the node then replays its blocks into it). With --type abci it drives the ABCI app at --abci-address (CometBFT 0.38 socket protocol: InitChain, FinalizeBlock then Commit, CheckTx for POST /tx, Info for where the app stands), its ledger in <home>/data/exec-abci. A block it executed already answers the same state root again; a block beyond its next is OUT_OF_RANGE, so the node replays what it lacks; a block on another state is FAILED_PRECONDITION. GET /health answers "ok"; POST /tx queues a tx for GetTxs.

Once listening it logs "executor serving" with the bound address. SIGINT or SIGTERM stops it (exit 0).`;
  static examples = [
    { description: "The kv machine on the default address, its state in the node's home", command: '<%= config.bin %> <%= command.id %>' },
    {
      description: 'Any free port, a token the node must send (execution.grpc_auth_token)',
      command: '<%= config.bin %> <%= command.id %> --listen 127.0.0.1:0 --token "$EXEC_TOKEN"',
    },
    { description: 'An ABCI app behind the ExecutorService', command: '<%= config.bin %> <%= command.id %> --type abci --abci-address tcp://127.0.0.1:26659' },
  ];
  static flags = {
    type: Flags.string({
      description: 'The machine to serve: the built-in kv machine, or the ABCI app at --abci-address',
      options: ['kv', 'abci'],
      default: 'kv',
    }),
    'abci-address': Flags.string({ description: 'With --type abci: the app, tcp://host:port or unix:///path', default: 'tcp://127.0.0.1:26659' }),
    listen: Flags.string({ description: 'host:port to serve on (port 0 = any free port)', default: '127.0.0.1:50051' }),
    token: Flags.string({ description: 'Require "Authorization: Bearer <token>" on every call; never logged', env: 'NODED_EXEC_AUTH_TOKEN' }),
    'log-format': Flags.string({ description: 'Log line format', options: ['text', 'json'], default: 'text' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ExecServe);
    let host: string;
    try {
      host = parseHostPort(flags.listen).host;
    } catch {
      this.fail(`--listen: got ${JSON.stringify(flags.listen)}, expected host:port like 127.0.0.1:50051 (port 0-65535; 0 = any free port)`, 'INVALID_FLAG', 2);
    }
    if (flags.type === 'abci') {
      try {
        parseAbciAddress(flags['abci-address']);
      } catch (err) {
        this.fail(`--abci-address: ${(err as Error).message}`, 'INVALID_FLAG', 2);
      }
    }
    const logger = createLogger({ level: 'info', format: flags['log-format'] as 'text' | 'json' });
    const paths = homePaths(resolveHome(flags.home));
    const dir = flags.type === 'abci' ? paths.execAbciDir : paths.execKvDir;
    let machine: LedgerMachine;
    try {
      machine = flags.type === 'abci' ? await LedgerMachine.abci(dir, flags['abci-address'], logger) : await LedgerMachine.kv(dir);
    } catch (err) {
      if (err instanceof StoreLockedError) this.fail(`${err.message.replace('stop that node first', 'stop that executor first')}`, 'STORE_LOCKED');
      throw err;
    }
    let server: ExecutorServer;
    try {
      server = await ExecutorServer.start({
        listen: flags.listen,
        move: hostPortFlagMove('listen', host),
        machine,
        logger,
        ...(flags.token ? { token: flags.token } : {}),
      });
    } catch (err) {
      await machine.close();
      if (err instanceof ListenError) this.fail(err.message, err.code);
      throw err;
    }
    const info = machine.info();
    logger.info(
      { address: server.address, type: flags.type, dir, height: Number(info.height), stateRoot: info.stateRoot, auth: flags.token ? 'token required' : 'none' },
      'executor serving',
    );
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    logger.info({ signal }, 'executor stopping');
    await server.close();
    process.exit(0);
  }
}
