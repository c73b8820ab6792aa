import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { DURATION_FORM, formatDuration, homePaths, parseDuration, parseHostPort, resolveHome } from '../../src/config/index.js';
import { DEFAULT_ESTIMATED_GAS_PRICE, DEFAULT_MAX_GAS_PRICE, LocalDa, LocalDaError, checkAdminListen } from '../../src/da/local/index.js';
import { createLogger } from '../../src/log/index.js';
import { ListenError } from '../../src/rpc/listen.js';

const DEFAULT_MAX_BLOB_SIZE = 1_974_272;

export default class DaServe extends NodedCommand {
  static summary = 'Run the built-in DA server alone, in the foreground (a development DA, not a production one).';
  static description = `Serves the subset of celestia-node's JSON-RPC the node speaks (blob.Submit, blob.GetAll, header.NetworkHead, header.SyncState, state.Balance), plus GET /health and GET /header/sync_state, and seals a DA block every --block-time, empty or not. Blobs are kept in <home>/data/local-da (an append-only log that survives restarts); the home need not be initialised.

It answers as celestia-node does, so client bugs show here first: go-jsonrpc's status codes and error texts (a GET elsewhere is HTTP 400), a gas price estimated at ${DEFAULT_ESTIMATED_GAS_PRICE} utia and refused above the TxConfig's max_gas_price (0 = the default cap, ${DEFAULT_MAX_GAS_PRICE}), Go's decoding errors for ill-typed TxConfig fields, and null for a height without blobs. With --token, a wrong token is HTTP 401 and none at all gets "missing permission to invoke '<Method>' (need '<perm>')".

Point nodes at it with --node.da.address http://<listen> (and --node.da.auth_token when --token is given), and --node.da.inclusion_window 1 (it includes what it takes in its next block, so a node whose answer was lost need watch only one block before posting again). A node with da.local serves the same DA from its own process instead, with da.block_time from node.yml; here the block time is --block-time (default 1s).

--admin opens a second listener for tests: GET/POST /faults (refuse, delayMs, dropSubmitAnswers, slowSubmitAnswersMs, notSynced, submitError, submitErrorCount, balance, estimatedGasPrice) and GET /submissions. With --token it requires "Authorization: Bearer <token>" too; without one it must listen on a loopback address (127.0.0.1, ::1, localhost), or da serve exits 2.

Logs go to stderr; once listening it logs "local DA serving" with the bound address. SIGINT or SIGTERM closes it (exit 0).`;
  static examples = [
    { description: 'A DA for a multi-node devnet on the default port', command: '<%= config.bin %> <%= command.id %> --home ~/.node-da' },
    {
      description: 'Fast blocks and a token (also read from NODED_DA_AUTH_TOKEN)',
      command: '<%= config.bin %> <%= command.id %> --block-time 200ms --token "$DA_TOKEN"',
    },
    {
      description: 'Any free port, JSON logs and a fault-switch listener, as tests run it',
      command: '<%= config.bin %> <%= command.id %> --listen 127.0.0.1:0 --admin 127.0.0.1:0 --log-format json',
    },
    { description: 'Then make it refuse connections', command: 'curl -X POST -d \'{"refuse":true}\' http://127.0.0.1:<admin port>/faults' },
  ];
  static flags = {
    listen: Flags.string({ description: 'host:port to serve JSON-RPC and REST on (port 0 = any free port)', default: '127.0.0.1:26658' }),
    token: Flags.string({
      description: 'Require "Authorization: Bearer <token>" for every DA method, as celestia-node does; never logged',
      env: 'NODED_DA_AUTH_TOKEN',
    }),
    'block-time': Flags.string({ description: `DA block time, ${DURATION_FORM}`, default: '1s' }),
    'max-blob-size': Flags.string({ description: 'Largest total of blob bytes one submission may carry', default: String(DEFAULT_MAX_BLOB_SIZE) }),
    admin: Flags.string({
      description:
        'host:port of the admin listener (fault switches, submissions), for tests; off when absent. Loopback only unless --token is set, which it then requires',
    }),
    'log-format': Flags.string({ description: 'Log line format', options: ['text', 'json'], default: 'text' }),
    'log-level': Flags.string({ description: 'Lowest level logged', options: ['debug', 'info', 'warn', 'error'], default: 'info' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(DaServe);
    const listen = this.hostPort('listen', flags.listen);
    const admin = flags.admin === undefined ? undefined : this.hostPort('admin', flags.admin);
    if (admin !== undefined) {
      try {
        checkAdminListen(admin, flags.token);
      } catch (err) {
        if (err instanceof LocalDaError) this.fail(`--admin: ${err.message}`, err.code, 2);
        throw err;
      }
    }
    let blockTimeMs: number;
    try {
      blockTimeMs = parseDuration(flags['block-time']);
    } catch (err) {
      this.fail(`--block-time: ${(err as Error).message}`, 'INVALID_FLAG', 2);
    }
    if (blockTimeMs <= 0)
      this.fail(`--block-time: got ${JSON.stringify(flags['block-time'])}, expected a duration above zero like 500ms, 1s or 2m`, 'INVALID_FLAG', 2);
    const maxBlobSize = /^\d{1,15}$/.test(flags['max-blob-size']) ? Number(flags['max-blob-size']) : NaN;
    if (!(maxBlobSize >= 1))
      this.fail(`--max-blob-size: got ${JSON.stringify(flags['max-blob-size'])}, expected a whole number of bytes >= 1`, 'INVALID_FLAG', 2);

    const home = resolveHome(flags.home);
    const dir = homePaths(home).localDaDir;
    const logger = createLogger({ level: flags['log-level'] as 'info', format: flags['log-format'] as 'text' | 'json' });
    let da: LocalDa;
    try {
      da = await LocalDa.start({
        dir,
        listen,
        blockTimeMs,
        maxBlobSize,
        logger,
        ...(flags.token ? { authToken: flags.token } : {}),
        ...(admin !== undefined ? { adminListen: admin } : {}),
      });
    } catch (err) {
      if (err instanceof ListenError || err instanceof LocalDaError) this.fail(err.message, err.code);
      throw err;
    }
    logger.info(
      {
        address: da.address,
        ...(da.adminAddress ? { admin: da.adminAddress } : {}),
        dir,
        height: da.height,
        block_time: formatDuration(blockTimeMs),
        max_blob_size: maxBlobSize,
        auth: flags.token ? 'token required' : 'none',
      },
      'local DA serving',
    );

    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    const force = () => {
      logger.warn('second signal: exiting at once');
      process.exit(1);
    };
    process.once('SIGINT', force);
    process.once('SIGTERM', force);
    logger.info({ signal, height: da.height }, 'local DA stopping');
    await da.close();
    logger.info('local DA stopped');
    // Keep-alive sockets of clients must not hold the process open.
    process.exit(0);
  }

  /** `host:port` (an `http://host:port` URL is taken too, as da.address writes it); exit 2 otherwise. */
  private hostPort(flag: string, value: string): string {
    const text = /^https?:\/\/[^/]+\/?$/.test(value) ? value.replace(/^https?:\/\//, '').replace(/\/$/, '') : value;
    try {
      parseHostPort(text);
    } catch {
      const example = flag === 'listen' ? '127.0.0.1:26658' : '127.0.0.1:26670';
      this.fail(`--${flag}: got ${JSON.stringify(value)}, expected host:port like ${example} (port 0-65535; 0 = any free port)`, 'INVALID_FLAG', 2);
    }
    return text;
  }
}
