import { existsSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { ConfigError, DEV_HOME, homePaths, loadConfig, resolveHome, resolveHomePath } from '../src/config/index.js';
import { HomeError, homeExists, initHome } from '../src/home/index.js';
import { dashboardLogFile, isTerminal } from '../src/dashboard/tty.js';
import type { DashboardHandle } from '../src/dashboard/index.js';
import { loadDashboard } from '../cli/dashboard.js';
import type { Node } from '../src/node/index.js';
import { NodedCommand } from '../cli/base.js';
import { configFlags, givenConfigFlags } from '../cli/config-flags.js';

/**
 * node.yml values of a devnet home: the built-in DA, with a DA block every 2 s,
 * and peers taken on loopback only (a devnet is not for other machines).
 */
const DEVNET_CONFIG = { 'da.local': true, 'da.block_time': '2s', 'p2p.listen_address': '/ip4/127.0.0.1/tcp/7676' } as const;
/** How often `--dashboard` reads the node. */
const DASHBOARD_INTERVAL_MS = 1000;

export default class Start extends NodedCommand {
  static summary = 'Run the node in the foreground: produce or follow blocks and serve the RPC, health and status endpoints.';
  static description = `Reads config/node.yml of the home, then NODED_<SECTION>_<KEY> environment variables, then --node.<section>.<key> flags (each overriding the previous). Logs go to stderr, and also to log.file when it is set (rotated by log.max_size, keeping log.max_files). SIGINT or SIGTERM shuts down cleanly (exit 0); a second signal exits at once.

--dev runs a single-node devnet in its own home (~/.node-devnet unless --home is given), creating it as an aggregator on first use.`;
  static examples = [
    { description: 'Run a devnet: an aggregator producing a block every second', command: '<%= config.bin %> <%= command.id %> --dev' },
    { description: 'Run the node in ~/.node', command: '<%= config.bin %> <%= command.id %>' },
    {
      description: 'Override config for this run',
      command: '<%= config.bin %> <%= command.id %> --node.node.block_time 500ms --node.rpc.address 127.0.0.1:17331',
    },
    {
      description: 'A second node on one machine',
      command: 'NODED_HOME=/srv/node2 <%= config.bin %> <%= command.id %> --node.rpc.address 127.0.0.1:7332 --node.rpc.status_address 127.0.0.1:26667',
    },
  ];
  static flags = {
    dev: Flags.boolean({
      description:
        'Run a devnet in ~/.node-devnet (or --home), initialising it as an aggregator on first use; serves the built-in DA (da.local) unless --no-node.da.local',
      default: false,
    }),
    dashboard: Flags.boolean({
      description:
        'Show the live dashboard (as `status --watch`) instead of log lines, which go to log.file (or <home>/logs/node.log when unset); q asks, then stops the node cleanly',
      default: false,
    }),
    'node.clear_cache': Flags.boolean({
      description: 'Empty data/cache before starting (the DA-inclusion cache and pending-submission records; rebuilt from the store and DA)',
      default: false,
    }),
    ...configFlags(),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Start);
    if (flags.dashboard && !isTerminal()) this.fail('--dashboard needs a terminal; run `noded start` without it (logs go to stderr)', 'NOT_A_TERMINAL', 2);
    const home = resolveHome(flags.home ?? (flags.dev ? DEV_HOME : undefined));
    if (flags.dev && !homeExists(home)) {
      try {
        initHome({ home, chainId: 'noded-devnet', aggregator: true, force: false, config: DEVNET_CONFIG });
      } catch (err) {
        if (err instanceof HomeError) this.fail(err.message, err.code);
        throw err;
      }
      this.logToStderr(`Initialised devnet home ${home}`);
    }
    if (!existsSync(homePaths(home).configFile)) {
      this.fail(`no node home at ${home} (config/node.yml is missing); create one with \`noded init --home ${home}\``, 'HOME_MISSING');
    }
    let config;
    try {
      const given = givenConfigFlags(flags);
      // A devnet posts to the DA it serves itself, whatever an older devnet home says.
      if (flags.dev && given['da.local'] === undefined) given['da.local'] = true;
      config = loadConfig({ home, flags: given });
    } catch (err) {
      if (err instanceof ConfigError) this.fail(err.message, err.code, err.fromFlags ? 2 : 1);
      throw err;
    }
    // The daemon and its logger are loaded once flags and config are good: a start refused for a bad flag
    // or key (exit 2 or 1) does not pay for loading every part of the node first.
    const [{ createLogger }, { logSecrets, runDaemon }] = await Promise.all([import('../src/log/index.js'), import('../src/node/index.js')]);
    // Lines go to stderr and log.file; under --dashboard the screen is the dashboard's, so only to a file.
    const logFile = config.log.file ? resolveHomePath(home, config.log.file) : flags.dashboard ? dashboardLogFile(home) : undefined;
    const logger = createLogger({
      level: config.log.level,
      format: config.log.format,
      destination: flags.dashboard ? false : undefined,
      file: logFile ? { path: logFile, maxBytes: config.log.max_size, maxFiles: config.log.max_files } : undefined,
      secrets: logSecrets(home, config),
    });
    const stop = new AbortController();
    const openNodeDashboard = flags.dashboard ? (await loadDashboard()).openNodeDashboard : undefined;
    let dashboard: DashboardHandle | undefined;
    const onReady = openNodeDashboard
      ? (node: Node) => {
          dashboard = openNodeDashboard(node, { logFile: logFile!, intervalMs: DASHBOARD_INTERVAL_MS, onStop: () => stop.abort('stopped from the dashboard') });
        }
      : undefined;
    let exitCode: number;
    try {
      exitCode = await runDaemon({ home, config, logger, version: this.config.version, clearCache: flags['node.clear_cache'], stop: stop.signal, onReady });
    } catch (err) {
      const e = err as Error & { code?: string };
      this.fail(e.message, typeof e.code === 'string' ? e.code : 'START_FAILED');
    }
    if (dashboard) {
      await dashboard.close();
      this.logToStderr(`node stopped (exit ${exitCode}); its log is ${logFile}`);
    }
    // Keep-alive sockets of clients must not hold the process open after a clean shutdown.
    process.exit(exitCode);
  }
}
