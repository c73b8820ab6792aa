import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { Node } from './node.js';

export interface DaemonOptions {
  home: string;
  config: Config;
  logger: Logger;
  version: string;
  clearCache?: boolean;
  /** Called once every listener is bound and production has started. */
  onReady?: (node: Node) => void;
}

/**
 * Runs the node in the foreground until SIGINT/SIGTERM or a fatal error and
 * resolves with the process exit code: 0 after a clean shutdown, 1 after a
 * fatal error. A second signal while shutting down forces an immediate exit.
 * Start-up errors (config, lock, port) reject, for the caller to report.
 */
export async function runDaemon(opts: DaemonOptions): Promise<number> {
  const { logger } = opts;
  const node = await Node.init(opts);
  let exitCode = 0;
  let stopping = false;

  const done = new Promise<void>((resolve) => {
    const shutdown = (why: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ reason: why }, 'shutting down');
      node.close().then(resolve, (err) => {
        logger.error({ err }, 'error while shutting down');
        exitCode = 1;
        resolve();
      });
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now without a clean shutdown');
        process.exit(1);
      }
      shutdown(`received ${signal}`);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    node.start((err) => {
      logger.fatal({ err }, 'fatal error; stopping the node');
      exitCode = 1;
      shutdown('fatal error');
    });
    opts.onReady?.(node);
  });
  await done;
  return exitCode;
}
