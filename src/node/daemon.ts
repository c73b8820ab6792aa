import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Supervisor } from '../supervise/index.js';
import { Node } from './node.js';
import { releaseStartupHeap } from './startup-heap.js';

export interface DaemonOptions {
  home: string;
  config: Config;
  logger: Logger;
  version: string;
  clearCache?: boolean;
  /** Called once every listener is bound and production has started. */
  onReady?: (node: Node) => void;
  /** Aborting it shuts the node down as SIGTERM does (the dashboard's quit); its reason is logged. */
  stop?: AbortSignal;
}

/**
 * The `supervise:` children, started in order. The supervisor, and execa that
 * runs the children, is loaded only for a config that has some: a node without
 * them keeps that memory.
 */
async function startChildren(opts: DaemonOptions, onGiveUp: (err: Error) => void): Promise<Pick<Supervisor, 'status' | 'stop'>> {
  if (opts.config.supervise.length === 0) return { status: () => [], stop: async () => {} };
  const { Supervisor } = await import('../supervise/index.js');
  return Supervisor.start(opts.config.supervise, { home: opts.home, logger: opts.logger, onGiveUp });
}

/**
 * Runs the node in the foreground until SIGINT/SIGTERM or a fatal error and
 * resolves with the process exit code: 0 after a clean shutdown, 1 after a
 * fatal error. A second signal while shutting down forces an immediate exit.
 * Start-up errors (config, lock, port, a supervised child) reject, for the caller to report.
 * The `supervise:` children start before the node and stop after it.
 */
export async function runDaemon(opts: DaemonOptions): Promise<number> {
  const { logger } = opts;
  // The daemon's own lines; components log through children of their own.
  const log = logger.child({ module: 'node' });
  let onFatal: (err: Error) => void = () => undefined;
  // A holder, not a let: TypeScript does not see the callback assign it, and would narrow it to null.
  const startup: { failure: Error | null } = { failure: null };
  const supervisor = await startChildren(opts, (err) => {
    startup.failure ??= err;
    onFatal(err);
  });
  let node: Node;
  try {
    node = await Node.init({ ...opts, children: () => supervisor.status() });
    if (startup.failure) throw startup.failure;
  } catch (err) {
    await supervisor.stop();
    throw err;
  }
  let exitCode = 0;
  let stopping = false;

  const done = new Promise<void>((resolve) => {
    const shutdown = (why: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ reason: why }, 'shutting down');
      const stopAll = async () => {
        try {
          await node.close();
        } finally {
          await supervisor.stop();
        }
      };
      stopAll().then(resolve, (err) => {
        log.error({ code: 'SHUTDOWN_FAILED', err }, 'error while shutting down');
        exitCode = 1;
        resolve();
      });
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now without a clean shutdown');
        process.exit(1);
      }
      shutdown(`received ${signal}`);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    opts.stop?.addEventListener('abort', () => shutdown(String(opts.stop!.reason)), { once: true });
    onFatal = (err) => {
      // A condition the node recognises (it has a code) is told in its own words; anything else with its stack.
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string') log.fatal({ code }, `fatal error; stopping the node: ${err.message}`);
      else log.fatal({ code: 'UNEXPECTED_ERROR', err }, 'fatal error; stopping the node');
      exitCode = 1;
      shutdown('fatal error');
    };
    node.start(onFatal);
    releaseStartupHeap();
    opts.onReady?.(node);
  });
  await done;
  return exitCode;
}
