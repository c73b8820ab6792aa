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
    const e = err as { code?: unknown; message?: string; oclif?: { exit?: number }; exitCode?: number };
    const exit = e.oclif?.exit ?? e.exitCode ?? 1;
    const code = typeof e.code === 'string' && e.code ? e.code : exit === 2 ? 'USAGE' : 'ERROR';
    return { error: { code, message: e.message ?? String(err), exit } };
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
