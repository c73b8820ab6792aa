import { execFileSync, spawnSync } from 'node:child_process';
import { RUN_JS } from '../helpers/daemon.js';

/**
 * The terminal tests need tmux (Debian's tmux; `.ci/run` installs it where it is missing).
 * Without it they fail saying so, rather than skip and cover nothing.
 */
export function requireTmux(): void {
  if (spawnSync('tmux', ['-V']).status !== 0) throw new Error('the terminal tests need tmux: apt-get install tmux');
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

let servers = 0;

/**
 * A tmux server of the test's own (its own socket), with one window of
 * `columns`×`rows` running a `noded …` command in a real pseudo-terminal.
 * After the command exits the window stays, showing `EXIT=<status>` and the
 * terminal's modes (`stty -a`), so a test can check what the command left behind.
 */
export class TmuxTerminal {
  private readonly socket = `noded-test-${process.pid}-${servers++}`;

  constructor(args: string[], opts: { columns?: number; rows?: number; env?: Record<string, string> } = {}) {
    // Ink draws only a final frame when it thinks it runs in CI: a person's terminal has no CI variable.
    const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${quote(v)}`);
    const command = [
      `env -u CI -u CONTINUOUS_INTEGRATION ${env.join(' ')} ${quote(process.execPath)} ${quote(RUN_JS)} ${args.map(quote).join(' ')}`,
      'echo "EXIT=$?"',
      'stty -a',
      'sleep 600',
    ].join('; ');
    this.tmux('new-session', '-d', '-s', 'main', '-x', String(opts.columns ?? 80), '-y', String(opts.rows ?? 24), command);
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** The screen as text, one line a row. */
  capture(): string {
    return this.tmux('capture-pane', '-p', '-t', 'main');
  }

  /** Keys as tmux names them: `q`, `y`, `Enter`, `Escape`, `Down`. */
  send(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** The terminal takes a new size, as when its window is resized (the command gets SIGWINCH). */
  resize(columns: number, rows: number): void {
    this.tmux('resize-window', '-t', 'main', '-x', String(columns), '-y', String(rows));
  }

  /** A tmux format of the pane: `#{cursor_flag}` (1 = cursor shown), `#{alternate_on}` (1 = alternate screen). */
  display(format: string): string {
    return this.tmux('display-message', '-p', '-t', 'main', format).trim();
  }

  /** Ends the server and whatever still runs in it; safe to call twice. */
  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}
