import { initHome, type InitOptions, type InitResult } from '../../home/index.js';

/** Where `init --execution grpc` has `noded exec serve` listen (ev-node's executor examples use 50051). */
export const DEFAULT_EXEC_PORT = 50051;

/**
 * `noded init --execution grpc`: a home whose node drives its kv machine in a
 * process of its own over ExecutorService, and supervises that process:
 * `noded exec serve` run by the same node binary (`runJs`), in the home, ready
 * once GET /health answers.
 */
export function initGrpcHome(opts: InitOptions, runJs: string, port = DEFAULT_EXEC_PORT): InitResult {
  return initHome({
    ...opts,
    config: { ...opts.config, 'execution.type': 'grpc', 'execution.grpc_address': `http://127.0.0.1:${port}` },
    supervise: [
      {
        name: 'executor',
        command: process.execPath,
        args: [runJs, 'exec', 'serve', '--home', '.', '--listen', `127.0.0.1:${port}`],
        ready: `http://127.0.0.1:${port}/health`,
      },
    ],
  });
}
