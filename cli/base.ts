import { Command, Flags, Errors } from '@oclif/core';

/** An error a command reports to the operator: a stable code, a message, an exit status. */
export class CommandFailure extends Errors.CLIError {
  constructor(
    message: string,
    readonly code: string,
    exit = 1,
  ) {
    super(message, { exit });
  }
}

/** The exit status an error asks for: oclif's usage errors carry 2, a CommandFailure its own, anything else 1. */
function exitOf(err: unknown): number {
  const e = err as { oclif?: { exit?: number }; exitCode?: number };
  return e.oclif?.exit ?? e.exitCode ?? 1;
}

/**
 * Base of every noded command: `--home`, and with `--json` a stable envelope —
 * the command's result object on success, `{"error":{"code","message","exit"}}`
 * on failure — so scripts can rely on both.
 */
export abstract class NodedCommand extends Command {
  static baseFlags = {
    home: Flags.string({
      description: 'Node home directory (config/, data/). Default: $NODED_HOME or ~/.node',
      env: 'NODED_HOME',
      helpGroup: 'GLOBAL',
    }),
  };

  protected toErrorJson(err: unknown): unknown {
    const e = err as { code?: unknown; message?: string };
    const exit = exitOf(err);
    const code = typeof e.code === 'string' && e.code ? e.code : exit === 2 ? 'USAGE' : 'ERROR';
    return { error: { code, message: e.message ?? String(err), exit } };
  }

  /**
   * The process exits with the status the error carries, the same one the --json
   * envelope shows: oclif's own catch takes process.exitCode or 1, so a usage
   * error (unknown flag, bad option, exit 2) exited 1 under --json.
   */
  override async catch(err: Error & { exitCode?: number }): Promise<unknown> {
    process.exitCode = exitOf(err);
    return super.catch(err);
  }

  /**
   * Fails the command with an operator-facing message and a stable error code.
   * With --json oclif exits with process.exitCode when set, else 1: set it so an exit 2 stays 2.
   */
  protected fail(message: string, code: string, exit = 1): never {
    process.exitCode = exit;
    throw new CommandFailure(message, code, exit);
  }
}
