import { NodedProcess, freePort } from '../../helpers/daemon.js';

/** A `noded exec serve` child on a free port (or `port`), started once it logs "executor serving". */
export class ExecServeProcess extends NodedProcess {
  url = '';

  /** With `abci`, the ABCI app at that address behind it (`--type abci`). */
  static async start(home: string, opts: { port?: number; token?: string; abci?: string } = {}): Promise<ExecServeProcess> {
    const port = opts.port ?? (await freePort());
    const args = ['exec', 'serve', '--home', home, '--listen', `127.0.0.1:${port}`, '--log-format', 'json'];
    if (opts.token) args.push('--token', opts.token);
    if (opts.abci) args.push('--type', 'abci', '--abci-address', opts.abci);
    const p = new ExecServeProcess(args);
    await p.waitForLog('executor serving', '`noded exec serve` to listen');
    p.url = `http://127.0.0.1:${port}`;
    return p;
  }
}

/** `--node.execution.*` flags for a node driving the executor at `url`. */
export const grpcFlags = (url: string) => ['--node.execution.type', 'grpc', '--node.execution.grpc_address', url];
